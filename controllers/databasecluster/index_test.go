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

package databasecluster

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed1b407122/database-operator/api/labels"
)

func TestIndexInstance(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   []string
	}{
		{"a member pod", map[string]string{labels.Name: "database", labels.Instance: "db", labels.ManagedBy: labels.ManagedByValue}, []string{"db"}},
		{"an instance label only", map[string]string{labels.Instance: "other"}, []string{"other"}},
		{"no instance label", map[string]string{labels.Name: "database"}, nil},
		{"no labels", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: tc.labels}}
			if got := indexInstance(pod); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("indexInstance = %v, want %v", got, tc.want)
			}
		})
	}
}
