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
	"context"
	"errors"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// markedConfigMap is a ConfigMap with no owner reference, marked as the resource's (or another
// one's) by the annotation "owner-uid", as a child meant to outlive its resource is.
func markedConfigMap(uid string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "marked", Namespace: "ns", Labels: labels, Annotations: map[string]string{"owner-uid": uid},
	}}
}

// TestEnsureOwnedByMark checks Spec.Owned: a child without a controller reference is patched
// when Owned says it is the resource's, and is a conflict, left as it is, when it does not.
func TestEnsureOwnedByMark(t *testing.T) {
	ctx := context.Background()
	owned := configMapSpec
	owned.Owned = func(cm *corev1.ConfigMap) bool { return cm.Annotations["owner-uid"] == "uid-1" }
	desired := markedConfigMap("uid-1", map[string]string{"app": "a"})

	for _, tc := range []struct {
		name     string
		stored   *corev1.ConfigMap
		spec     Spec[*corev1.ConfigMap]
		result   Result
		conflict bool
		labels   map[string]string
	}{
		{"marked as the resource's: its labels put back", markedConfigMap("uid-1", nil), owned, Patched, false, map[string]string{"app": "a"}},
		{"marked as another resource's: left alone", markedConfigMap("uid-2", nil), owned, "", true, nil},
		{"no Owned: the controller reference decides", markedConfigMap("uid-1", nil), configMapSpec, "", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := corev1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.stored).Build()
			_, result, err := Ensure(ctx, c, c, desired.DeepCopy(), &corev1.ConfigMap{}, tc.spec)
			var conflict *ConflictError
			if result != tc.result || errors.As(err, &conflict) != tc.conflict || (err != nil && !tc.conflict) {
				t.Fatalf("Ensure = %q, %v; want %q, conflict %v", result, err, tc.result, tc.conflict)
			}
			stored := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(desired), stored); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(stored.Labels, tc.labels) || len(stored.OwnerReferences) != 0 {
				t.Fatalf("stored labels %v, owners %v; want labels %v and no owner", stored.Labels, stored.OwnerReferences, tc.labels)
			}
		})
	}
}
