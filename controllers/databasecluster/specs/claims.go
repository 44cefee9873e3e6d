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

package specs

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// The group and kind of the VolumeSnapshots a member's claim is restored from.
const (
	SnapshotGroup = "snapshot.storage.k8s.io"
	SnapshotKind  = "VolumeSnapshot"
)

// BuildRestoreClaim is the data claim of the member ordinal restored from the VolumeSnapshot
// snapshot (of the cluster's namespace): the claim the StatefulSet's template would create, with
// the snapshot as its data source.
func BuildRestoreClaim(dc *databasev1alpha1.DatabaseCluster, ordinal int32, snapshot string) (*corev1.PersistentVolumeClaim, error) {
	size, err := resource.ParseQuantity(dc.Spec.Storage.Size)
	if err != nil {
		return nil, fmt.Errorf("spec.storage.size %q is not a quantity: %w", dc.Spec.Storage.Size, err)
	}
	claim := buildClaimTemplate(dc, size)
	claim.Name = dc.ClaimName(ordinal)
	claim.Namespace = dc.Namespace
	claim.Spec.DataSourceRef = &corev1.TypedObjectReference{
		APIGroup: ptr.To(SnapshotGroup), Kind: SnapshotKind, Name: snapshot,
	}
	return &claim, nil
}
