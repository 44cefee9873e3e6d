//go:build e2e

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

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
)

// Echo and VoteConfig with the Job, pod and Deployment controllers running: kwok completes the
// Job's pod, the Deployment controller rolls the voting app when its options change.
var _ = Describe("Echo and VoteConfig on the local control plane", Ordered, func() {
	const ns = "e2e-echo-voting"

	BeforeAll(func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	})

	It("runs an Echo's Job to completion and reports Succeeded", func(ctx SpecContext) {
		e := &echov1alpha1.Echo{
			ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns},
			Spec:       echov1alpha1.EchoSpec{Message: "hello from e2e"},
		}
		began := time.Now()
		Expect(k8s.Create(ctx, e)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(e), e)).To(Succeed())
			g.Expect(e.Status.Phase).To(Equal(echov1alpha1.EchoSucceeded))
			g.Expect(e.Status.JobName).To(Equal("hello-echo"))
			g.Expect(e.Status.CompletionTime).NotTo(BeNil())
			g.Expect(meta.IsStatusConditionTrue(e.Status.Conditions, echov1alpha1.ConditionComplete)).To(BeTrue())
		}).Should(Succeed())
		AddReportEntry("Echo created → Succeeded", time.Since(began).Round(time.Millisecond).String())

		job := &batchv1.Job{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-echo"}, job)).To(Succeed())
		Expect(job.Status.Succeeded).To(Equal(int32(1)))
		Expect(metav1.IsControlledBy(job, e)).To(BeTrue())
		Expect(*job.Spec.Template.Spec.SecurityContext.RunAsNonRoot).To(BeTrue())
	})

	It("rolls the voting app when the options change", func(ctx SpecContext) {
		labels := map[string]string{"app": "vote"}
		app := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "vote", Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](2),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "vote", Image: "registry.example/vote:1"}}},
				},
			},
		}
		Expect(k8s.Create(ctx, app)).To(Succeed())
		vc := &votingv1alpha1.VoteConfig{
			ObjectMeta: metav1.ObjectMeta{Name: "poll", Namespace: ns},
			Spec: votingv1alpha1.VoteConfigSpec{
				Title:            "Cats or dogs?",
				Options:          []votingv1alpha1.VoteOption{{ID: "A", Label: "Cats"}, {ID: "B", Label: "Dogs"}},
				TargetDeployment: "vote",
			},
		}
		Expect(k8s.Create(ctx, vc)).To(Succeed())

		// rolledOut returns the config hash on the app's pod template once the app has
		// rolled out that template, and the Deployment's generation.
		rolledOut := func(g Gomega) (string, int64) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
			g.Expect(app.Status.ObservedGeneration).To(Equal(app.Generation))
			g.Expect(app.Status.UpdatedReplicas).To(Equal(int32(2)))
			g.Expect(app.Status.AvailableReplicas).To(Equal(int32(2)))
			hash := app.Spec.Template.Annotations[votingv1alpha1.ConfigHashAnnotation]
			g.Expect(hash).NotTo(BeEmpty())
			return hash, app.Generation
		}
		var firstHash string
		var firstGeneration int64
		Eventually(func(g Gomega) {
			firstHash, firstGeneration = rolledOut(g)
			cm := &corev1.ConfigMap{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "poll-config"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("OPTION_A", "Cats"))
			g.Expect(cm.Data).To(HaveKeyWithValue("OPTION_B", "Dogs"))
		}).Should(Succeed())

		began := time.Now()
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(vc), vc)).To(Succeed())
		patch := client.MergeFrom(vc.DeepCopy())
		vc.Spec.Options = append(vc.Spec.Options, votingv1alpha1.VoteOption{ID: "C", Label: "Both"})
		Expect(k8s.Patch(ctx, vc, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			hash, generation := rolledOut(g)
			g.Expect(hash).NotTo(Equal(firstHash))
			g.Expect(generation).To(BeNumerically(">", firstGeneration))
			var pods corev1.PodList
			g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(labels))).To(Succeed())
			running := 0
			for _, pod := range pods.Items {
				if pod.DeletionTimestamp == nil && pod.Annotations[votingv1alpha1.ConfigHashAnnotation] == hash {
					running++
				}
			}
			g.Expect(running).To(Equal(2), "both app pods run with the new options")
		}).Should(Succeed())
		AddReportEntry("VoteConfig change → app rolled (2 pods)", time.Since(began).Round(time.Millisecond).String())
	})
})
