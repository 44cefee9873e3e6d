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

package echo

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/testenv"
)

// testImage is the image the operator under test is configured with.
const testImage = "registry.example/tools/busybox:1.36"

// The envtest specs run the controller in a manager against a real kube-apiserver and etcd.
// envtest runs no other controller: nothing runs Jobs, and the specs play the Job controller by
// writing the Job's status themselves.
var _ = Describe("Echo controller", Ordered, Label("integration"), func() {
	var (
		env *testenv.Env
		k8s client.Client
	)

	env = testenv.StartInBeforeAll(setupController)
	BeforeAll(func() { k8s = env.Client })

	// newNamespace creates a namespace of its own for one spec.
	newNamespace := func(ctx SpecContext) string {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "echo-"}}
		Expect(k8s.Create(ctx, ns)).To(Succeed())
		return ns.Name
	}
	jobKey := func(e *echov1alpha1.Echo) client.ObjectKey {
		return client.ObjectKey{Namespace: e.Namespace, Name: e.JobName()}
	}
	// create stores an Echo and waits until the operator created its Job.
	create := func(ctx SpecContext, e *echov1alpha1.Echo) *batchv1.Job {
		Expect(k8s.Create(ctx, e)).To(Succeed())
		job := &batchv1.Job{}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, jobKey(e), job)).To(Succeed())
		}).Should(Succeed())
		return job
	}
	// setJobStatus plays the Job controller: it writes the status that opts describe.
	setJobStatus := func(ctx SpecContext, e *echov1alpha1.Echo, opts ...jobOption) {
		Eventually(func(g Gomega) {
			job := &batchv1.Job{}
			g.Expect(k8s.Get(ctx, jobKey(e), job)).To(Succeed())
			for _, opt := range opts {
				opt(job)
			}
			g.Expect(k8s.Status().Update(ctx, job)).To(Succeed())
		}).Should(Succeed())
	}
	status := func(ctx SpecContext, e *echov1alpha1.Echo) func(g Gomega) echov1alpha1.EchoStatus {
		return func(g Gomega) echov1alpha1.EchoStatus {
			current := &echov1alpha1.Echo{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(e), current)).To(Succeed())
			return current.Status
		}
	}
	phase := func(ctx SpecContext, e *echov1alpha1.Echo) func(g Gomega) echov1alpha1.EchoPhase {
		return func(g Gomega) echov1alpha1.EchoPhase { return status(ctx, e)(g).Phase }
	}
	condition := func(ctx SpecContext, e *echov1alpha1.Echo, conditionType string) func(g Gomega) []string {
		return func(g Gomega) []string {
			current := &echov1alpha1.Echo{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(e), current)).To(Succeed())
			c := meta.FindStatusCondition(current.Status.Conditions, conditionType)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.ObservedGeneration).To(Equal(current.Generation))
			return []string{string(c.Status), c.Reason, c.Message}
		}
	}
	// events lists the events about e as "Type Reason: note".
	events := func(ctx SpecContext, e *echov1alpha1.Echo) func(g Gomega) []string {
		return func(g Gomega) []string {
			var list eventsv1.EventList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(e.Namespace))).To(Succeed())
			var out []string
			for _, ev := range list.Items {
				if ev.Regarding.Name == e.Name && ev.Regarding.Kind == "Echo" {
					out = append(out, ev.Type+" "+ev.Reason+": "+ev.Note)
				}
			}
			return out
		}
	}
	// conditionSeries reads the condition series of e from the manager's metrics registry.
	conditionSeries := func(e *echov1alpha1.Echo) func(g Gomega) map[string]float64 {
		return func(g Gomega) map[string]float64 {
			series, err := testenv.ConditionSeries("Echo", e.Namespace, e.Name)
			g.Expect(err).NotTo(HaveOccurred())
			return series
		}
	}
	// deleteJob deletes the Job in the background, as kubectl does: the default for Jobs is to
	// orphan their pods, which leaves the Job behind with a finalizer no controller removes here.
	deleteJob := func(ctx SpecContext, job *batchv1.Job) {
		Expect(k8s.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	}

	It("creates the exact Job, owner-referenced, and reports it Pending", func(ctx SpecContext) {
		e := newEcho("ec", withNamespace(newNamespace(ctx)), withMessage("Hello, $USER! `id`"))
		job := create(ctx, e)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(e), e)).To(Succeed())

		Expect(job.OwnerReferences).To(Equal([]metav1.OwnerReference{{
			APIVersion: "echo.seed1b407122.io/v1alpha1", Kind: "Echo", Name: "ec", UID: e.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}))
		Expect(job.Labels).To(Equal(map[string]string{
			"app.kubernetes.io/name": "echo", "app.kubernetes.io/instance": "ec",
			"app.kubernetes.io/managed-by": "database-operator",
		}))
		Expect(*job.Spec.BackoffLimit).To(Equal(int32(2)))
		Expect(*job.Spec.ActiveDeadlineSeconds).To(Equal(int64(600)))
		Expect(*job.Spec.TTLSecondsAfterFinished).To(Equal(int32(3600)))
		pod := job.Spec.Template
		Expect(pod.Labels).To(HaveKeyWithValue("app.kubernetes.io/name", "echo"))
		Expect(pod.Labels).To(HaveKeyWithValue("app.kubernetes.io/instance", "ec"))
		Expect(pod.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
		Expect(*pod.Spec.AutomountServiceAccountToken).To(BeFalse())
		Expect(pod.Spec.SecurityContext).To(Equal(&corev1.PodSecurityContext{
			RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65534), RunAsGroup: ptr.To[int64](65534),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}))
		Expect(pod.Spec.Containers).To(HaveLen(1))
		c := pod.Spec.Containers[0]
		Expect(c.Name).To(Equal("echo"))
		Expect(c.Image).To(Equal(testImage))
		Expect(c.Command).To(Equal([]string{"/bin/sh", "-c", `printf '%s\n' "$MESSAGE"`}))
		Expect(c.Env).To(Equal([]corev1.EnvVar{{Name: "MESSAGE", Value: "Hello, $USER! `id`"}}))
		Expect(c.SecurityContext).To(Equal(&corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true), RunAsNonRoot: ptr.To(true),
			Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}))

		Eventually(status(ctx, e)).Should(And(
			HaveField("JobName", "ec-echo"), HaveField("Phase", echov1alpha1.EchoPending),
			HaveField("StartTime", BeNil()), HaveField("CompletionTime", BeNil()), HaveField("ObservedGeneration", int64(1)),
		))
		Eventually(condition(ctx, e, "Complete")).Should(Equal([]string{"False", "JobPending", "Job ec-echo has no pod running yet"}))
		Eventually(condition(ctx, e, "Failed")).Should(Equal([]string{"False", "JobPending", "Job ec-echo has no pod running yet"}))
		Eventually(events(ctx, e)).Should(ConsistOf("Normal Created: Created Job ec-echo"))
		Consistently(events(ctx, e), 2*time.Second).Should(HaveLen(1), "nothing else happened")
	})

	It("follows the Job to Running and Succeeded, and tells it once", func(ctx SpecContext) {
		e := newEcho("ec", withNamespace(newNamespace(ctx)))
		create(ctx, e)
		setJobStatus(ctx, e, withActive(1))
		Eventually(phase(ctx, e)).Should(Equal(echov1alpha1.EchoRunning))
		Eventually(condition(ctx, e, "Complete")).Should(Equal([]string{"False", "JobRunning", "Job ec-echo is running"}))
		Expect(status(ctx, e)(Default).StartTime.Equal(&t0)).To(BeTrue())

		setJobStatus(ctx, e, withSucceeded())
		Eventually(phase(ctx, e)).Should(Equal(echov1alpha1.EchoSucceeded))
		st := status(ctx, e)(Default)
		Expect(st.StartTime.Equal(&t0)).To(BeTrue())
		Expect(st.CompletionTime.Equal(&t1)).To(BeTrue())
		Eventually(condition(ctx, e, "Complete")).Should(Equal([]string{"True", "JobSucceeded", "Job ec-echo printed the message"}))
		Eventually(condition(ctx, e, "Failed")).Should(Equal([]string{"False", "JobSucceeded", "Job ec-echo printed the message"}))
		Eventually(events(ctx, e)).Should(ConsistOf("Normal Created: Created Job ec-echo",
			"Normal Succeeded: Job ec-echo printed the message"))
		Consistently(events(ctx, e), 2*time.Second).Should(HaveLen(2))
	})

	It("reports a failed Job", func(ctx SpecContext) {
		e := newEcho("ec", withNamespace(newNamespace(ctx)))
		create(ctx, e)
		setJobStatus(ctx, e, withFailed())
		Eventually(phase(ctx, e)).Should(Equal(echov1alpha1.EchoFailed))
		message := "Job ec-echo failed: BackoffLimitExceeded: Job has reached the specified backoff limit"
		Eventually(condition(ctx, e, "Failed")).Should(Equal([]string{"True", "JobFailed", message}))
		Eventually(condition(ctx, e, "Complete")).Should(Equal([]string{"False", "JobFailed", message}))
		Expect(status(ctx, e)(Default).CompletionTime.Equal(&t1)).To(BeTrue(), "the Failed condition tells when it ended")
		Eventually(events(ctx, e)).Should(ContainElement("Warning Failed: " + message))
	})

	It("recreates the deleted Job of an Echo that has not finished", func(ctx SpecContext) {
		e := newEcho("ec", withNamespace(newNamespace(ctx)))
		job := create(ctx, e)
		setJobStatus(ctx, e, withActive(1))
		Eventually(phase(ctx, e)).Should(Equal(echov1alpha1.EchoRunning))
		deleteJob(ctx, job)
		Eventually(func(g Gomega) {
			recreated := &batchv1.Job{}
			g.Expect(k8s.Get(ctx, jobKey(e), recreated)).To(Succeed())
			g.Expect(recreated.UID).NotTo(Equal(job.UID))
		}).Should(Succeed())
		Eventually(phase(ctx, e)).Should(Equal(echov1alpha1.EchoPending))
		Eventually(events(ctx, e)).Should(Equal([]string{"Normal Created: Created Job ec-echo", "Normal Created: Created Job ec-echo"}),
			"one event per Job: each regards another Job")
	})

	It("never runs a finished Echo again, even when its Job is gone", func(ctx SpecContext) {
		e := newEcho("ec", withNamespace(newNamespace(ctx)))
		job := create(ctx, e)
		setJobStatus(ctx, e, withSucceeded())
		Eventually(phase(ctx, e)).Should(Equal(echov1alpha1.EchoSucceeded))
		before := status(ctx, e)(Default)

		By("the TTL controller deletes the finished Job")
		deleteJob(ctx, job)
		Consistently(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, jobKey(e), &batchv1.Job{}))
		}, 3*time.Second).Should(BeTrue())
		Expect(status(ctx, e)(Default)).To(Equal(before))
	})

	It("keeps the Job's cleanup settings but never touches its pod template", func(ctx SpecContext) {
		e := newEcho("ec", withNamespace(newNamespace(ctx)))
		job := create(ctx, e)
		patch := client.MergeFrom(job.DeepCopy())
		job.Spec.TTLSecondsAfterFinished = ptr.To[int32](5)
		Expect(k8s.Patch(ctx, job, patch)).To(Succeed())
		Eventually(func(g Gomega) int32 {
			g.Expect(k8s.Get(ctx, jobKey(e), job)).To(Succeed())
			return *job.Spec.TTLSecondsAfterFinished
		}).Should(Equal(int32(3600)))
	})

	It("refuses at admission a name too long for its Job, and accepts the longest that fits", func(ctx SpecContext) {
		// The Job is NAME-echo, and a Job's name becomes a label value of its pods (63 bytes).
		ns := newNamespace(ctx)
		err := k8s.Create(ctx, newEcho(strings.Repeat("e", 59), withNamespace(ns)))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "expected Invalid, got %v", err)
		Expect(err.Error()).To(ContainSubstring("name must be at most 58 characters: the Job is named NAME-echo and Job names are limited to 63"))
		e := newEcho(strings.Repeat("e", 58), withNamespace(ns))
		Expect(k8s.Create(ctx, e)).To(Succeed())
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: e.JobName()}, &batchv1.Job{})
		}).Should(Succeed())
	})

	It("records its conditions in the operator's metrics, and removes them once deleted", func(ctx SpecContext) {
		e := newEcho("ec", withNamespace(newNamespace(ctx)))
		create(ctx, e)
		Eventually(conditionSeries(e)).Should(Equal(testenv.WantConditionSeries(map[string]string{
			"Complete": "false", "Failed": "false", "Degraded": "false",
		})))

		By("the 1 moves to the new status of a condition")
		setJobStatus(ctx, e, withSucceeded())
		Eventually(conditionSeries(e)).Should(Equal(testenv.WantConditionSeries(map[string]string{
			"Complete": "true", "Failed": "false", "Degraded": "false",
		})))

		Expect(k8s.Delete(ctx, e)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(e), &echov1alpha1.Echo{}))
		}).Should(BeTrue())
		Eventually(conditionSeries(e)).Should(BeEmpty())
	})

	Describe("admission", func() {
		var ns string
		BeforeAll(func(ctx SpecContext) { ns = newNamespace(ctx) })

		It("rejects an empty message", func(ctx SpecContext) {
			err := k8s.Create(ctx, newEcho("empty", withNamespace(ns), withMessage("")))
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "expected Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring("spec.message in body should be at least 1 chars long"))
		})

		It("rejects a changed message", func(ctx SpecContext) {
			e := newEcho("immutable", withNamespace(ns))
			Expect(k8s.Create(ctx, e)).To(Succeed())
			patch := client.MergeFrom(e.DeepCopy())
			e.Spec.Message = "something else"
			err := k8s.Patch(ctx, e, patch)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "expected Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring("message is immutable: create a new Echo to print another message"))
		})
	})
})
