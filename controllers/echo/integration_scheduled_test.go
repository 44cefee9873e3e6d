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

// The envtest specs of ScheduledEchos run their controller alone in a manager against a real
// kube-apiserver and etcd. envtest runs no other controller: no CronJob ever starts a Job, and the
// specs play the CronJob controller by writing the CronJob's status themselves.
var _ = Describe("ScheduledEcho controller", Ordered, Label("integration"), func() {
	k8s := startWith((*Reconciler).SetupScheduledEchoWithManager)
	scheduledEchoes := testenv.Kind[*echov1alpha1.ScheduledEcho, *batchv1.CronJob]{
		Env: k8s, Name: "ScheduledEcho", ChildName: (*echov1alpha1.ScheduledEcho).CronJobName,
	}

	It("creates the exact CronJob, owner-referenced, and reports it Ready", func(ctx SpecContext) {
		s := newScheduledEcho("se", withScheduledEchoNamespace(k8s.Namespace(ctx, "sec-")))
		cj := scheduledEchoes.Create(ctx, s)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())

		parent := testenv.Parent{APIVersion: "echo.seed1b407122.io/v1alpha1", Kind: "ScheduledEcho", App: "scheduledecho", Name: "se", UID: s.UID}
		selector := parent.Selector()
		Expect(cj.OwnerReferences).To(Equal(parent.OwnerReferences()))
		Expect(cj.Labels).To(Equal(parent.Labels()))
		Expect(cj.Spec.Schedule).To(Equal("*/5 * * * *"))
		Expect(cj.Spec.Suspend).To(Equal(ptr.To(false)))
		Expect(cj.Spec.ConcurrencyPolicy).To(Equal(batchv1.ForbidConcurrent))
		Expect(cj.Spec.SuccessfulJobsHistoryLimit).To(Equal(ptr.To[int32](3)))
		Expect(cj.Spec.FailedJobsHistoryLimit).To(Equal(ptr.To[int32](1)))
		Expect(cj.Spec.JobTemplate.Labels).To(Equal(selector))
		want := buildJobSpec("hello", testImage, selector)
		job := cj.Spec.JobTemplate.Spec
		Expect(job.BackoffLimit).To(Equal(want.BackoffLimit))
		Expect(job.ActiveDeadlineSeconds).To(Equal(want.ActiveDeadlineSeconds))
		Expect(job.Template.Labels).To(Equal(selector))
		Expect(job.Template.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
		Expect(job.Template.Spec.SecurityContext).To(Equal(want.Template.Spec.SecurityContext))
		Expect(job.Template.Spec.Containers).To(HaveLen(1))
		c := job.Template.Spec.Containers[0]
		Expect(c.Image).To(Equal(testImage))
		Expect(c.Command).To(Equal([]string{"/bin/sh", "-c", `printf '%s\n' "$MESSAGE"`}))
		Expect(c.Env).To(Equal([]corev1.EnvVar{{Name: "MESSAGE", Value: "hello"}}))
		Expect(c.SecurityContext).To(Equal(want.Template.Spec.Containers[0].SecurityContext))

		Eventually(k8s.Condition(ctx, s, "Ready")).Should(Equal([]string{"True", "CronJobSynced", `CronJob se-echo runs on schedule "*/5 * * * *"`}))
		Eventually(k8s.Condition(ctx, s, "Suspended")).Should(Equal([]string{"False", "Active", "new runs start on schedule"}))
		got := scheduledEchoes.Current(ctx, s)(Default)
		Expect(got.Status.CronJobName).To(Equal("se-echo"))
		Expect(got.Status.ObservedGeneration).To(Equal(int64(1)))
		Expect(got.Status.LastScheduleTime).To(BeNil())
		Eventually(scheduledEchoes.Events(ctx, s)).Should(ConsistOf(`Normal Created: Created CronJob se-echo on schedule "*/5 * * * *"`))
		k8s.ExpectQuiet(ctx, s)
		Expect(scheduledEchoes.Events(ctx, s)(Default)).To(HaveLen(1), "nothing else happened")
	})

	It("applies changes of message, schedule and suspend to the CronJob", func(ctx SpecContext) {
		s := newScheduledEcho("se", withScheduledEchoNamespace(k8s.Namespace(ctx, "sec-")))
		scheduledEchoes.Create(ctx, s)
		scheduledEchoes.Update(ctx, s, func(s *echov1alpha1.ScheduledEcho) {
			s.Spec.Message = "good morning"
			s.Spec.Schedule = "0 8 * * 1-5"
		})
		Eventually(func(g Gomega) {
			cj := scheduledEchoes.Child(ctx, s)(g)
			g.Expect(cj.Spec.Schedule).To(Equal("0 8 * * 1-5"))
			g.Expect(cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env).To(Equal(
				[]corev1.EnvVar{{Name: "MESSAGE", Value: "good morning"}}))
		}).Should(Succeed())
		Eventually(k8s.Condition(ctx, s, "Ready")).Should(Equal([]string{"True", "CronJobSynced", `CronJob se-echo runs on schedule "0 8 * * 1-5"`}))

		scheduledEchoes.Update(ctx, s, func(s *echov1alpha1.ScheduledEcho) { s.Spec.Suspend = true })
		Eventually(func(g Gomega) *bool { return scheduledEchoes.Child(ctx, s)(g).Spec.Suspend }).Should(Equal(ptr.To(true)))
		Eventually(k8s.Condition(ctx, s, "Suspended")).Should(Equal([]string{"True", "SuspendedByUser", "spec.suspend is true: no new run starts"}))
		Eventually(scheduledEchoes.Events(ctx, s)).Should(ContainElements(
			`Normal Updated: Updated CronJob se-echo: schedule "0 8 * * 1-5", suspend false`,
			`Normal Updated: Updated CronJob se-echo: schedule "0 8 * * 1-5", suspend true`))
	})

	It("reports the last schedule time of the CronJob", func(ctx SpecContext) {
		s := newScheduledEcho("se", withScheduledEchoNamespace(k8s.Namespace(ctx, "sec-")))
		scheduledEchoes.Create(ctx, s)
		Eventually(func(g Gomega) {
			cj := scheduledEchoes.Child(ctx, s)(g)
			cj.Status.LastScheduleTime = &lastSchedule
			g.Expect(k8s.Status().Update(ctx, cj)).To(Succeed())
		}).Should(Succeed())
		Eventually(func(g Gomega) *metav1.Time { return scheduledEchoes.Current(ctx, s)(g).Status.LastScheduleTime }).
			Should(Satisfy(func(t *metav1.Time) bool { return t.Equal(&lastSchedule) }))
	})

	It("puts back a hand-edited CronJob", func(ctx SpecContext) {
		s := newScheduledEcho("se", withScheduledEchoNamespace(k8s.Namespace(ctx, "sec-")))
		cj := scheduledEchoes.Create(ctx, s)
		patch := client.MergeFrom(cj.DeepCopy())
		cj.Spec.Schedule = "* * * * *"
		cj.Spec.ConcurrencyPolicy = batchv1.AllowConcurrent
		Expect(k8s.Patch(ctx, cj, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			cj := scheduledEchoes.Child(ctx, s)(g)
			g.Expect(cj.Spec.Schedule).To(Equal("*/5 * * * *"))
			g.Expect(cj.Spec.ConcurrencyPolicy).To(Equal(batchv1.ForbidConcurrent))
		}).Should(Succeed())
	})

	It("reports a schedule the CronJob API rejects, writes no CronJob, and does not retry", func(ctx SpecContext) {
		// "99 * * * *" has five fields: the CRD's rule lets it through.
		s := newScheduledEcho("se", withScheduledEchoNamespace(k8s.Namespace(ctx, "sec-")), withSchedule("99 * * * *"))
		Expect(k8s.Create(ctx, s)).To(Succeed())
		message := `invalid schedule "99 * * * *": end of range (99) above maximum (59): 99`
		Eventually(k8s.Condition(ctx, s, "Ready")).Should(Equal([]string{"False", "InvalidSchedule", message}))
		Expect(apierrors.IsNotFound(k8s.Get(ctx, scheduledEchoes.ChildKey(s), &batchv1.CronJob{}))).To(BeTrue())
		Eventually(scheduledEchoes.Events(ctx, s)).Should(ConsistOf("Warning InvalidSchedule: " + message))
		k8s.ExpectQuiet(ctx, s)

		By("the manager is still running: a valid schedule creates the CronJob")
		scheduledEchoes.Update(ctx, s, func(s *echov1alpha1.ScheduledEcho) { s.Spec.Schedule = "59 * * * *" })
		Eventually(func(g Gomega) string { return scheduledEchoes.Child(ctx, s)(g).Spec.Schedule }).Should(Equal("59 * * * *"))
		Eventually(k8s.Condition(ctx, s, "Ready")).Should(HaveExactElements("True", "CronJobSynced", ContainSubstring("59 * * * *")))
	})

	It("keeps the last valid schedule when the schedule becomes invalid", func(ctx SpecContext) {
		s := newScheduledEcho("se", withScheduledEchoNamespace(k8s.Namespace(ctx, "sec-")))
		scheduledEchoes.Create(ctx, s)
		scheduledEchoes.Update(ctx, s, func(s *echov1alpha1.ScheduledEcho) {
			s.Spec.Schedule = "0 0 31 2 9"
			s.Spec.Suspend = true
		})
		Eventually(k8s.Condition(ctx, s, "Ready")).Should(HaveExactElements("False", "InvalidSchedule",
			`invalid schedule "0 0 31 2 9": end of range (9) above maximum (6): 9`))
		Eventually(k8s.Condition(ctx, s, "Suspended")).Should(Equal([]string{"False", "Active", "new runs start on schedule"}),
			"the CronJob still runs on its last valid schedule")
		Consistently(func(g Gomega) string { return scheduledEchoes.Child(ctx, s)(g).Spec.Schedule }, time.Second).Should(Equal("*/5 * * * *"))
	})

	It("reports the API server's verdict on a schedule the parser accepts", func(ctx SpecContext) {
		// Five fields for the CRD's rule (a tab is not a separator for it), a valid schedule for
		// the cron parser, but the CronJob API wants the time zone in spec.timeZone.
		s := newScheduledEcho("se", withScheduledEchoNamespace(k8s.Namespace(ctx, "sec-")), withSchedule("CRON_TZ=UTC 0 * * *\t*"))
		Expect(k8s.Create(ctx, s)).To(Succeed())
		Eventually(k8s.Condition(ctx, s, "Ready")).Should(HaveExactElements("False", "InvalidSchedule",
			And(HavePrefix("creating CronJob"), HaveSuffix("cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))))
		Eventually(scheduledEchoes.Events(ctx, s)).Should(ConsistOf(HavePrefix("Warning InvalidSchedule: creating CronJob")))
		k8s.ExpectQuiet(ctx, s)
	})

	It("refuses at admission a name too long for its CronJob, and accepts the longest that fits", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "sec-")
		k8s.ExpectCreateRefused(ctx, newScheduledEcho(strings.Repeat("s", 48), withScheduledEchoNamespace(ns)), "name must be at most 47 characters: the CronJob is named NAME-echo and CronJob names are limited to 52")
		s := newScheduledEcho(strings.Repeat("s", 47), withScheduledEchoNamespace(ns))
		Expect(k8s.Create(ctx, s)).To(Succeed())
		Eventually(k8s.Condition(ctx, s, "Ready")).Should(HaveExactElements("True", "CronJobSynced", Not(BeEmpty())))
	})

	It("records its conditions in the operator's metrics, and removes them once deleted", func(ctx SpecContext) {
		s := newScheduledEcho("se", withScheduledEchoNamespace(k8s.Namespace(ctx, "sec-")))
		scheduledEchoes.Create(ctx, s)
		scheduledEchoes.ExpectConditionSeries(ctx, s,
			map[string]string{"Ready": "true", "Suspended": "false", "Degraded": "false"},
			func() { scheduledEchoes.Update(ctx, s, func(s *echov1alpha1.ScheduledEcho) { s.Spec.Suspend = true }) },
			map[string]string{"Ready": "true", "Suspended": "true", "Degraded": "false"})
	})

	Describe("admission", func() {
		var ns string
		BeforeAll(func(ctx SpecContext) { ns = k8s.Namespace(ctx, "sec-") })

		DescribeTable("rejects a schedule without five fields",
			func(ctx SpecContext, schedule string) {
				k8s.ExpectCreateRefused(ctx, newScheduledEcho("bad", withScheduledEchoNamespace(ns), withSchedule(schedule)), "schedule must have five fields (minute hour day-of-month month day-of-week)")
			},
			Entry("three fields", "* * *"),
			Entry("six fields", "0 * * * * *"),
			Entry("an unknown macro", "@often"),
		)
	})

	// The ownership rule for the CronJob: a CronJob of that name held by anything but the
	// ScheduledEcho is left exactly as it is and reported, never adopted.
	scheduledEchoes.OwnershipSpecs(func(ns string) *echov1alpha1.ScheduledEcho {
		return newScheduledEcho("se", withScheduledEchoNamespace(ns))
	}, &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", JobTemplate: batchv1.JobTemplateSpec{
		Spec: batchv1.JobSpec{Template: testenv.SomeonesPod("backup")},
	}}})
})
