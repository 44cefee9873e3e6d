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

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

// The specs of this package read the drift rules of package specs through these.

// templateInSync says whether the comparator finds the templates in sync field by field.
func templateInSync(desired, observed corev1.PodTemplateSpec) bool {
	return len(specs.DiffTemplates(desired, observed)) == 0
}

// templateChanged says whether the comparator writes desired's template over observed's.
func templateChanged(desired, observed *appsv1.StatefulSet) bool {
	return specs.DiffStatefulSet(desired, observed).TemplateChanged()
}

// withTemplateHash records the hash of sts's template, as the builder does.
func withTemplateHash(sts *appsv1.StatefulSet) {
	if sts.Annotations == nil {
		sts.Annotations = map[string]string{}
	}
	sts.Annotations[specs.TemplateHashAnnotation] = specs.TemplateHash(&sts.Spec.Template)
}

// buildStatefulSet is the StatefulSet of dc built with in.
func buildStatefulSet(dc *databasev1alpha1.DatabaseCluster, in specs.Inputs) *appsv1.StatefulSet {
	GinkgoHelper()
	sts, err := specs.BuildStatefulSet(dc, in)
	Expect(err).NotTo(HaveOccurred())
	return sts
}

// statefulSetStoredInSync is statefulSetSpec.InSync and the field walk of the template, which
// InSync skips for a StatefulSet at the generation of its record (as one just created is): a
// StatefulSet as the API server stores it must pass both, or the walk would patch it.
func statefulSetStoredInSync(desired, stored *appsv1.StatefulSet) bool {
	return statefulSetSpec.InSync(desired, stored) && templateInSync(desired.Spec.Template, stored.Spec.Template)
}
