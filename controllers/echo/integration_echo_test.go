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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// The envtest specs of Echos run their controller alone in a manager against a real kube-apiserver
// and etcd. envtest runs no other controller: nothing runs Jobs, and the specs play the Job
// controller by writing the Job's status themselves.
var _ = Describe("Echo controller", Ordered, Label("integration"), func() {
	k8s := startWith((*Reconciler).SetupEchoWithManager)
	echoes := testenv.Kind[*echov1alpha1.Echo, *batchv1.Job]{Env: k8s, Name: "Echo", ChildName: (*echov1alpha1.Echo).JobName}

	// setJobStatus plays the Job controller: it writes the status that opts describe.
	setJobStatus := func(ctx SpecContext, e *echov1alpha1.Echo, opts ...jobOption) {
		Eventually(func(g Gomega) {
			job := &batchv1.Job{}
			g.Expect(k8s.Get(ctx, echoes.ChildKey(e), job)).To(Succeed())
			for _, opt := range opts {
				opt(job)
			}
			g.Expect(k8s.Status().Update(ctx, job)).To(Succeed())
		}).Should(Succeed())
	}
	status := func(ctx SpecContext, e *echov1alpha1.Echo) func(g Gomega) echov1alpha1.EchoStatus {
		return func(g Gomega) echov1alpha1.EchoStatus { return echoes.Current(ctx, e)(g).Status }
	}
	phase := func(ctx SpecContext, e *echov1alpha1.Echo) func(g Gomega) echov1alpha1.EchoPhase {
		return func(g Gomega) echov1alpha1.EchoPhase { return status(ctx, e)(g).Phase }
	}
	// deleteJob deletes the Job in the background, as kubectl does: the default for Jobs is to
	// orphan their pods, which leaves the Job behind with a finalizer no controller removes here.
	deleteJob := func(ctx SpecContext, job *batchv1.Job) {
		Expect(k8s.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	}

	It("creates the exact Job, owner-referenced, and reports it Pending", func(ctx SpecContext) {
		e := newEcho("ec", withEchoNamespace(k8s.Namespace(ctx, "echo-")), withEchoMessage("Hello, $USER! `id`"))
		job := echoes.Create(ctx, e)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(e), e)).To(Succeed())

		parent := testenv.Parent{APIVersion: "echo.seed1b407122.io/v1alpha1", Kind: "Echo", App: "echo", Name: "ec", UID: e.UID}
		Expect(job.OwnerReferences).To(Equal(parent.OwnerReferences()))
		Expect(job.Labels).To(Equal(parent.Labels()))
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
		Eventually(k8s.Condition(ctx, e, "Complete")).Should(Equal([]string{"False", "JobPending", "Job ec-echo has no pod running yet"}))
		Eventually(k8s.Condition(ctx, e, "Failed")).Should(Equal([]string{"False", "JobPending", "Job ec-echo has no pod running yet"}))
		Eventually(echoes.Events(ctx, e)).Should(ConsistOf("Normal Created: Created Job ec-echo"))
		Consistently(echoes.Events(ctx, e), 2*time.Second).Should(HaveLen(1), "nothing else happened")
	})

	It("follows the Job to Running and Succeeded, and tells it once", func(ctx SpecContext) {
		e := newEcho("ec", withEchoNamespace(k8s.Namespace(ctx, "echo-")))
		echoes.Create(ctx, e)
		setJobStatus(ctx, e, withActive(1))
		Eventually(phase(ctx, e)).Should(Equal(echov1alpha1.EchoRunning))
		Eventually(k8s.Condition(ctx, e, "Complete")).Should(Equal([]string{"False", "JobRunning", "Job ec-echo is running"}))
		Expect(status(ctx, e)(Default).StartTime.Equal(&t0)).To(BeTrue())

		setJobStatus(ctx, e, withSucceeded())
		Eventually(phase(ctx, e)).Should(Equal(echov1alpha1.EchoSucceeded))
		st := status(ctx, e)(Default)
		Expect(st.StartTime.Equal(&t0)).To(BeTrue())
		Expect(st.CompletionTime.Equal(&t1)).To(BeTrue())
		Eventually(k8s.Condition(ctx, e, "Complete")).Should(Equal([]string{"True", "JobSucceeded", "Job ec-echo printed the message"}))
		Eventually(k8s.Condition(ctx, e, "Failed")).Should(Equal([]string{"False", "JobSucceeded", "Job ec-echo printed the message"}))
		Eventually(echoes.Events(ctx, e)).Should(ConsistOf("Normal Created: Created Job ec-echo",
			"Normal Succeeded: Job ec-echo printed the message"))
		Consistently(echoes.Events(ctx, e), 2*time.Second).Should(HaveLen(2))
	})

	It("reports a failed Job", func(ctx SpecContext) {
		e := newEcho("ec", withEchoNamespace(k8s.Namespace(ctx, "echo-")))
		echoes.Create(ctx, e)
		setJobStatus(ctx, e, withFailed())
		Eventually(phase(ctx, e)).Should(Equal(echov1alpha1.EchoFailed))
		message := "Job ec-echo failed: BackoffLimitExceeded: Job has reached the specified backoff limit"
		Eventually(k8s.Condition(ctx, e, "Failed")).Should(Equal([]string{"True", "JobFailed", message}))
		Eventually(k8s.Condition(ctx, e, "Complete")).Should(Equal([]string{"False", "JobFailed", message}))
		Expect(status(ctx, e)(Default).CompletionTime.Equal(&t1)).To(BeTrue(), "the Failed condition tells when it ended")
		Eventually(echoes.Events(ctx, e)).Should(ContainElement("Warning Failed: " + message))
	})

	It("recreates the deleted Job of an Echo that has not finished", func(ctx SpecContext) {
		e := newEcho("ec", withEchoNamespace(k8s.Namespace(ctx, "echo-")))
		job := echoes.Create(ctx, e)
		setJobStatus(ctx, e, withActive(1))
		Eventually(phase(ctx, e)).Should(Equal(echov1alpha1.EchoRunning))
		deleteJob(ctx, job)
		Eventually(func(g Gomega) {
			recreated := &batchv1.Job{}
			g.Expect(k8s.Get(ctx, echoes.ChildKey(e), recreated)).To(Succeed())
			g.Expect(recreated.UID).NotTo(Equal(job.UID))
		}).Should(Succeed())
		Eventually(phase(ctx, e)).Should(Equal(echov1alpha1.EchoPending))
		Eventually(echoes.Events(ctx, e)).Should(Equal([]string{"Normal Created: Created Job ec-echo", "Normal Created: Created Job ec-echo"}),
			"one event per Job: each regards another Job")
	})

	It("never runs a finished Echo again, even when its Job is gone", func(ctx SpecContext) {
		e := newEcho("ec", withEchoNamespace(k8s.Namespace(ctx, "echo-")))
		job := echoes.Create(ctx, e)
		setJobStatus(ctx, e, withSucceeded())
		Eventually(phase(ctx, e)).Should(Equal(echov1alpha1.EchoSucceeded))
		before := status(ctx, e)(Default)

		By("the TTL controller deletes the finished Job")
		deleteJob(ctx, job)
		Consistently(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, echoes.ChildKey(e), &batchv1.Job{}))
		}, 3*time.Second).Should(BeTrue())
		Expect(status(ctx, e)(Default)).To(Equal(before))
	})

	It("keeps the Job's cleanup settings but never touches its pod template", func(ctx SpecContext) {
		e := newEcho("ec", withEchoNamespace(k8s.Namespace(ctx, "echo-")))
		job := echoes.Create(ctx, e)
		patch := client.MergeFrom(job.DeepCopy())
		job.Spec.TTLSecondsAfterFinished = ptr.To[int32](5)
		Expect(k8s.Patch(ctx, job, patch)).To(Succeed())
		Eventually(func(g Gomega) int32 {
			g.Expect(k8s.Get(ctx, echoes.ChildKey(e), job)).To(Succeed())
			return *job.Spec.TTLSecondsAfterFinished
		}).Should(Equal(int32(3600)))
	})

	It("refuses at admission a name too long for its Job, and accepts the longest that fits", func(ctx SpecContext) {
		// The Job is NAME-echo, and a Job's name becomes a label value of its pods (63 bytes).
		ns := k8s.Namespace(ctx, "echo-")
		k8s.ExpectCreateRefused(ctx, newEcho(strings.Repeat("e", 59), withEchoNamespace(ns)), "name must be at most 58 characters: the Job is named NAME-echo and Job names are limited to 63")
		e := newEcho(strings.Repeat("e", 58), withEchoNamespace(ns))
		Expect(k8s.Create(ctx, e)).To(Succeed())
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: e.JobName()}, &batchv1.Job{})
		}).Should(Succeed())
	})

	It("records its conditions in the operator's metrics, and removes them once deleted", func(ctx SpecContext) {
		e := newEcho("ec", withEchoNamespace(k8s.Namespace(ctx, "echo-")))
		echoes.Create(ctx, e)
		echoes.ExpectConditionSeries(ctx, e,
			map[string]string{"Complete": "false", "Failed": "false", "Degraded": "false"},
			func() { setJobStatus(ctx, e, withSucceeded()) },
			map[string]string{"Complete": "true", "Failed": "false", "Degraded": "false"})
	})

	Describe("admission", func() {
		var ns string
		BeforeAll(func(ctx SpecContext) { ns = k8s.Namespace(ctx, "echo-") })

		It("rejects an empty message", func(ctx SpecContext) {
			k8s.ExpectCreateRefused(ctx, newEcho("empty", withEchoNamespace(ns), withEchoMessage("")), "spec.message in body should be at least 1 chars long")
		})

		It("rejects a changed message", func(ctx SpecContext) {
			e := newEcho("immutable", withEchoNamespace(ns))
			Expect(k8s.Create(ctx, e)).To(Succeed())
			patch := client.MergeFrom(e.DeepCopy())
			e.Spec.Message = "something else"
			err := k8s.Patch(ctx, e, patch)
			testenv.ExpectInvalid(err, "message is immutable: create a new Echo to print another message")
		})
	})

	// The ownership rule for the Job: a Job of that name held by anything but the Echo is left
	// exactly as it is and reported, never adopted; the Echo runs once the name is free.
	echoes.OwnershipSpecs(func(ns string) *echov1alpha1.Echo { return newEcho("ec", withEchoNamespace(ns)) },
		&batchv1.Job{Spec: batchv1.JobSpec{Template: testenv.SomeonesPod("work")}})
})
