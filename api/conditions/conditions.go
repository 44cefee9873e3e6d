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
// share: the Degraded condition of the ownership rule with its two reasons, and the helper that
// sets a condition following a switch of the spec. Each group's conditions.go holds only the
// types and reasons of its own kinds.
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
