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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/seed1b407122/database-operator/api/conditions"
)

// degraded is a Degraded condition with the given status, reason and message.
func degraded(status metav1.ConditionStatus, reason, message string) []metav1.Condition {
	return []metav1.Condition{{Type: conditions.Degraded, Status: status, Reason: reason, Message: message}}
}

func TestWarnConflictBeganTellsOnlyTheTurnToTrue(t *testing.T) {
	held := degraded(metav1.ConditionTrue, conditions.ReasonChildConflict, "Job ec-echo exists")
	fine := degraded(metav1.ConditionFalse, conditions.ReasonAsExpected, "every child is controlled by this resource")
	for _, tc := range []struct {
		name          string
		before, after []metav1.Condition
		want          []string
	}{
		{"began", fine, held, []string{corev1.EventTypeWarning + " ChildConflict Job ec-echo exists"}},
		{"began on the first status", nil, held, []string{corev1.EventTypeWarning + " ChildConflict Job ec-echo exists"}},
		{"still held", held, held, nil},
		{"ended", held, fine, nil},
		{"never held", fine, fine, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := events.NewFakeRecorder(2)
			WarnConflictBegan(rec, &corev1.ConfigMap{}, tc.before, tc.after)
			close(rec.Events)
			var got []string
			for e := range rec.Events {
				got = append(got, e)
			}
			if len(got) != len(tc.want) || (len(got) == 1 && got[0] != tc.want[0]) {
				t.Errorf("events %q, want %q", got, tc.want)
			}
		})
	}
}
