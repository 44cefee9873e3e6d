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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// claimOption changes a test claim.
type claimOption func(*corev1.PersistentVolumeClaim)

// memberClaim returns a claim as the StatefulSet controller makes it for cluster "db": name
// data-db-<ordinal>, the cluster's labels, changed by the options.
func memberClaim(name string, opts ...claimOption) *corev1.PersistentVolumeClaim {
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "default", Labels: newCluster("db").Labels(),
	}}
	return testenv.Apply(claim, opts...)
}

func withClaimLabels(labels map[string]string) claimOption {
	return func(c *corev1.PersistentVolumeClaim) { c.Labels = labels }
}

func ownedBy(apiVersion, kind, name string, uid types.UID) claimOption {
	return func(c *corev1.PersistentVolumeClaim) {
		c.OwnerReferences = append(c.OwnerReferences, metav1.OwnerReference{
			APIVersion: apiVersion, Kind: kind, Name: name, UID: uid,
		})
	}
}

var _ = Describe("isMemberClaim", Label("unit"), func() {
	dc := newCluster("db")
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", UID: "sts-uid"}}
	// The owners a claim may have.
	var (
		ourStatefulSet     = ownedBy("apps/v1", "StatefulSet", "db", "sts-uid")
		earlierStatefulSet = ownedBy("apps/v1", "StatefulSet", "db", "old-uid")
		otherStatefulSet   = ownedBy("apps/v1", "StatefulSet", "other", "other-uid")
		otherPod           = ownedBy("v1", "Pod", "other-1", "pod-uid")
		backupTool         = ownedBy("backup.example.com/v1", "Backup", "nightly", "backup-uid")
	)

	DescribeTable("tells a member's data claim from every look-alike",
		func(sts *appsv1.StatefulSet, claim *corev1.PersistentVolumeClaim, want bool) {
			Expect(isMemberClaim(dc, cachecfg.ViewStatefulSet(sts), claim)).To(Equal(want))
		},
		Entry("a member's claim", sts, memberClaim("data-db-0"), true),
		Entry("a retained claim of a removed pod", sts, memberClaim("data-db-7"), true),
		Entry("owned by our StatefulSet (whenDeleted: Delete)", sts, memberClaim("data-db-1", ourStatefulSet), true),
		Entry("owned by a condemned pod (whenScaled: Delete)", sts,
			memberClaim("data-db-4", ownedBy("v1", "Pod", "db-4", "pod-uid")), true),
		Entry("owned by a StatefulSet of that name, the StatefulSet not known", nil, memberClaim("data-db-1", earlierStatefulSet), true),
		Entry("a copy with the labels copied", sts, memberClaim("data-db-0-copy"), false),
		Entry("a restore named after the member", sts, memberClaim("restore-data-db-0"), false),
		Entry("an ordinal with a leading zero", sts, memberClaim("data-db-01"), false),
		Entry("a signed ordinal", sts, memberClaim("data-db-+1"), false),
		Entry("no ordinal", sts, memberClaim("data-db-"), false),
		Entry("cluster db-1's claim", sts,
			memberClaim("data-db-1-0", withClaimLabels(newCluster("db-1").Labels())), false),
		Entry("cluster db-1's claim with db's labels", sts, memberClaim("data-db-1-0"), false),
		Entry("the member's name without the cluster's labels", sts,
			memberClaim("data-db-0", withClaimLabels(map[string]string{"app": "db"})), false),
		Entry("the member's name with another cluster's labels", sts,
			memberClaim("data-db-0", withClaimLabels(newCluster("other").Labels())), false),
		Entry("owned by a StatefulSet of an earlier cluster (another UID)", sts, memberClaim("data-db-1", earlierStatefulSet), false),
		Entry("owned by another StatefulSet", sts, memberClaim("data-db-1", otherStatefulSet), false),
		Entry("owned by a pod of another StatefulSet", sts, memberClaim("data-db-1", otherPod), false),
		Entry("taken over by a backup tool", sts, memberClaim("data-db-2", backupTool), false),
		Entry("owned by our StatefulSet and by a backup tool", sts, memberClaim("data-db-2", ourStatefulSet, backupTool), false),
	)

	It("removes only the references to the given owner", func() {
		claim := memberClaim("data-db-2", ownedBy("apps/v1", "StatefulSet", "db", "sts-uid"),
			ownedBy("v1", "Pod", "db-2", "pod-uid"))
		Expect(ownerRefsWithout(claim.OwnerReferences, "sts-uid")).To(Equal([]metav1.OwnerReference{
			{APIVersion: "v1", Kind: "Pod", Name: "db-2", UID: "pod-uid"},
		}))
	})
})

var _ = Describe("scaleUpTarget", Label("unit"), func() {
	condemned := func(ordinal string) corev1.PersistentVolumeClaim {
		return *memberClaim("data-db-"+ordinal, ownedBy("v1", "Pod", "db-"+ordinal, "old-pod-uid"))
	}
	kept := func(ordinal string) corev1.PersistentVolumeClaim {
		return *memberClaim("data-db-"+ordinal, ownedBy("apps/v1", "StatefulSet", "db", "sts-uid"))
	}
	DescribeTable("stops a scale-up below the lowest ordinal whose claim still names a removed pod",
		func(claims []corev1.PersistentVolumeClaim, current, desired, wantTarget int32, wantWaits []string) {
			target, waits := scaleUpTarget(newCluster("db"), claims, current, desired)
			Expect(target).To(Equal(wantTarget))
			Expect(waits).To(Equal(wantWaits))
		},
		Entry("no condemned claim: straight to desired", []corev1.PersistentVolumeClaim{kept("0"), kept("1")}, int32(1), int32(3), int32(3), nil),
		Entry("a condemned claim in the way: held at its ordinal", []corev1.PersistentVolumeClaim{kept("0"), condemned("1")},
			int32(1), int32(2), int32(1), []string{"data-db-1"}),
		Entry("several: held at the lowest, every one named", []corev1.PersistentVolumeClaim{kept("0"), kept("1"), condemned("3"), condemned("2")},
			int32(2), int32(4), int32(2), []string{"data-db-3", "data-db-2"}),
		Entry("a condemned claim above desired is not in the way", []corev1.PersistentVolumeClaim{kept("0"), condemned("3")},
			int32(1), int32(3), int32(3), nil),
		Entry("a scale-down is never held", []corev1.PersistentVolumeClaim{kept("0"), condemned("1"), kept("2")},
			int32(3), int32(1), int32(1), nil),
		Entry("below current: holding cannot help, so no hold (the StatefulSet already has that pod's replica)",
			[]corev1.PersistentVolumeClaim{kept("0"), condemned("1")}, int32(2), int32(3), int32(3), nil),
		Entry("a claim owned by another cluster's pod of a similar name is not condemned by ours",
			[]corev1.PersistentVolumeClaim{*memberClaim("data-db-1", ownedBy("v1", "Pod", "db-10", "uid"))}, int32(1), int32(2), int32(2), nil),
	)
})
