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
	"k8s.io/utils/ptr"

	"github.com/seed1b407122/database-operator/test/harness/fuzzspec"
)

// Bits of the refs argument of FuzzMeta: how the observed child's owner references differ from
// the desired controller reference (Ensure only merges a child whose controller has our UID).
const (
	refOther       = 1 << iota // another, non-controller owner reference
	refOldVersion              // our reference names an older API version
	refNoBlock                 // our reference does not block owner deletion
	refOtherBefore             // the other reference comes first
)

// FuzzMeta checks the metadata half of the write path (metaInSync, mergeMeta) with the merge
// patch Ensure sends, applied as the API server does: once patched, the child is in sync (no
// write loop), it carries every desired label and annotation, keeps what others put there, keeps
// the owner references of others, and holds exactly one reference to the resource, the
// desired controller reference.
func FuzzMeta(f *testing.F) {
	f.Add("app.kubernetes.io/name=database\napp.kubernetes.io/instance=db\napp.kubernetes.io/managed-by=database-operator",
		"app.kubernetes.io/name=database\nteam=a", "", "note=kept", uint8(refOther|refOldVersion))
	f.Fuzz(func(t *testing.T, desiredLabels, observedLabels, desiredAnnotations, observedAnnotations string, refs uint8) {
		ours := metav1.OwnerReference{
			APIVersion: "database.seed1b407122.io/v1alpha1", Kind: "DatabaseCluster", Name: "db",
			UID: "uid-ours", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}
		desired := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: "db", Namespace: "ns", Labels: fuzzspec.Pairs(desiredLabels),
			Annotations: fuzzspec.Pairs(desiredAnnotations), OwnerReferences: []metav1.OwnerReference{ours},
		}}
		// The desired metadata comes from a stored resource: its strings went through JSON.
		desired, err := fuzzspec.Stored(desired)
		if err != nil {
			t.Fatal(err)
		}
		held := ours
		if refs&refOldVersion != 0 {
			held.APIVersion = "database.seed1b407122.io/v1alpha0"
		}
		if refs&refNoBlock != 0 {
			held.BlockOwnerDeletion = nil
		}
		other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "uid-other"}
		observedRefs := []metav1.OwnerReference{held}
		if refs&refOther != 0 {
			observedRefs = append(observedRefs, other)
			if refs&refOtherBefore != 0 {
				observedRefs[0], observedRefs[1] = other, held
			}
		}
		observed, err := fuzzspec.Stored(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: "db", Namespace: "ns", Labels: fuzzspec.Pairs(observedLabels),
			Annotations: fuzzspec.Pairs(observedAnnotations), OwnerReferences: observedRefs,
		}})
		if err != nil {
			t.Fatal(err)
		}
		if err := checkOwner(desired, observed); err != nil {
			t.Fatalf("our own child is a conflict: %v", err)
		}
		patched := observed.DeepCopy()
		mergeMeta(desired, patched, nil)
		after, err := fuzzspec.Patched(observed, patched)
		if err != nil {
			t.Fatal(err)
		}
		if !metaInSync(desired, after, nil) {
			t.Fatalf("not in sync after the patch: labels %v annotations %v refs %+v", after.Labels, after.Annotations, after.OwnerReferences)
		}
		for _, m := range []struct{ before, want, got map[string]string }{
			{observed.Labels, desired.Labels, after.Labels},
			{observed.Annotations, desired.Annotations, after.Annotations},
		} {
			for k, v := range m.before {
				if _, ours := m.want[k]; !ours && m.got[k] != v {
					t.Fatalf("%s=%q put there by someone else became %q", k, v, m.got[k])
				}
			}
		}
		var mine, others int
		for _, ref := range after.OwnerReferences {
			switch ref.UID {
			case ours.UID:
				mine++
				// blockOwnerDeletion is not compared by the drift check: a reference without it
				// is kept as it is.
				if ref.APIVersion != ours.APIVersion || ref.Kind != ours.Kind || !ptr.Equal(ref.Controller, ours.Controller) {
					t.Fatalf("our reference is %+v, want %+v", ref, ours)
				}
			case other.UID:
				others++
			}
		}
		if mine != 1 || others != int(refs&refOther) {
			t.Fatalf("owner references %+v: want ours once and the other kept", after.OwnerReferences)
		}
	})
}
