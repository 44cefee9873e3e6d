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

package scheduledecho

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
	"github.com/seed1b407122/database-operator/controllers/echo"
	"github.com/seed1b407122/database-operator/controllers/internal/testenv"
)

// testImage is the image the operator under test is configured with.
const testImage = "registry.example/tools/busybox:1.36"

// The envtest specs run the controller in a manager against a real kube-apiserver and etcd.
// envtest runs no other controller: no CronJob ever starts a Job, and the specs play the CronJob
// controller by writing the CronJob's status themselves.
var _ = Describe("ScheduledEcho controller", Ordered, Label("integration"), func() {
	var (
		env *testenv.Env
		k8s client.Client
	)

	env = testenv.StartInBeforeAll(setupController)
	BeforeAll(func() { k8s = env.Client })

	// newNamespace creates a namespace of its own for one spec.
	newNamespace := func(ctx SpecContext) string {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "sec-"}}
		Expect(k8s.Create(ctx, ns)).To(Succeed())
		return ns.Name
	}
	cronJobKey := func(s *echov1alpha1.ScheduledEcho) client.ObjectKey {
		return client.ObjectKey{Namespace: s.Namespace, Name: s.CronJobName()}
	}
	// create stores a ScheduledEcho and waits until the operator created its CronJob.
	create := func(ctx SpecContext, s *echov1alpha1.ScheduledEcho) *batchv1.CronJob {
		Expect(k8s.Create(ctx, s)).To(Succeed())
		cj := &batchv1.CronJob{}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, cronJobKey(s), cj)).To(Succeed())
		}).Should(Succeed())
		return cj
	}
	// update changes the spec of a ScheduledEcho with a merge patch.
	update := func(ctx SpecContext, s *echov1alpha1.ScheduledEcho, change func(*echov1alpha1.ScheduledEcho)) {
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		patch := client.MergeFrom(s.DeepCopy())
		change(s)
		Expect(k8s.Patch(ctx, s, patch)).To(Succeed())
	}
	cronJob := func(ctx SpecContext, s *echov1alpha1.ScheduledEcho) func(g Gomega) *batchv1.CronJob {
		return func(g Gomega) *batchv1.CronJob {
			cj := &batchv1.CronJob{}
			g.Expect(k8s.Get(ctx, cronJobKey(s), cj)).To(Succeed())
			return cj
		}
	}
	current := func(ctx SpecContext, s *echov1alpha1.ScheduledEcho) func(g Gomega) *echov1alpha1.ScheduledEcho {
		return func(g Gomega) *echov1alpha1.ScheduledEcho {
			got := &echov1alpha1.ScheduledEcho{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), got)).To(Succeed())
			return got
		}
	}
	condition := func(ctx SpecContext, s *echov1alpha1.ScheduledEcho, conditionType string) func(g Gomega) []string {
		return func(g Gomega) []string {
			got := current(ctx, s)(g)
			c := meta.FindStatusCondition(got.Status.Conditions, conditionType)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.ObservedGeneration).To(Equal(got.Generation))
			return []string{string(c.Status), c.Reason, c.Message}
		}
	}
	// events lists the events about s as "Type Reason: note".
	events := func(ctx SpecContext, s *echov1alpha1.ScheduledEcho) func(g Gomega) []string {
		return func(g Gomega) []string {
			var list eventsv1.EventList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(s.Namespace))).To(Succeed())
			var out []string
			for _, e := range list.Items {
				if e.Regarding.Name == s.Name && e.Regarding.Kind == "ScheduledEcho" {
					out = append(out, e.Type+" "+e.Reason+": "+e.Note)
				}
			}
			return out
		}
	}
	// conditionSeries reads the condition series of s from the manager's metrics registry.
	conditionSeries := func(s *echov1alpha1.ScheduledEcho) func(g Gomega) map[string]float64 {
		return func(g Gomega) map[string]float64 {
			series, err := testenv.ConditionSeries("ScheduledEcho", s.Namespace, s.Name)
			g.Expect(err).NotTo(HaveOccurred())
			return series
		}
	}
	// quiet checks that the controller stopped writing the ScheduledEcho: no retry loop.
	quiet := func(ctx SpecContext, s *echov1alpha1.ScheduledEcho) {
		version := current(ctx, s)(Default).ResourceVersion
		Consistently(func(g Gomega) string { return current(ctx, s)(g).ResourceVersion }, 2*time.Second).
			Should(Equal(version))
	}

	It("creates the exact CronJob, owner-referenced, and reports it Ready", func(ctx SpecContext) {
		s := newScheduledEcho("se", withNamespace(newNamespace(ctx)))
		cj := create(ctx, s)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())

		selector := map[string]string{"app.kubernetes.io/name": "scheduledecho", "app.kubernetes.io/instance": "se"}
		Expect(cj.OwnerReferences).To(Equal([]metav1.OwnerReference{{
			APIVersion: "echo.seed1b407122.io/v1alpha1", Kind: "ScheduledEcho", Name: "se", UID: s.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}))
		Expect(cj.Labels).To(Equal(map[string]string{
			"app.kubernetes.io/name": "scheduledecho", "app.kubernetes.io/instance": "se",
			"app.kubernetes.io/managed-by": "database-operator",
		}))
		Expect(cj.Spec.Schedule).To(Equal("*/5 * * * *"))
		Expect(cj.Spec.Suspend).To(Equal(ptr.To(false)))
		Expect(cj.Spec.ConcurrencyPolicy).To(Equal(batchv1.ForbidConcurrent))
		Expect(cj.Spec.SuccessfulJobsHistoryLimit).To(Equal(ptr.To[int32](3)))
		Expect(cj.Spec.FailedJobsHistoryLimit).To(Equal(ptr.To[int32](1)))
		Expect(cj.Spec.JobTemplate.Labels).To(Equal(selector))
		want := echo.BuildJobSpec("hello", testImage, selector)
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

		Eventually(condition(ctx, s, "Ready")).Should(Equal([]string{"True", "CronJobSynced", `CronJob se-echo runs on schedule "*/5 * * * *"`}))
		Eventually(condition(ctx, s, "Suspended")).Should(Equal([]string{"False", "Active", "new runs start on schedule"}))
		got := current(ctx, s)(Default)
		Expect(got.Status.CronJobName).To(Equal("se-echo"))
		Expect(got.Status.ObservedGeneration).To(Equal(int64(1)))
		Expect(got.Status.LastScheduleTime).To(BeNil())
		Eventually(events(ctx, s)).Should(ConsistOf(`Normal Created: Created CronJob se-echo on schedule "*/5 * * * *"`))
		quiet(ctx, s)
		Expect(events(ctx, s)(Default)).To(HaveLen(1), "nothing else happened")
	})

	It("applies changes of message, schedule and suspend to the CronJob", func(ctx SpecContext) {
		s := newScheduledEcho("se", withNamespace(newNamespace(ctx)))
		create(ctx, s)
		update(ctx, s, func(s *echov1alpha1.ScheduledEcho) {
			s.Spec.Message = "good morning"
			s.Spec.Schedule = "0 8 * * 1-5"
		})
		Eventually(func(g Gomega) {
			cj := cronJob(ctx, s)(g)
			g.Expect(cj.Spec.Schedule).To(Equal("0 8 * * 1-5"))
			g.Expect(cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env).To(Equal(
				[]corev1.EnvVar{{Name: "MESSAGE", Value: "good morning"}}))
		}).Should(Succeed())
		Eventually(condition(ctx, s, "Ready")).Should(Equal([]string{"True", "CronJobSynced", `CronJob se-echo runs on schedule "0 8 * * 1-5"`}))

		update(ctx, s, func(s *echov1alpha1.ScheduledEcho) { s.Spec.Suspend = true })
		Eventually(func(g Gomega) *bool { return cronJob(ctx, s)(g).Spec.Suspend }).Should(Equal(ptr.To(true)))
		Eventually(condition(ctx, s, "Suspended")).Should(Equal([]string{"True", "SuspendedByUser", "spec.suspend is true: no new run starts"}))
		Eventually(events(ctx, s)).Should(ContainElements(
			`Normal Updated: Updated CronJob se-echo: schedule "0 8 * * 1-5", suspend false`,
			`Normal Updated: Updated CronJob se-echo: schedule "0 8 * * 1-5", suspend true`))
	})

	It("reports the last schedule time of the CronJob", func(ctx SpecContext) {
		s := newScheduledEcho("se", withNamespace(newNamespace(ctx)))
		create(ctx, s)
		Eventually(func(g Gomega) {
			cj := cronJob(ctx, s)(g)
			cj.Status.LastScheduleTime = &lastSchedule
			g.Expect(k8s.Status().Update(ctx, cj)).To(Succeed())
		}).Should(Succeed())
		Eventually(func(g Gomega) *metav1.Time { return current(ctx, s)(g).Status.LastScheduleTime }).
			Should(Satisfy(func(t *metav1.Time) bool { return t.Equal(&lastSchedule) }))
	})

	It("puts back a hand-edited CronJob", func(ctx SpecContext) {
		s := newScheduledEcho("se", withNamespace(newNamespace(ctx)))
		cj := create(ctx, s)
		patch := client.MergeFrom(cj.DeepCopy())
		cj.Spec.Schedule = "* * * * *"
		cj.Spec.ConcurrencyPolicy = batchv1.AllowConcurrent
		Expect(k8s.Patch(ctx, cj, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			cj := cronJob(ctx, s)(g)
			g.Expect(cj.Spec.Schedule).To(Equal("*/5 * * * *"))
			g.Expect(cj.Spec.ConcurrencyPolicy).To(Equal(batchv1.ForbidConcurrent))
		}).Should(Succeed())
	})

	It("reports a schedule the CronJob API rejects, writes no CronJob, and does not retry", func(ctx SpecContext) {
		// "99 * * * *" has five fields: the CRD's rule lets it through.
		s := newScheduledEcho("se", withNamespace(newNamespace(ctx)), withSchedule("99 * * * *"))
		Expect(k8s.Create(ctx, s)).To(Succeed())
		message := `invalid schedule "99 * * * *": end of range (99) above maximum (59): 99`
		Eventually(condition(ctx, s, "Ready")).Should(Equal([]string{"False", "InvalidSchedule", message}))
		Expect(apierrors.IsNotFound(k8s.Get(ctx, cronJobKey(s), &batchv1.CronJob{}))).To(BeTrue())
		Eventually(events(ctx, s)).Should(ConsistOf("Warning InvalidSchedule: " + message))
		quiet(ctx, s)

		By("the manager is still running: a valid schedule creates the CronJob")
		update(ctx, s, func(s *echov1alpha1.ScheduledEcho) { s.Spec.Schedule = "59 * * * *" })
		Eventually(func(g Gomega) string { return cronJob(ctx, s)(g).Spec.Schedule }).Should(Equal("59 * * * *"))
		Eventually(condition(ctx, s, "Ready")).Should(HaveExactElements("True", "CronJobSynced", ContainSubstring("59 * * * *")))
	})

	It("keeps the last valid schedule when the schedule becomes invalid", func(ctx SpecContext) {
		s := newScheduledEcho("se", withNamespace(newNamespace(ctx)))
		create(ctx, s)
		update(ctx, s, func(s *echov1alpha1.ScheduledEcho) {
			s.Spec.Schedule = "0 0 31 2 9"
			s.Spec.Suspend = true
		})
		Eventually(condition(ctx, s, "Ready")).Should(HaveExactElements("False", "InvalidSchedule",
			`invalid schedule "0 0 31 2 9": end of range (9) above maximum (6): 9`))
		Eventually(condition(ctx, s, "Suspended")).Should(Equal([]string{"False", "Active", "new runs start on schedule"}),
			"the CronJob still runs on its last valid schedule")
		Consistently(func(g Gomega) string { return cronJob(ctx, s)(g).Spec.Schedule }, time.Second).Should(Equal("*/5 * * * *"))
	})

	It("reports the API server's verdict on a schedule the parser accepts", func(ctx SpecContext) {
		// Five fields for the CRD's rule (a tab is not a separator for it), a valid schedule for
		// the cron parser, but the CronJob API wants the time zone in spec.timeZone.
		s := newScheduledEcho("se", withNamespace(newNamespace(ctx)), withSchedule("CRON_TZ=UTC 0 * * *\t*"))
		Expect(k8s.Create(ctx, s)).To(Succeed())
		Eventually(condition(ctx, s, "Ready")).Should(HaveExactElements("False", "InvalidSchedule",
			And(HavePrefix("creating CronJob"), HaveSuffix("cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))))
		Eventually(events(ctx, s)).Should(ConsistOf(HavePrefix("Warning InvalidSchedule: creating CronJob")))
		quiet(ctx, s)
	})

	It("refuses at admission a name too long for its CronJob, and accepts the longest that fits", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		err := k8s.Create(ctx, newScheduledEcho(strings.Repeat("s", 48), withNamespace(ns)))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "expected Invalid, got %v", err)
		Expect(err.Error()).To(ContainSubstring("name must be at most 47 characters: the CronJob is named NAME-echo and CronJob names are limited to 52"))
		s := newScheduledEcho(strings.Repeat("s", 47), withNamespace(ns))
		Expect(k8s.Create(ctx, s)).To(Succeed())
		Eventually(condition(ctx, s, "Ready")).Should(HaveExactElements("True", "CronJobSynced", Not(BeEmpty())))
	})

	It("records its conditions in the operator's metrics, and removes them once deleted", func(ctx SpecContext) {
		s := newScheduledEcho("se", withNamespace(newNamespace(ctx)))
		create(ctx, s)
		Eventually(conditionSeries(s)).Should(Equal(testenv.WantConditionSeries(map[string]string{
			"Ready": "true", "Suspended": "false", "Degraded": "false",
		})))

		By("the 1 moves to the new status of a condition")
		update(ctx, s, func(s *echov1alpha1.ScheduledEcho) { s.Spec.Suspend = true })
		Eventually(conditionSeries(s)).Should(Equal(testenv.WantConditionSeries(map[string]string{
			"Ready": "true", "Suspended": "true", "Degraded": "false",
		})))

		Expect(k8s.Delete(ctx, s)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(s), &echov1alpha1.ScheduledEcho{}))
		}).Should(BeTrue())
		Eventually(conditionSeries(s)).Should(BeEmpty())
	})

	Describe("admission", func() {
		var ns string
		BeforeAll(func(ctx SpecContext) { ns = newNamespace(ctx) })

		DescribeTable("rejects a schedule without five fields",
			func(ctx SpecContext, schedule string) {
				err := k8s.Create(ctx, newScheduledEcho("bad", withNamespace(ns), withSchedule(schedule)))
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "expected Invalid, got %v", err)
				Expect(err.Error()).To(ContainSubstring("schedule must have five fields (minute hour day-of-month month day-of-week)"))
			},
			Entry("three fields", "* * *"),
			Entry("six fields", "0 * * * * *"),
			Entry("an unknown macro", "@often"),
		)
	})
})
