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

package csisim

import (
	"reflect"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestBuildPreprovisionedStatus(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	cut := func(driver, handle string, ready bool) *snapv1.VolumeSnapshotContent {
		return &snapv1.VolumeSnapshotContent{
			Spec: snapv1.VolumeSnapshotContentSpec{Driver: driver},
			Status: &snapv1.VolumeSnapshotContentStatus{
				SnapshotHandle: ptr.To(handle), ReadyToUse: ptr.To(ready),
				RestoreSize: ptr.To(int64(3 << 30)), CreationTime: ptr.To(int64(42)),
			},
		}
	}
	ready := &snapv1.VolumeSnapshotContentStatus{
		SnapshotHandle: ptr.To("snap-1"), ReadyToUse: ptr.To(true), RestoreSize: ptr.To(int64(3 << 30)), CreationTime: ptr.To(int64(42)),
	}
	notFound := &snapv1.VolumeSnapshotContentStatus{ReadyToUse: ptr.To(false), Error: &snapv1.VolumeSnapshotError{
		Time:    ptr.To(metav1.NewTime(now)),
		Message: ptr.To("Failed to check and update snapshot content: snapshot snap-1 of driver simulated-csi.localcluster.test not found"),
	}}
	cases := []struct {
		name     string
		contents []*snapv1.VolumeSnapshotContent
		want     *snapv1.VolumeSnapshotContentStatus
	}{
		{"the handle of a cut snapshot: ready, its restore size and creation time", []*snapv1.VolumeSnapshotContent{
			cut(ProvisionerName, "snap-2", true), cut(ProvisionerName, "snap-1", true)}, ready},
		{"no content holds the handle", []*snapv1.VolumeSnapshotContent{cut(ProvisionerName, "snap-2", true)}, notFound},
		{"the handle of another driver", []*snapv1.VolumeSnapshotContent{cut("other.csi.test", "snap-1", true)}, notFound},
		{"a snapshot not ready yet", []*snapv1.VolumeSnapshotContent{cut(ProvisionerName, "snap-1", false)}, notFound},
		{"no contents", nil, notFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := BuildPreprovisionedStatus("snap-1", c.contents, now); !reflect.DeepEqual(got, c.want) {
				t.Errorf("BuildPreprovisionedStatus() = %+v, want %+v", got, c.want)
			}
		})
	}
}
