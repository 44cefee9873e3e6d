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

package voteconfig

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/testenv"
)

// The envtest specs run the controller in a manager against a real kube-apiserver and etcd.
// envtest runs no other controller: Deployments are only stored, never rolled out.
var _ = Describe("VoteConfig controller", Ordered, Label("integration"), func() {
	var (
		env *testenv.Env
		k8s client.Client
	)

	env = testenv.StartInBeforeAll(setupController)
	BeforeAll(func() { k8s = env.Client })

	// newNamespace creates a namespace of its own for one spec.
	newNamespace := func(ctx SpecContext) string {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vc-"}}
		Expect(k8s.Create(ctx, ns)).To(Succeed())
		return ns.Name
	}
	configMapKey := func(vc *votingv1alpha1.VoteConfig) client.ObjectKey {
		return client.ObjectKey{Namespace: vc.Namespace, Name: vc.ConfigMapName()}
	}
	// create stores a VoteConfig and waits until the operator created its ConfigMap.
	create := func(ctx SpecContext, vc *votingv1alpha1.VoteConfig) *corev1.ConfigMap {
		Expect(k8s.Create(ctx, vc)).To(Succeed())
		cm := &corev1.ConfigMap{}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, configMapKey(vc), cm)).To(Succeed())
		}).Should(Succeed())
		return cm
	}
	configData := func(ctx SpecContext, vc *votingv1alpha1.VoteConfig) func(g Gomega) map[string]string {
		return func(g Gomega) map[string]string {
			cm := &corev1.ConfigMap{}
			g.Expect(k8s.Get(ctx, configMapKey(vc), cm)).To(Succeed())
			return cm.Data
		}
	}
	current := func(ctx SpecContext, vc *votingv1alpha1.VoteConfig) func(g Gomega) *votingv1alpha1.VoteConfig {
		return func(g Gomega) *votingv1alpha1.VoteConfig {
			got := &votingv1alpha1.VoteConfig{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(vc), got)).To(Succeed())
			return got
		}
	}
	update := func(ctx SpecContext, vc *votingv1alpha1.VoteConfig, change func(*votingv1alpha1.VoteConfig)) {
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(vc), vc)).To(Succeed())
		patch := client.MergeFrom(vc.DeepCopy())
		change(vc)
		Expect(k8s.Patch(ctx, vc, patch)).To(Succeed())
	}
	condition := func(ctx SpecContext, vc *votingv1alpha1.VoteConfig, conditionType string) func(g Gomega) []string {
		return func(g Gomega) []string {
			got := current(ctx, vc)(g)
			c := meta.FindStatusCondition(got.Status.Conditions, conditionType)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.ObservedGeneration).To(Equal(got.Generation))
			return []string{string(c.Status), c.Reason, c.Message}
		}
	}
	// events lists the events about vc as "Type Reason: note".
	events := func(ctx SpecContext, vc *votingv1alpha1.VoteConfig) func(g Gomega) []string {
		return func(g Gomega) []string {
			var list eventsv1.EventList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(vc.Namespace))).To(Succeed())
			var out []string
			for _, e := range list.Items {
				if e.Regarding.Name == vc.Name && e.Regarding.Kind == "VoteConfig" {
					out = append(out, e.Type+" "+e.Reason+": "+e.Note)
				}
			}
			return out
		}
	}
	// hashOf is the config-hash the target of vc must carry.
	hashOf := func(vc *votingv1alpha1.VoteConfig) string {
		data, err := ConfigData(vc)
		Expect(err).NotTo(HaveOccurred())
		return ConfigHash(data)
	}
	// templateAnnotations returns the pod template annotations of a Deployment.
	templateAnnotations := func(ctx SpecContext, namespace, name string) func(g Gomega) map[string]string {
		return func(g Gomega) map[string]string {
			dep := &appsv1.Deployment{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, dep)).To(Succeed())
			return dep.Spec.Template.Annotations
		}
	}
	gone := func(ctx SpecContext, vc *votingv1alpha1.VoteConfig) func() bool {
		return func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(vc), &votingv1alpha1.VoteConfig{}))
		}
	}
	// conditionSeries reads the condition series of vc from the manager's metrics registry.
	conditionSeries := func(vc *votingv1alpha1.VoteConfig) func(g Gomega) map[string]float64 {
		return func(g Gomega) map[string]float64 {
			series, err := testenv.ConditionSeries("VoteConfig", vc.Namespace, vc.Name)
			g.Expect(err).NotTo(HaveOccurred())
			return series
		}
	}
	options := `{"title":"Cats or dogs?","options":[{"id":"A","label":"Cats"},{"id":"B","label":"Dogs"}]}`

	It("creates the exact ConfigMap, owner-referenced, with a finalizer on the VoteConfig", func(ctx SpecContext) {
		vc := newVoteConfig("vote", withNamespace(newNamespace(ctx)))
		cm := create(ctx, vc)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(vc), vc)).To(Succeed())
		Expect(vc.Finalizers).To(Equal([]string{"voting.seed1b407122.io/finalizer"}))

		Expect(cm.OwnerReferences).To(Equal([]metav1.OwnerReference{{
			APIVersion: "voting.seed1b407122.io/v1alpha1", Kind: "VoteConfig", Name: "vote", UID: vc.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}))
		Expect(cm.Labels).To(Equal(map[string]string{
			"app.kubernetes.io/name": "voteconfig", "app.kubernetes.io/instance": "vote",
			"app.kubernetes.io/managed-by": "database-operator",
		}))
		Expect(cm.Data).To(Equal(map[string]string{
			"OPTION_A": "Cats", "OPTION_B": "Dogs", "TITLE": "Cats or dogs?", "options.json": options,
		}))
		Expect(cm.BinaryData).To(BeEmpty())

		Eventually(condition(ctx, vc, "Ready")).Should(Equal([]string{"True", "ConfigMapSynced", "ConfigMap vote-config holds the 2 options"}))
		Eventually(condition(ctx, vc, "TargetFound")).Should(Equal([]string{"False", "NoTargetDeployment",
			"spec.targetDeployment is not set: no Deployment rolls on change"}))
		got := current(ctx, vc)(Default)
		Expect(got.Status.ConfigMapName).To(Equal("vote-config"))
		Expect(got.Status.ObservedGeneration).To(Equal(int64(1)))
		Expect(got.Status.LastUpdated).NotTo(BeNil())
		Expect(got.Status.LastUpdated.Time).To(BeTemporally("~", time.Now(), 10*time.Second))
		Eventually(events(ctx, vc)).Should(ConsistOf("Normal Created: Created ConfigMap vote-config"))
		Consistently(events(ctx, vc), 2*time.Second).Should(HaveLen(1), "nothing else happened")
	})

	It("reverts hand edits of the ConfigMap and applies new options", func(ctx SpecContext) {
		vc := newVoteConfig("vote", withNamespace(newNamespace(ctx)))
		cm := create(ctx, vc)
		patch := client.MergeFrom(cm.DeepCopy())
		cm.Data["OPTION_A"] = "Hamsters"
		cm.Data["OPTION_Z"] = "Zebras"
		delete(cm.Data, "TITLE")
		Expect(k8s.Patch(ctx, cm, patch)).To(Succeed())
		Eventually(configData(ctx, vc)).Should(Equal(map[string]string{
			"OPTION_A": "Cats", "OPTION_B": "Dogs", "TITLE": "Cats or dogs?", "options.json": options,
		}))
		Eventually(events(ctx, vc)).Should(ContainElement("Normal Updated: Updated ConfigMap vote-config to the spec"))

		update(ctx, vc, func(vc *votingv1alpha1.VoteConfig) {
			vc.Spec.Title = ""
			vc.Spec.Options = append(vc.Spec.Options, votingv1alpha1.VoteOption{ID: "C", Label: "Fish"})
		})
		Eventually(configData(ctx, vc)).Should(Equal(map[string]string{
			"OPTION_A": "Cats", "OPTION_B": "Dogs", "OPTION_C": "Fish",
			"options.json": `{"title":"","options":[{"id":"A","label":"Cats"},{"id":"B","label":"Dogs"},{"id":"C","label":"Fish"}]}`,
		}))
		Eventually(condition(ctx, vc, "Ready")).Should(Equal([]string{"True", "ConfigMapSynced", "ConfigMap vote-config holds the 3 options"}))
	})

	It("keeps lastUpdated and writes nothing while the content does not change", func(ctx SpecContext) {
		vc := newVoteConfig("vote", withNamespace(newNamespace(ctx)))
		create(ctx, vc)
		Eventually(condition(ctx, vc, "Ready")).Should(HaveExactElements("True", "ConfigMapSynced", Not(BeEmpty())))
		lastUpdated := current(ctx, vc)(Default).Status.LastUpdated
		Expect(lastUpdated).NotTo(BeNil())
		// Timestamps are stored in whole seconds: a change now would show.
		time.Sleep(1100 * time.Millisecond)

		By("a label added to the ConfigMap triggers a reconcile that finds nothing to change")
		cm := &corev1.ConfigMap{}
		Expect(k8s.Get(ctx, configMapKey(vc), cm)).To(Succeed())
		patch := client.MergeFrom(cm.DeepCopy())
		cm.Labels["example.com/team"] = "voting"
		Expect(k8s.Patch(ctx, cm, patch)).To(Succeed())
		version := current(ctx, vc)(Default).ResourceVersion
		Consistently(func(g Gomega) string {
			g.Expect(k8s.Get(ctx, configMapKey(vc), cm)).To(Succeed())
			return current(ctx, vc)(g).ResourceVersion + "/" + cm.ResourceVersion
		}, 2*time.Second).Should(Equal(version + "/" + cm.ResourceVersion))

		By("a spec change that leaves the content alone changes the status but not lastUpdated")
		update(ctx, vc, func(vc *votingv1alpha1.VoteConfig) { vc.Spec.TargetDeployment = "absent" })
		Eventually(condition(ctx, vc, "TargetFound")).Should(HaveExactElements("False", "DeploymentNotFound", Not(BeEmpty())))
		Expect(current(ctx, vc)(Default).Status.LastUpdated).To(Equal(lastUpdated))
	})

	It("annotates the target Deployment with the config hash, and again when the options change", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		Expect(k8s.Create(ctx, newDeployment(ns, "web"))).To(Succeed())
		vc := newVoteConfig("vote", withNamespace(ns), withTarget("web"))
		create(ctx, vc)
		first := hashOf(vc)
		Eventually(templateAnnotations(ctx, ns, "web")).Should(Equal(map[string]string{
			"example.com/keep": "yes", "voting.seed1b407122.io/config-hash": first,
		}))
		Eventually(condition(ctx, vc, "TargetFound")).Should(Equal([]string{"True", "DeploymentFound",
			"Deployment web rolls its pods when the options change"}))

		update(ctx, vc, func(vc *votingv1alpha1.VoteConfig) { vc.Spec.Options[1].Label = "Wolves" })
		second := hashOf(vc)
		Expect(second).NotTo(Equal(first))
		Eventually(templateAnnotations(ctx, ns, "web")).Should(HaveKeyWithValue("voting.seed1b407122.io/config-hash", second))
		Eventually(events(ctx, vc)).Should(ContainElements(
			"Normal RolloutTriggered: Set voting.seed1b407122.io/config-hash="+first+" on the pod template of Deployment web",
			"Normal RolloutTriggered: Set voting.seed1b407122.io/config-hash="+second+" on the pod template of Deployment web"))

		By("an annotation removed by hand is put back")
		dep := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, dep)).To(Succeed())
		patch := client.MergeFrom(dep.DeepCopy())
		delete(dep.Spec.Template.Annotations, "voting.seed1b407122.io/config-hash")
		Expect(k8s.Patch(ctx, dep, patch)).To(Succeed())
		Eventually(templateAnnotations(ctx, ns, "web")).Should(HaveKeyWithValue("voting.seed1b407122.io/config-hash", second))
	})

	It("reports a missing target Deployment without retrying, and annotates it once it is created", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		vc := newVoteConfig("vote", withNamespace(ns), withTarget("web"))
		create(ctx, vc)
		message := "Deployment web does not exist in namespace " + ns
		Eventually(condition(ctx, vc, "TargetFound")).Should(Equal([]string{"False", "DeploymentNotFound", message}))
		Eventually(condition(ctx, vc, "Ready")).Should(HaveExactElements("True", "ConfigMapSynced", Not(BeEmpty())))
		Eventually(events(ctx, vc)).Should(ContainElement("Warning TargetNotFound: " + message))
		version := current(ctx, vc)(Default).ResourceVersion
		Consistently(func(g Gomega) string { return current(ctx, vc)(g).ResourceVersion }, 2*time.Second).Should(Equal(version))

		Expect(k8s.Create(ctx, newDeployment(ns, "web"))).To(Succeed())
		Eventually(condition(ctx, vc, "TargetFound")).Should(Equal([]string{"True", "DeploymentFound",
			"Deployment web rolls its pods when the options change"}))
		Eventually(templateAnnotations(ctx, ns, "web")).Should(HaveKeyWithValue("voting.seed1b407122.io/config-hash", hashOf(vc)))
		Eventually(events(ctx, vc)).Should(ContainElement("Normal TargetFound: Deployment web rolls its pods when the options change"))
	})

	It("removes the config hash from the target on delete, then its finalizer", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		Expect(k8s.Create(ctx, newDeployment(ns, "web"))).To(Succeed())
		vc := newVoteConfig("vote", withNamespace(ns), withTarget("web"))
		create(ctx, vc)
		Eventually(templateAnnotations(ctx, ns, "web")).Should(HaveKey("voting.seed1b407122.io/config-hash"))

		Expect(k8s.Delete(ctx, vc)).To(Succeed())
		Eventually(gone(ctx, vc)).Should(BeTrue())
		Expect(templateAnnotations(ctx, ns, "web")(Default)).To(Equal(map[string]string{"example.com/keep": "yes"}))
	})

	It("is never stuck on delete when its target is missing", func(ctx SpecContext) {
		vc := newVoteConfig("vote", withNamespace(newNamespace(ctx)), withTarget("web"))
		create(ctx, vc)
		Eventually(condition(ctx, vc, "TargetFound")).Should(HaveExactElements("False", "DeploymentNotFound", Not(BeEmpty())))
		Expect(k8s.Delete(ctx, vc)).To(Succeed())
		Eventually(gone(ctx, vc)).Should(BeTrue())
	})

	It("records its conditions in the operator's metrics, and removes them once deleted", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		vc := newVoteConfig("vote", withNamespace(ns), withTarget("web"))
		create(ctx, vc)
		Eventually(conditionSeries(vc)).Should(Equal(testenv.WantConditionSeries(map[string]string{
			"Ready": "true", "TargetFound": "false", "Degraded": "false",
		})))

		By("the 1 moves to the new status of a condition")
		Expect(k8s.Create(ctx, newDeployment(ns, "web"))).To(Succeed())
		Eventually(conditionSeries(vc)).Should(Equal(testenv.WantConditionSeries(map[string]string{
			"Ready": "true", "TargetFound": "true", "Degraded": "false",
		})))

		Expect(k8s.Delete(ctx, vc)).To(Succeed())
		Eventually(gone(ctx, vc)).Should(BeTrue())
		Eventually(conditionSeries(vc)).Should(BeEmpty())
	})

	Describe("admission", func() {
		var ns string
		BeforeAll(func(ctx SpecContext) { ns = newNamespace(ctx) })

		DescribeTable("rejects invalid options with a message a user understands",
			func(ctx SpecContext, vc *votingv1alpha1.VoteConfig, message string) {
				vc.Namespace = ns
				err := k8s.Create(ctx, vc)
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "expected Invalid, got %v", err)
				Expect(err.Error()).To(ContainSubstring(message))
			},
			Entry("duplicate ids", newVoteConfig("dup", withOptions("A", "Cats", "A", "Dogs")), "option ids must be unique"),
			Entry("one option", newVoteConfig("one", withOptions("A", "Cats")), "spec.options: Invalid value: 1: spec.options in body should have at least 2 items"),
			Entry("eleven options", newVoteConfig("eleven", withManyOptions(11)), "spec.options: Too many: 11: must have at most 10 items"),
			Entry("an id that is not a key", newVoteConfig("badid", withOptions("A-1", "Cats", "B", "Dogs")), "spec.options[0].id in body should match '^[A-Za-z0-9_]+$'"),
		)

		It("accepts ten options", func(ctx SpecContext) {
			Expect(k8s.Create(ctx, newVoteConfig("ten", withNamespace(ns), withManyOptions(10)))).To(Succeed())
		})
	})
})
