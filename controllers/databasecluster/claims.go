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
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
)

// isMemberClaim reports whether claim is the data claim of one of dc's members, the only claims
// the operator ever patches or deletes. A claim is a member's when:
//   - its name is exactly "data-<StatefulSet>-<ordinal>": the StatefulSet controller mounts a claim
//     by that name in pod <ordinal>, whoever made it, so it holds that member's data (claim names
//     are unique in a namespace, so a copy or a restore has another name, e.g. "data-db-0-copy",
//     and "data-db-1-0" belongs to cluster "db-1");
//   - it carries dc's selector labels (a claim of another operator's StatefulSet of the same name
//     does not);
//   - nothing but dc's StatefulSet (when sts is known, by UID) or one of its pods owns it: a claim a
//     backup tool or another controller took ownership of is not ours to touch.
func isMemberClaim(dc *databasev1alpha1.DatabaseCluster, sts *cachecfg.StatefulSetView, claim *corev1.PersistentVolumeClaim) bool {
	ordinal, ok := strings.CutPrefix(claim.Name, databasev1alpha1.DataVolumeName+"-"+dc.StatefulSetName()+"-")
	if !ok || !isOrdinal(ordinal) {
		return false
	}
	for k, v := range dc.SelectorLabels() {
		if claim.Labels[k] != v {
			return false
		}
	}
	for _, ref := range claim.OwnerReferences {
		if !ownedByMember(dc, sts, ref) {
			return false
		}
	}
	return true
}

// isOrdinal reports whether s is a pod ordinal as the StatefulSet controller writes it: decimal,
// no sign, no leading zero.
func isOrdinal(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && strconv.Itoa(n) == s
}

// ownedByMember reports whether ref points at dc's StatefulSet (the claim retention policy's
// whenDeleted: Delete) or at one of its pods (whenScaled: Delete).
func ownedByMember(dc *databasev1alpha1.DatabaseCluster, sts *cachecfg.StatefulSetView, ref metav1.OwnerReference) bool {
	switch {
	case ref.APIVersion == "apps/v1" && ref.Kind == "StatefulSet":
		return ref.Name == dc.StatefulSetName() && (sts == nil || ref.UID == sts.UID)
	case ref.APIVersion == "v1" && ref.Kind == "Pod":
		ordinal, ok := strings.CutPrefix(ref.Name, dc.StatefulSetName()+"-")
		return ok && isOrdinal(ordinal)
	}
	return false
}

// ownerRefsWithout returns refs without the references to the object with the given UID.
func ownerRefsWithout(refs []metav1.OwnerReference, uid types.UID) []metav1.OwnerReference {
	kept := make([]metav1.OwnerReference, 0, len(refs))
	for _, ref := range refs {
		if ref.UID != uid {
			kept = append(kept, ref)
		}
	}
	return kept
}

// condemnedOrdinal returns the ordinal of a member claim the StatefulSet controller has condemned:
// under whenScaled: Delete it gives the claim of a pod it removes an owner reference to that pod,
// and the garbage collector deletes the claim once the pod is gone.
func condemnedOrdinal(dc *databasev1alpha1.DatabaseCluster, claim *corev1.PersistentVolumeClaim) (int32, bool) {
	suffix, _ := strings.CutPrefix(claim.Name, databasev1alpha1.DataVolumeName+"-"+dc.StatefulSetName()+"-")
	ordinal, err := strconv.ParseInt(suffix, 10, 32)
	if err != nil {
		return 0, false
	}
	for _, ref := range claim.OwnerReferences {
		if ref.APIVersion == "v1" && ref.Kind == "Pod" && ref.Name == dc.StatefulSetName()+"-"+suffix {
			return int32(ordinal), true
		}
	}
	return 0, false
}

// scaleUpTarget returns the replicas the StatefulSet may be given now, on the way from current
// to desired, and the condemned claims it waits for. The StatefulSet controller does not create
// the pod of an ordinal whose claim still names a removed pod (a "stale" claim) and, as it does
// not watch claims, does not look again once the claim is gone: a member scaled down under
// whenScaled: Delete and straight back up would never come back (Kubernetes 1.37; see
// docs/development.md, "The controllers"). So a scale-up stops below the lowest such ordinal; the claim's deletion
// triggers the reconcile that goes on. claims are dc's member claims.
func scaleUpTarget(dc *databasev1alpha1.DatabaseCluster, claims []corev1.PersistentVolumeClaim, current, desired int32) (int32, []string) {
	target := desired
	var waits []string
	for i := range claims {
		ordinal, condemned := condemnedOrdinal(dc, &claims[i])
		if !condemned || ordinal < current || ordinal >= desired {
			continue
		}
		waits = append(waits, claims[i].Name)
		target = min(target, ordinal)
	}
	return target, waits
}
