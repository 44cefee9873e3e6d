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

package scheme

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestNewKnowsTheBuiltInKindsCRDsAndEveryKindOfTheOperator(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, gvk := range []schema.GroupVersionKind{
		{Version: "v1", Kind: "Pod"},
		{Group: "apps", Version: "v1", Kind: "StatefulSet"},
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
		{Group: "database.seed1b407122.io", Version: "v1alpha1", Kind: "DatabaseCluster"},
		{Group: "echo.seed1b407122.io", Version: "v1alpha1", Kind: "Echo"},
		{Group: "echo.seed1b407122.io", Version: "v1alpha1", Kind: "ScheduledEcho"},
		{Group: "voting.seed1b407122.io", Version: "v1alpha1", Kind: "VoteConfig"},
		{Group: "database.seed1b407122.io", Version: "v1alpha1", Kind: "DatabaseBackup"},
		{Group: "snapshot.storage.k8s.io", Version: "v1", Kind: "VolumeSnapshot"},
		{Group: "snapshot.storage.k8s.io", Version: "v1", Kind: "VolumeSnapshotClass"},
		{Group: "monitoring.coreos.com", Version: "v1", Kind: "PodMonitor"},
	} {
		if !s.Recognizes(gvk) {
			t.Errorf("the scheme does not know %s", gvk)
		}
	}
}
