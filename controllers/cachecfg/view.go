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

package cachecfg

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StatefulSetView is the one way reconcile code reads a StatefulSet of the cache. The cache holds
// StatefulSets without their pod and claim templates (Shared.TrimStatefulSet): a template is most of a
// StatefulSet, and the operator needs it only to compare it with the spec's, which the write
// path does from the API server's copy unless the StatefulSet records that it still holds the
// spec's template. A trimmed object read as if it were whole would tell of a template that is
// not there, or a claim template of no size (a write of it would replace the StatefulSet), so the
// view offers only what the cache keeps: the metadata, the spec's scalar fields, the status, the
// containers' images and the claim templates' sizes. It has no template to misread.
//
// A view is a copy of the cached object's fields; its maps and slices (labels, annotations,
// owner references, conditions) are the cache's own: read them, never write them.
type StatefulSetView struct {
	metav1.ObjectMeta
	Spec   StatefulSetViewSpec
	Status appsv1.StatefulSetStatus
	// sts is the object viewed, read for the images and claim sizes it keeps.
	sts *appsv1.StatefulSet
}

// StatefulSetViewSpec is what a view shows of the spec: every field but the templates, the
// selector and the service name.
type StatefulSetViewSpec struct {
	Replicas                             *int32
	UpdateStrategy                       appsv1.StatefulSetUpdateStrategy
	PersistentVolumeClaimRetentionPolicy *appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy
}

// ViewStatefulSet is the view of sts, as the cache holds it or whole; nil for nil.
func ViewStatefulSet(sts *appsv1.StatefulSet) *StatefulSetView {
	if sts == nil {
		return nil
	}
	return &StatefulSetView{
		ObjectMeta: sts.ObjectMeta,
		Spec: StatefulSetViewSpec{
			Replicas:                             sts.Spec.Replicas,
			UpdateStrategy:                       sts.Spec.UpdateStrategy,
			PersistentVolumeClaimRetentionPolicy: sts.Spec.PersistentVolumeClaimRetentionPolicy,
		},
		Status: sts.Status,
		sts:    sts,
	}
}

// Image is the image of the pod template's container name; "" when there is none.
func (v *StatefulSetView) Image(name string) string { return ContainerImage(v.sts, name) }

// ClaimSize is the storage request of the claim template name (zero when it requests none), and
// false when there is no such template.
func (v *StatefulSetView) ClaimSize(name string) (resource.Quantity, bool) {
	return ClaimTemplateSize(v.sts, name)
}
