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

package conditions

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestChangedReturnsTheConditionOnlyWhenItsReasonOrMessageChanged(t *testing.T) {
	ready := func(reason, message string) []metav1.Condition {
		return []metav1.Condition{{Type: TypeReady, Status: metav1.ConditionFalse, Reason: reason, Message: message}}
	}
	for _, tc := range []struct {
		name          string
		before, after []metav1.Condition
		want          bool
	}{
		{"first status", nil, ready("InvalidSchedule", "bad"), true},
		{"new reason", ready("SyncFailed", "bad"), ready("InvalidSchedule", "bad"), true},
		{"new message", ready("InvalidSchedule", "bad"), ready("InvalidSchedule", "worse"), true},
		{"same reason and message", ready("InvalidSchedule", "bad"), ready("InvalidSchedule", "bad"), false},
		{"no condition after", ready("InvalidSchedule", "bad"), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Changed(tc.before, tc.after, TypeReady)
			if (got != nil) != tc.want {
				t.Fatalf("Changed = %v, want a condition: %v", got, tc.want)
			}
			if got != nil && *got != tc.after[0] {
				t.Errorf("Changed = %+v, want %+v", *got, tc.after[0])
			}
		})
	}
}

func TestReadyIsTrueWhenTheChildMatchesAndFalseWithTheErrorOtherwise(t *testing.T) {
	synced := Ready(3, nil, "ConfigMapSynced", "ConfigMap vc-options holds the 2 options", "SyncFailed")
	want := metav1.Condition{Type: TypeReady, Status: metav1.ConditionTrue, Reason: "ConfigMapSynced",
		Message: "ConfigMap vc-options holds the 2 options", ObservedGeneration: 3}
	if synced != want {
		t.Errorf("Ready(nil) = %+v, want %+v", synced, want)
	}
	failed := Ready(4, errors.New("the server is busy"), "ConfigMapSynced", "ConfigMap vc-options holds the 2 options", "SyncFailed")
	want = metav1.Condition{Type: TypeReady, Status: metav1.ConditionFalse, Reason: "SyncFailed",
		Message: "the server is busy", ObservedGeneration: 4}
	if failed != want {
		t.Errorf("Ready(err) = %+v, want %+v", failed, want)
	}
}
