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

package child

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Said is what a condition says in one of its states: its reason and message.
type Said struct {
	Reason, Message string
}

// SetSwitchCondition sets the condition conditionType that follows a switch of the spec
// (spec.paused, spec.suspend): True saying on while the switch is on, False saying off otherwise,
// observed at generation.
func SetSwitchCondition(conditions *[]metav1.Condition, generation int64, conditionType string, isOn bool, on, off Said) {
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
	meta.SetStatusCondition(conditions, cond)
}
