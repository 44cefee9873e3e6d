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
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/operator"
)

// cachedAs is the StatefulSet of dc with a data claim template of size, as the cache holds it
// after trims passes of its transform (0: as the API server sends it), changed by change.
func cachedAs(dc string, size string, trims int, change func(*appsv1.StatefulSet)) func() *appsv1.StatefulSet {
	return func() *appsv1.StatefulSet {
		sts, err := specs.BuildStatefulSet(newCluster(dc, withSize(size)), specs.Inputs{})
		Expect(err).NotTo(HaveOccurred())
		if change != nil {
			change(sts)
		}
		for range trims {
			obj, err := cachecfg.NewShared().TrimStatefulSet(sts)
			Expect(err).NotTo(HaveOccurred())
			sts = obj.(*appsv1.StatefulSet)
		}
		return sts
	}
}

var _ = Describe("Replacing the StatefulSet for a larger spec.storage.size (replaceSmallStatefulSet)", Label("unit"), func() {
	DescribeTable("orphan-deletes only the cluster's StatefulSet whose data claim template asks for less",
		func(cached func() *appsv1.StatefulSet, wantReplaced string) {
			ctx := context.Background()
			dc := newCluster("db", withSize("2Gi"))
			sts := cached()
			c := fake.NewClientBuilder().WithScheme(scheme.Must()).WithObjects(sts).Build()
			r := &Reconciler{ReconcilerBase: operator.ReconcilerBase{Client: c}}
			noted := &changes{}
			Expect(r.replaceSmallStatefulSet(ctx, dc, resource.MustParse("2Gi"), noted)).To(Succeed())
			Expect(noted.replaced).To(Equal(wantReplaced))
			err := c.Get(ctx, client.ObjectKeyFromObject(sts), &appsv1.StatefulSet{})
			if wantReplaced != "" {
				Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the StatefulSet is still there: %v", err)
			} else {
				Expect(err).NotTo(HaveOccurred(), "the StatefulSet was deleted")
			}
		},
		Entry("1Gi, as the cache holds it: replaced", cachedAs("db", "1Gi", 1, nil),
			"Replacing StatefulSet db (pods keep running) to raise its claim template from 1Gi to 2Gi"),
		Entry("1Gi, whole: replaced", cachedAs("db", "1Gi", 0, nil),
			"Replacing StatefulSet db (pods keep running) to raise its claim template from 1Gi to 2Gi"),
		Entry("2Gi, as the cache holds it: kept", cachedAs("db", "2Gi", 1, nil), ""),
		Entry("2Gi, trimmed twice as a relist may hand it to the transform again: kept", cachedAs("db", "2Gi", 2, nil), ""),
		Entry("3Gi, larger than the spec asks: kept", cachedAs("db", "3Gi", 1, nil), ""),
		Entry("no data claim template: kept", cachedAs("db", "1Gi", 1, func(sts *appsv1.StatefulSet) {
			sts.Spec.VolumeClaimTemplates[0].Name = "other"
		}), ""),
		Entry("1Gi, but controlled by another cluster: kept", cachedAs("db", "1Gi", 1, func(sts *appsv1.StatefulSet) {
			sts.OwnerReferences[0].UID = "another-uid"
		}), ""),
	)
})
