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
	"sigs.k8s.io/controller-runtime/pkg/client"

	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/operator"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// The envtest specs run the controller in a manager against a real kube-apiserver and etcd.
// envtest runs no other controller: Deployments are only stored, never rolled out.
var _ = Describe("VoteConfig controller", Ordered, Label("integration"), func() {
	k8s := testenv.StartWith(func(deps operator.ReconcilerBase) *Reconciler { return &Reconciler{ReconcilerBase: deps} })
	voteConfigs := testenv.Kind[*votingv1alpha1.VoteConfig, *corev1.ConfigMap]{
		Env: k8s, Name: "VoteConfig", ChildName: (*votingv1alpha1.VoteConfig).ConfigMapName,
	}
	configData := func(ctx SpecContext, vc *votingv1alpha1.VoteConfig) func(g Gomega) map[string]string {
		return func(g Gomega) map[string]string { return voteConfigs.Child(ctx, vc)(g).Data }
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
	options := `{"title":"Cats or dogs?","options":[{"id":"A","label":"Cats"},{"id":"B","label":"Dogs"}]}`

	It("creates the exact ConfigMap, owner-referenced, with a finalizer on the VoteConfig", func(ctx SpecContext) {
		vc := newVoteConfig("vote", withNamespace(k8s.Namespace(ctx, "vc-")))
		cm := voteConfigs.Create(ctx, vc)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(vc), vc)).To(Succeed())
		Expect(vc.Finalizers).To(Equal([]string{"voting.seed1b407122.io/finalizer"}))

		parent := testenv.Parent{APIVersion: "voting.seed1b407122.io/v1alpha1", Kind: "VoteConfig", App: "voteconfig", Name: "vote", UID: vc.UID}
		Expect(cm.OwnerReferences).To(Equal(parent.OwnerReferences()))
		Expect(cm.Labels).To(Equal(parent.Labels()))
		Expect(cm.Data).To(Equal(map[string]string{
			"OPTION_A": "Cats", "OPTION_B": "Dogs", "TITLE": "Cats or dogs?", "options.json": options,
		}))
		Expect(cm.BinaryData).To(BeEmpty())

		Eventually(k8s.Condition(ctx, vc, "Ready")).Should(Equal([]string{"True", "ConfigMapSynced", "ConfigMap vote-config holds the 2 options"}))
		Eventually(k8s.Condition(ctx, vc, "TargetFound")).Should(Equal([]string{"False", "NoTargetDeployment",
			"spec.targetDeployment is not set: no Deployment rolls on change"}))
		got := voteConfigs.Current(ctx, vc)(Default)
		Expect(got.Status.ConfigMapName).To(Equal("vote-config"))
		Expect(got.Status.ObservedGeneration).To(Equal(int64(1)))
		Expect(got.Status.LastUpdated).NotTo(BeNil())
		Expect(got.Status.LastUpdated.Time).To(BeTemporally("~", time.Now(), 10*time.Second))
		Eventually(voteConfigs.Events(ctx, vc)).Should(ConsistOf("Normal Created: Created ConfigMap vote-config"))
		Consistently(voteConfigs.Events(ctx, vc), 2*time.Second).Should(HaveLen(1), "nothing else happened")
	})

	It("reverts hand edits of the ConfigMap and applies new options", func(ctx SpecContext) {
		vc := newVoteConfig("vote", withNamespace(k8s.Namespace(ctx, "vc-")))
		cm := voteConfigs.Create(ctx, vc)
		patch := client.MergeFrom(cm.DeepCopy())
		cm.Data["OPTION_A"] = "Hamsters"
		cm.Data["OPTION_Z"] = "Zebras"
		delete(cm.Data, "TITLE")
		Expect(k8s.Patch(ctx, cm, patch)).To(Succeed())
		Eventually(configData(ctx, vc)).Should(Equal(map[string]string{
			"OPTION_A": "Cats", "OPTION_B": "Dogs", "TITLE": "Cats or dogs?", "options.json": options,
		}))
		Eventually(voteConfigs.Events(ctx, vc)).Should(ContainElement("Normal Updated: Updated ConfigMap vote-config to the spec"))

		voteConfigs.Update(ctx, vc, func(vc *votingv1alpha1.VoteConfig) {
			vc.Spec.Title = ""
			vc.Spec.Options = append(vc.Spec.Options, votingv1alpha1.VoteOption{ID: "C", Label: "Fish"})
		})
		Eventually(configData(ctx, vc)).Should(Equal(map[string]string{
			"OPTION_A": "Cats", "OPTION_B": "Dogs", "OPTION_C": "Fish",
			"options.json": `{"title":"","options":[{"id":"A","label":"Cats"},{"id":"B","label":"Dogs"},{"id":"C","label":"Fish"}]}`,
		}))
		Eventually(k8s.Condition(ctx, vc, "Ready")).Should(Equal([]string{"True", "ConfigMapSynced", "ConfigMap vote-config holds the 3 options"}))
	})

	It("keeps lastUpdated and writes nothing while the content does not change", func(ctx SpecContext) {
		vc := newVoteConfig("vote", withNamespace(k8s.Namespace(ctx, "vc-")))
		voteConfigs.Create(ctx, vc)
		Eventually(k8s.Condition(ctx, vc, "Ready")).Should(HaveExactElements("True", "ConfigMapSynced", Not(BeEmpty())))
		lastUpdated := voteConfigs.Current(ctx, vc)(Default).Status.LastUpdated
		Expect(lastUpdated).NotTo(BeNil())
		// Timestamps are stored in whole seconds: a change now would show.
		time.Sleep(1100 * time.Millisecond)

		By("a label added to the ConfigMap triggers a reconcile that finds nothing to change")
		cm := &corev1.ConfigMap{}
		Expect(k8s.Get(ctx, voteConfigs.ChildKey(vc), cm)).To(Succeed())
		patch := client.MergeFrom(cm.DeepCopy())
		cm.Labels["example.com/team"] = "voting"
		Expect(k8s.Patch(ctx, cm, patch)).To(Succeed())
		version := voteConfigs.Current(ctx, vc)(Default).ResourceVersion
		Consistently(func(g Gomega) string {
			g.Expect(k8s.Get(ctx, voteConfigs.ChildKey(vc), cm)).To(Succeed())
			return voteConfigs.Current(ctx, vc)(g).ResourceVersion + "/" + cm.ResourceVersion
		}, 2*time.Second).Should(Equal(version + "/" + cm.ResourceVersion))

		By("a spec change that leaves the content alone changes the status but not lastUpdated")
		voteConfigs.Update(ctx, vc, func(vc *votingv1alpha1.VoteConfig) { vc.Spec.TargetDeployment = "absent" })
		Eventually(k8s.Condition(ctx, vc, "TargetFound")).Should(HaveExactElements("False", "DeploymentNotFound", Not(BeEmpty())))
		Expect(voteConfigs.Current(ctx, vc)(Default).Status.LastUpdated).To(Equal(lastUpdated))
	})

	It("annotates the target Deployment with the config hash, and again when the options change", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "vc-")
		Expect(k8s.Create(ctx, newDeployment(ns, "web"))).To(Succeed())
		vc := newVoteConfig("vote", withNamespace(ns), withTarget("web"))
		voteConfigs.Create(ctx, vc)
		first := hashOf(vc)
		Eventually(templateAnnotations(ctx, ns, "web")).Should(Equal(map[string]string{
			"example.com/keep": "yes", "voting.seed1b407122.io/config-hash": first,
		}))
		Eventually(k8s.Condition(ctx, vc, "TargetFound")).Should(Equal([]string{"True", "DeploymentFound",
			"Deployment web rolls its pods when the options change"}))

		voteConfigs.Update(ctx, vc, func(vc *votingv1alpha1.VoteConfig) { vc.Spec.Options[1].Label = "Wolves" })
		second := hashOf(vc)
		Expect(second).NotTo(Equal(first))
		Eventually(templateAnnotations(ctx, ns, "web")).Should(HaveKeyWithValue("voting.seed1b407122.io/config-hash", second))
		Eventually(voteConfigs.Events(ctx, vc)).Should(ContainElements(
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
		ns := k8s.Namespace(ctx, "vc-")
		vc := newVoteConfig("vote", withNamespace(ns), withTarget("web"))
		voteConfigs.Create(ctx, vc)
		message := "Deployment web does not exist in namespace " + ns
		Eventually(k8s.Condition(ctx, vc, "TargetFound")).Should(Equal([]string{"False", "DeploymentNotFound", message}))
		Eventually(k8s.Condition(ctx, vc, "Ready")).Should(HaveExactElements("True", "ConfigMapSynced", Not(BeEmpty())))
		Eventually(voteConfigs.Events(ctx, vc)).Should(ContainElement("Warning TargetNotFound: " + message))
		k8s.ExpectQuiet(ctx, vc)

		Expect(k8s.Create(ctx, newDeployment(ns, "web"))).To(Succeed())
		Eventually(k8s.Condition(ctx, vc, "TargetFound")).Should(Equal([]string{"True", "DeploymentFound",
			"Deployment web rolls its pods when the options change"}))
		Eventually(templateAnnotations(ctx, ns, "web")).Should(HaveKeyWithValue("voting.seed1b407122.io/config-hash", hashOf(vc)))
		Eventually(voteConfigs.Events(ctx, vc)).Should(ContainElement("Normal TargetFound: Deployment web rolls its pods when the options change"))
	})

	It("removes the config hash from the target on delete, then its finalizer", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "vc-")
		Expect(k8s.Create(ctx, newDeployment(ns, "web"))).To(Succeed())
		vc := newVoteConfig("vote", withNamespace(ns), withTarget("web"))
		voteConfigs.Create(ctx, vc)
		Eventually(templateAnnotations(ctx, ns, "web")).Should(HaveKey("voting.seed1b407122.io/config-hash"))

		k8s.DeleteAndWait(ctx, vc)
		Expect(templateAnnotations(ctx, ns, "web")(Default)).To(Equal(map[string]string{"example.com/keep": "yes"}))
	})

	It("is never stuck on delete when its target is missing", func(ctx SpecContext) {
		vc := newVoteConfig("vote", withNamespace(k8s.Namespace(ctx, "vc-")), withTarget("web"))
		voteConfigs.Create(ctx, vc)
		Eventually(k8s.Condition(ctx, vc, "TargetFound")).Should(HaveExactElements("False", "DeploymentNotFound", Not(BeEmpty())))
		k8s.DeleteAndWait(ctx, vc)
	})

	It("records its conditions in the operator's metrics, and removes them once deleted", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "vc-")
		vc := newVoteConfig("vote", withNamespace(ns), withTarget("web"))
		voteConfigs.Create(ctx, vc)
		voteConfigs.ExpectConditionSeries(ctx, vc,
			map[string]string{"Ready": "true", "TargetFound": "false", "Degraded": "false"},
			func() { Expect(k8s.Create(ctx, newDeployment(ns, "web"))).To(Succeed()) },
			map[string]string{"Ready": "true", "TargetFound": "true", "Degraded": "false"})
	})

	Describe("admission", func() {
		var ns string
		BeforeAll(func(ctx SpecContext) { ns = k8s.Namespace(ctx, "vc-") })

		DescribeTable("rejects invalid options with a message a user understands", k8s.CreateRefused(&ns),
			Entry("duplicate ids", newVoteConfig("dup", withOptions("A", "Cats", "A", "Dogs")), "option ids must be unique"),
			Entry("one option", newVoteConfig("one", withOptions("A", "Cats")), "spec.options: Invalid value: 1: spec.options in body should have at least 2 items"),
			Entry("eleven options", newVoteConfig("eleven", withManyOptions(11)), "spec.options: Too many: 11: must have at most 10 items"),
			Entry("an id that is not a key", newVoteConfig("badid", withOptions("A-1", "Cats", "B", "Dogs")), "spec.options[0].id in body should match '^[A-Za-z0-9_]+$'"),
		)

		It("accepts ten options", func(ctx SpecContext) {
			Expect(k8s.Create(ctx, newVoteConfig("ten", withNamespace(ns), withManyOptions(10)))).To(Succeed())
		})
	})

	// The ownership rule for the ConfigMap: a ConfigMap of that name held by anything but the
	// VoteConfig is left exactly as it is (its data too) and reported, never adopted.
	voteConfigs.OwnershipSpecs(func(ns string) *votingv1alpha1.VoteConfig { return newVoteConfig("vote", withNamespace(ns)) },
		&corev1.ConfigMap{Data: map[string]string{"app.properties": "someone's settings"}})
})
