// Copyright 2026 The database-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

// Package conditions holds what the status conditions of every API group of the operator
// share: the Degraded condition of the ownership rule with its two reasons, the Ready condition
// of a resource that keeps one child, the helper that sets a condition following a switch of
// the spec, and Changed, which tells whether a condition says something new. Each group's
// conditions.go holds only the types and reasons of its own kinds.
package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Degraded condition, the same in every API group.
const (
	// Degraded is True when a child's name is held by an object the resource does not control
	// (that object is left as it is); a DatabaseCluster also turns it True when a child cannot
	// be written or a pod cannot run, with reasons of its own group.
	Degraded = "Degraded"
	// ReasonChildConflict: a child's name is held by an object the resource does not control;
	// the child is created once the name is free.
	ReasonChildConflict = "ChildConflict"
	// ReasonAsExpected: nothing is wrong.
	ReasonAsExpected = "AsExpected"
)

// Text is what a condition says in one of its states: its reason and message.
type Text struct {
	Reason, Message string
}

// SetSwitch sets the condition conditionType that follows a switch of the spec (spec.paused,
// spec.suspend): True saying on while the switch is on, False saying off otherwise, observed at
// generation.
func SetSwitch(list *[]metav1.Condition, generation int64, conditionType string, isOn bool, on, off Text) {
	cond := metav1.Condition{
		Type:               conditionType,
		Status:             metav1.ConditionFalse,
		Reason:             off.Reason,
		Message:            off.Message,
		ObservedGeneration: generation,
	}
	if isOn {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, on.Reason, on.Message
	}
	meta.SetStatusCondition(list, cond)
}

// TypeReady is the type of the Ready condition of a resource that keeps one child in line with
// its spec (each group's ConditionReady has this value).
const TypeReady = "Ready"

// Ready is the Ready condition of a resource whose reconcile of its child ended with err: True
// with reason synced and message when the child matches the spec, False with reason failed and
// err's message otherwise.
func Ready(generation int64, err error, synced, message, failed string) metav1.Condition {
	cond := metav1.Condition{
		Type:               TypeReady,
		Status:             metav1.ConditionTrue,
		Reason:             synced,
		Message:            message,
		ObservedGeneration: generation,
	}
	if err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, failed, err.Error()
	}
	return cond
}

// Changed returns the condition conditionType of after when its reason or message differs from
// that of before (or before had none), so that what it says is told once; nil otherwise.
func Changed(before, after []metav1.Condition, conditionType string) *metav1.Condition {
	now := meta.FindStatusCondition(after, conditionType)
	if now == nil {
		return nil
	}
	if was := meta.FindStatusCondition(before, conditionType); was != nil && was.Reason == now.Reason && was.Message == now.Message {
		return nil
	}
	return now
}
