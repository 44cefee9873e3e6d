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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// hashed is a StatefulSet of uid at generation whose template hash annotation is hash.
func hashed(uid types.UID, generation int64, hash string) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", UID: uid, Generation: generation}}
	if hash != "" {
		sts.Annotations = map[string]string{templateHashAnnotation: hash}
	}
	return sts
}

// check is the record of a check of uid at generation, for a template of hash.
func check(uid types.UID, generation int64, hash string) *databasev1alpha1.CheckedStatefulSet {
	return &databasev1alpha1.CheckedStatefulSet{UID: uid, Generation: generation, TemplateHash: hash}
}

var _ = Describe("The pod template of a cached StatefulSet", Label("unit"), func() {
	DescribeTable("is known without reading it (templateKnown)",
		func(desired, cached *appsv1.StatefulSet, checked []*databasev1alpha1.CheckedStatefulSet, want bool) {
			Expect(templateKnown(desired, cached, checked...)).To(Equal(want))
		},
		Entry("checked at this UID and generation, for this template", hashed("", 0, "h1"), hashed("u1", 4, "h1"),
			[]*databasev1alpha1.CheckedStatefulSet{check("u1", 4, "h1")}, true),
		Entry("the status's check, with none in this process (a restart)", hashed("", 0, "h1"), hashed("u1", 4, "h1"),
			[]*databasev1alpha1.CheckedStatefulSet{nil, check("u1", 4, "h1")}, true),
		Entry("an older check in this process, the status's is current", hashed("", 0, "h1"), hashed("u1", 5, "h1"),
			[]*databasev1alpha1.CheckedStatefulSet{check("u1", 4, "h1"), check("u1", 5, "h1")}, true),
		Entry("the spec changed since (someone edited it): read it", hashed("", 0, "h1"), hashed("u1", 5, "h1"),
			[]*databasev1alpha1.CheckedStatefulSet{check("u1", 4, "h1")}, false),
		Entry("another StatefulSet of that name, at the same generation: read it", hashed("", 0, "h1"), hashed("u2", 4, "h1"),
			[]*databasev1alpha1.CheckedStatefulSet{check("u1", 4, "h1")}, false),
		Entry("the spec asks for another template: read it", hashed("", 0, "h2"), hashed("u1", 4, "h1"),
			[]*databasev1alpha1.CheckedStatefulSet{check("u1", 4, "h1")}, false),
		Entry("its annotation edited to the new hash, the template not: read it", hashed("", 0, "h2"), hashed("u1", 4, "h2"),
			[]*databasev1alpha1.CheckedStatefulSet{check("u1", 4, "h1")}, false),
		Entry("never checked", hashed("", 0, "h1"), hashed("u1", 1, "h1"), []*databasev1alpha1.CheckedStatefulSet{nil, nil}, false),
		Entry("desired has no hash", hashed("", 0, ""), hashed("u1", 4, ""),
			[]*databasev1alpha1.CheckedStatefulSet{check("u1", 4, "")}, false),
	)

	deleting := hashed("u1", 4, "h1")
	deleting.DeletionTimestamp = &metav1.Time{}
	DescribeTable("is recorded as checked only when phase 5 compared it or created it (checkedStatefulSet)",
		func(result child.Result, desired, before, live *appsv1.StatefulSet, want *databasev1alpha1.CheckedStatefulSet) {
			Expect(checkedStatefulSet(result, desired, before, live)).To(Equal(want))
		},
		Entry("created: the generation the API server answered", child.Created, hashed("", 0, "h1"), &appsv1.StatefulSet{},
			hashed("u1", 1, "h1"), check("u1", 1, "h1")),
		Entry("compared and in sync", child.Unchanged, hashed("", 0, "h1"), hashed("u1", 4, "h1"), hashed("u1", 4, "h1"),
			check("u1", 4, "h1")),
		Entry("compared, and only its metadata patched (the generation stays)", child.Patched, hashed("", 0, "h2"),
			hashed("u1", 4, ""), hashed("u1", 4, "h2"), check("u1", 4, "h2")),
		Entry("its spec patched: checked again next pass, another writer may have come between", child.Patched,
			hashed("", 0, "h2"), hashed("u1", 4, "h1"), hashed("u1", 5, "h2"), nil),
		Entry("being deleted: not compared", child.Unchanged, hashed("", 0, "h1"), deleting, deleting, nil),
		Entry("desired has no hash", child.Unchanged, hashed("", 0, ""), hashed("u1", 4, ""), hashed("u1", 4, ""), nil),
		Entry("no StatefulSet", child.Unchanged, hashed("", 0, "h1"), &appsv1.StatefulSet{}, nil, nil),
	)
})
