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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/seed1b407122/database-operator/api/conditions"
)

// WarnConflictBegan records one warning event ChildConflict on obj, with the condition's message,
// when the Degraded condition turned True between the status before and after a write (see
// ConflictBegan).
func WarnConflictBegan(rec events.EventRecorder, obj runtime.Object, before, after []metav1.Condition) {
	if message, began := ConflictBegan(before, after); began {
		rec.Eventf(obj, nil, corev1.EventTypeWarning, conditions.ReasonChildConflict, "Reconcile", "%s", message)
	}
}
