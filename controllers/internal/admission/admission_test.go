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

package admission

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/echo"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// Minimum size of the refused half of the corpus (issue 13): in all, and per kind.
const (
	minRefused        = 40
	minRefusedPerKind = 8
)

// testImage is the image the ScheduledEcho controller under test is configured with.
const testImage = "registry.example/tools/busybox:1.36"

// samplesDirectory holds the samples users start from (and the CSV's alm-examples).
var samplesDirectory = filepath.Join("..", "..", "..", "config", "samples")

// The corpus is replayed against a real kube-apiserver with the generated CRDs. The manager runs
// the ScheduledEcho controller only: a schedule that never fires is admitted (CEL cannot tell)
// and then reported by the controller; the other kinds are only stored.
var _ = Describe("Admission", Ordered, Label("integration"), func() {
	corpus, loadErr := loadCorpus("testdata")

	BeforeAll(func() { Expect(loadErr).NotTo(HaveOccurred()) })
	k8s := testenv.StartInBeforeAll(func(mgr ctrl.Manager) error {
		return (&echo.Reconciler{ReconcilerBase: testenv.ReconcilerBase(mgr), Image: testImage}).SetupScheduledEchoWithManager(mgr)
	})
	// newNamespace creates a namespace of its own for one spec, so that names never collide.
	newNamespace := func(ctx context.Context) string { return k8s.Namespace(ctx, "adm-") }
	// send creates the first object of an entry (i == 0) or sends a later one as a merge patch,
	// strictly decoded so that a misspelled field is an error rather than dropped.
	send := func(ctx context.Context, ns string, i int, object *unstructured.Unstructured) error {
		u := object.DeepCopy()
		u.SetNamespace(ns)
		if i == 0 {
			return k8s.Create(ctx, u, client.FieldValidation("Strict"))
		}
		return k8s.Patch(ctx, u, client.Merge, client.FieldValidation("Strict"))
	}
	// stored reads an object of the corpus back from the API server.
	stored := func(ctx context.Context, ns string, object *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(object.GroupVersionKind())
		return u, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: object.GetName()}, u)
	}

	It("holds at least 40 refused specs, at least 8 per kind", func() {
		counts := map[string]int{}
		total := 0
		for _, e := range corpus {
			if e.refused() {
				counts[e.kind]++
				total++
			}
		}
		for _, kind := range kinds {
			GinkgoWriter.Printf("%s: %d refused specs\n", kind, counts[kind])
			Expect(counts[kind]).To(BeNumerically(">=", minRefusedPerKind), "refused specs of %s", kind)
		}
		Expect(total).To(BeNumerically(">=", minRefused))
	})

	DescribeTable("refuses every spec that can never work, saying why",
		func(ctx SpecContext, e entry) {
			ns := newNamespace(ctx)
			last := len(e.objects) - 1
			for i, object := range e.objects[:last] {
				Expect(send(ctx, ns, i, object)).To(Succeed(), "the spec before the refused change")
			}
			err := send(ctx, ns, last, e.objects[last])
			Expect(err).To(HaveOccurred(), "the API server admitted it")
			Expect(apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)).To(BeTrue(), "expected Invalid or BadRequest, got %v", err)
			Expect(err.Error()).To(ContainSubstring(e.want))

			if e.objects[last].GetName() == "" {
				return
			}
			got, err := stored(ctx, ns, e.objects[last])
			if last == 0 {
				Expect(apierrors.IsNotFound(err)).To(BeTrue(), "expected nothing stored, got %v", err)
				return
			}
			Expect(err).NotTo(HaveOccurred())
			Expect(got.GetGeneration()).To(Equal(int64(1)), "the refused change was stored")
		},
		entriesOf(corpus, true),
	)

	DescribeTable("admits every spec that can work",
		func(ctx SpecContext, e entry) {
			ns := newNamespace(ctx)
			for i, object := range e.objects {
				Expect(send(ctx, ns, i, object)).To(Succeed())
			}
			if e.condition == nil {
				return
			}
			conditionType, status, reason, message := e.condition[0], e.condition[1], e.condition[2], e.condition[3]
			Eventually(func(g Gomega) {
				got, err := stored(ctx, ns, e.objects[0])
				g.Expect(err).NotTo(HaveOccurred())
				conditions, _, err := unstructured.NestedSlice(got.Object, "status", "conditions")
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(conditions).To(ContainElement(And(
					HaveKeyWithValue("type", conditionType),
					HaveKeyWithValue("status", status),
					HaveKeyWithValue("reason", reason),
					HaveKeyWithValue("message", ContainSubstring(message)),
				)))
			}).Should(Succeed())
		},
		entriesOf(corpus, false),
	)

	// The longest names are computed (see the constants' comments) and written twice: as
	// constants and as numbers in the CRDs' rules. These specs hold the two together.
	DescribeTable("admits the longest name and refuses one character more",
		func(ctx SpecContext, base string, longest int, message string) {
			e, err := parseEntry(base, must(os.ReadFile(filepath.Join("testdata", base))))
			Expect(err).NotTo(HaveOccurred())
			ns := newNamespace(ctx)
			object := e.objects[0].DeepCopy()

			object.SetName(strings.Repeat("a", longest+1))
			err = send(ctx, ns, 0, object)
			testenv.ExpectInvalid(err, "Invalid value: "+message)
			Expect(err.Error()).To(ContainSubstring(message))

			object.SetName(strings.Repeat("a", longest))
			Expect(send(ctx, ns, 0, object)).To(Succeed())
		},
		Entry("DatabaseCluster", "admitted/databasecluster/minimal.yaml", databasev1alpha1.MaxNameLength,
			"metadata.name must be at most 52 characters"),
		Entry("Echo", "admitted/echo/minimal.yaml", echov1alpha1.MaxEchoNameLength,
			"metadata.name must be at most 58 characters"),
		Entry("ScheduledEcho", "admitted/scheduledecho/minimal.yaml", echov1alpha1.MaxScheduledEchoNameLength,
			"metadata.name must be at most 47 characters"),
		Entry("VoteConfig", "admitted/voteconfig/minimal.yaml", votingv1alpha1.MaxNameLength,
			"metadata.name must be at most 63 characters"),
	)

	// The rules on names are checked on create only (optionalOldSelf). A cluster stored before they
	// existed, with a name they refuse, must still take updates: the operator removes its
	// finalizer with one, and a rule on the whole object would refuse that forever.
	It("lets a cluster stored before the name rules take updates, its finalizer's removal included", func(ctx SpecContext) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: "databaseclusters." + databasev1alpha1.GroupVersion.Group}, crd)).To(Succeed())
		rules := crd.DeepCopy().Spec.Versions[0].Schema.OpenAPIV3Schema.XValidations
		Expect(rules).To(HaveLen(2), "the rules on the name")
		setNameRules := func(ctx context.Context, rules apiextensionsv1.ValidationRules) error {
			return retry.RetryOnConflict(retry.DefaultRetry, func() error {
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
					return err
				}
				crd.Spec.Versions[0].Schema.OpenAPIV3Schema.XValidations = rules
				return k8s.Update(ctx, crd)
			})
		}
		Expect(setNameRules(ctx, nil)).To(Succeed())
		// The rules come back whatever happens: the specs after this one need them. (A DeferCleanup
		// would run after AfterAll has stopped the API server when this spec is the last.)
		defer func() { _ = setNameRules(ctx, rules) }()

		e, err := parseEntry("admitted/databasecluster/minimal.yaml", must(os.ReadFile(filepath.Join("testdata", "admitted", "databasecluster", "minimal.yaml"))))
		Expect(err).NotTo(HaveOccurred())
		ns := newNamespace(ctx)
		old := e.objects[0].DeepCopy()
		old.SetName("old." + strings.Repeat("a", 60))
		old.SetNamespace(ns)
		old.SetFinalizers([]string{"example.com/hold"})
		Eventually(func() error { return send(ctx, ns, 0, old) }).Should(Succeed(), "stored without the name rules")

		Expect(setNameRules(ctx, rules)).To(Succeed())
		// Named by the API server: a create that passes while the rules are still coming back
		// must not make the next try an AlreadyExists.
		refused := e.objects[0].DeepCopy()
		refused.SetName("")
		refused.SetGenerateName("new." + strings.Repeat("a", 60))
		Eventually(func(g Gomega) {
			err := send(ctx, ns, 0, refused)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "expected Invalid, got %v", err)
		}).Should(Succeed(), "the name rules are back")

		Expect(k8s.Patch(ctx, old, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"paused":true}}`)))).To(Succeed())
		Expect(k8s.Delete(ctx, old)).To(Succeed())
		Expect(k8s.Patch(ctx, old, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		Eventually(func() bool {
			_, err := stored(ctx, ns, old)
			return apierrors.IsNotFound(err)
		}).Should(BeTrue(), "deleted once its finalizer is gone")
	})

	It("admits the samples", func(ctx SpecContext) {
		files, err := filepath.Glob(filepath.Join(samplesDirectory, "*_v1alpha1_*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		sampled := map[string]bool{}
		for _, file := range files {
			data := must(os.ReadFile(file))
			u := &unstructured.Unstructured{}
			Expect(yaml.Unmarshal(data, &u.Object)).To(Succeed(), file)
			Expect(send(ctx, newNamespace(ctx), 0, u)).To(Succeed(), file)
			sampled[strings.ToLower(u.GetKind())] = true
		}
		// A kind may have samples before it has a corpus (DatabaseBackup): every kind of the
		// corpus must have one.
		Expect(slices.Collect(maps.Keys(sampled))).To(ContainElements(kinds), "a sample of every kind of the corpus")
	})
})

// must returns v, failing the spec on err.
func must[T any](v T, err error) T {
	GinkgoHelper()
	Expect(err).NotTo(HaveOccurred())
	return v
}
