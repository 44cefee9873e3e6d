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
	"fmt"
	"reflect"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

// richest is the StatefulSet of a cluster with every part the builder knows: every pod
// extension, monitoring, config, credentials, TLS and the storage agent.
func richest() *appsv1.StatefulSet {
	dc := newCluster("db", withExtensions(), withMonitoring(9100, "", ""), withConfigMapRef("settings"),
		withCredentials(databasev1alpha1.CredentialsSpec{Username: "app"}), withTLS(databasev1alpha1.TLSSpec{}),
		withPodLabels(map[string]string{"team": "a"}), withAnnotation(databasev1alpha1.RestartedAtAnnotation, "now"))
	dc.Spec.Storage.AutoGrow = growSpec("10Gi")
	dc.Spec.Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
	dc.Spec.Args = []string{"--verbose"}
	dc.Spec.Command = []string{"/db"}
	dc.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	dc.Spec.Tolerations = []corev1.Toleration{{Key: "db", Operator: corev1.TolerationOpExists}}
	dc.Spec.PriorityClassName = "high"
	dc.Spec.SecurityContext = &databasev1alpha1.SecurityContextSpec{RunAsUser: ptr.To[int64](1000)}
	return buildStatefulSet(dc, specs.Inputs{InputsChecksum: "abc", AgentImage: "registry.example/operator@sha256:1"})
}

// leafChanger removes the n-th thing set in a value, depth first (a list's last item, a map's
// key, a pointer, a scalar), and names its path.
type leafChanger struct {
	n, seen int
	path    string
}

var opaqueTypes = []reflect.Type{reflect.TypeFor[resource.Quantity](), reflect.TypeFor[intstr.IntOrString]()}

// visit removes the n-th thing set under v (addressable) and says whether it did.
func (c *leafChanger) visit(path string, v reflect.Value) bool {
	if v.IsZero() {
		return false
	}
	if c.seen == c.n {
		c.path = path
		v.SetZero()
		return true
	}
	c.seen++
	if slices.Contains(opaqueTypes, v.Type()) {
		return false
	}
	switch v.Kind() {
	case reflect.Pointer:
		return c.visit(path, v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && c.visit(path+"."+f.Name, v.Field(i)) {
				return true
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			if c.visit(fmt.Sprintf("%s[%d]", path, i), v.Index(i)) {
				return true
			}
		}
	case reflect.Map:
		for _, key := range v.MapKeys() {
			if c.seen == c.n {
				c.path = fmt.Sprintf("%s[%v]", path, key)
				v.SetMapIndex(key, reflect.Value{})
				return true
			}
			c.seen++
		}
	}
	return false
}

// withoutNth is template without the n-th thing set in it, and its path; "" when there is none.
func withoutNth(template corev1.PodTemplateSpec, n int) (corev1.PodTemplateSpec, string) {
	changed := *template.DeepCopy()
	c := &leafChanger{n: n}
	c.visit("template", reflect.ValueOf(&changed).Elem())
	return changed, c.path
}

var _ = Describe("The StatefulSet comparator", Label("unit"), func() {
	It("sees every field the builder sets removed, from the spec or from the live object, without a rule of its own", func() {
		built := richest().Spec.Template
		byHash := 0
		n := 0
		for ; ; n++ {
			changed, path := withoutNth(built, n)
			if path == "" {
				break
			}
			Expect(specs.DiffTemplates(built, changed)).NotTo(BeEmpty(), "%s removed from the live template is not seen", path)
			if len(specs.DiffTemplates(changed, built)) > 0 {
				continue
			}
			// A field the API server defaults is left to the hash: the spec no longer asking for
			// it changes the hash, and the template is written.
			byHash++
			Expect(specs.TemplateHash(&changed)).NotTo(Equal(specs.TemplateHash(&built)), "%s removed from the spec is not seen", path)
		}
		Expect(n).To(BeNumerically(">", 200), "the walk reached the builder's fields")
		Expect(byHash).To(BeNumerically("<", n/4), "the field walk, not the hash, sees most removals")
	})

	It("names what differs, and writes only that", func() {
		desired := richest()
		live := desired.DeepCopy()
		live.Generation = 4
		live.Annotations[specs.TemplateGenerationAnnotation] = "4"
		Expect(specs.DiffStatefulSet(desired, live).InSync()).To(BeTrue())

		live.Spec.Replicas = ptr.To[int32](1)
		live.Spec.Template.Spec.Containers[0].Env = append(live.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{Name: "X"})
		Expect(specs.DiffStatefulSet(desired, live).Paths).To(Equal([]string{"spec.replicas"}),
			"at the generation of its record, the template is the recorded one")

		live.Generation = 5
		drift := specs.DiffStatefulSet(desired, live)
		Expect(drift.Paths).To(Equal([]string{"spec.replicas", "spec.template.spec.containers[0].env"}))
		Expect(drift.TemplateChanged()).To(BeTrue())
		Expect(drift.Scaled()).To(BeTrue())

		patched := live.DeepCopy()
		specs.MergeStatefulSet(desired, patched)
		Expect(patched.Spec.Template).To(Equal(desired.Spec.Template))
		Expect(patched.Annotations).To(HaveKeyWithValue(specs.TemplateGenerationAnnotation, "6"), "the generation its write makes")
	})

	It("records a template found in sync without touching the spec, and removes a rollback annotation no longer wanted", func() {
		desired := richest()
		live := desired.DeepCopy()
		live.Generation = 7
		live.Annotations[specs.RolledBackFromAnnotation] = ""
		drift := specs.DiffStatefulSet(desired, live)
		Expect(drift.Paths).To(Equal([]string{
			"metadata.annotations[" + specs.TemplateGenerationAnnotation + "]",
			"metadata.annotations[" + specs.RolledBackFromAnnotation + "]",
		}))
		Expect(drift.RecordOnly()).To(BeTrue())
		patched := live.DeepCopy()
		specs.MergeStatefulSet(desired, patched)
		Expect(patched.Spec).To(Equal(live.Spec))
		Expect(patched.Annotations).To(HaveKeyWithValue(specs.TemplateGenerationAnnotation, "7"))
		Expect(patched.Annotations).NotTo(HaveKey(specs.RolledBackFromAnnotation))
	})

	It("writes the spec's template when its hash changed, whatever the field walk finds", func() {
		desired := richest()
		live := desired.DeepCopy()
		live.Annotations[specs.TemplateHashAnnotation] = "an-older-template"
		drift := specs.DiffStatefulSet(desired, live)
		Expect(drift.TemplateChanged()).To(BeTrue())
		Expect(drift.Paths).To(HaveLen(1))
		Expect(drift.Paths[0]).To(HavePrefix("spec.template (hash an-older-tem -> "))
	})
})
