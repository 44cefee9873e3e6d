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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

var _ = Describe("ScheduledEcho builders", Label("unit"), func() {
	selector := map[string]string{"app.kubernetes.io/name": "scheduledecho", "app.kubernetes.io/instance": "se"}

	Describe("BuildCronJob", func() {
		It("builds the whole CronJob, running the pod of an Echo", func() {
			Expect(BuildCronJob(newScheduledEcho("se"), "busybox:1.36")).To(Equal(&batchv1.CronJob{
				ObjectMeta: testenv.ParentOf(newScheduledEcho("se"), "scheduledecho").ChildMeta("se-echo"),
				Spec: batchv1.CronJobSpec{
					Schedule:                   "*/5 * * * *",
					Suspend:                    ptr.To(false),
					ConcurrencyPolicy:          batchv1.ForbidConcurrent,
					SuccessfulJobsHistoryLimit: ptr.To[int32](3),
					FailedJobsHistoryLimit:     ptr.To[int32](1),
					JobTemplate: batchv1.JobTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: selector},
						Spec:       buildJobSpec("hello", "busybox:1.36", selector),
					},
				},
			}))
		})

		DescribeTable("follows the spec",
			func(cj *batchv1.CronJob, check func(*batchv1.CronJob)) { check(cj) },
			Entry("schedule", BuildCronJob(newScheduledEcho("se", withSchedule("@hourly")), "busybox"), func(cj *batchv1.CronJob) {
				Expect(cj.Spec.Schedule).To(Equal("@hourly"))
			}),
			Entry("suspend", BuildCronJob(newScheduledEcho("se", withSuspend(true)), "busybox"), func(cj *batchv1.CronJob) {
				Expect(cj.Spec.Suspend).To(Equal(ptr.To(true)))
			}),
			Entry("message", BuildCronJob(newScheduledEcho("se", withScheduledEchoMessage("hi there")), "busybox"), func(cj *batchv1.CronJob) {
				Expect(cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env).To(Equal(
					[]corev1.EnvVar{{Name: "MESSAGE", Value: "hi there"}}))
			}),
			Entry("namespace and name", BuildCronJob(newScheduledEcho("nightly", withScheduledEchoNamespace("team-a")), "busybox"), func(cj *batchv1.CronJob) {
				Expect(cj.Namespace).To(Equal("team-a"))
				Expect(cj.Name).To(Equal("nightly-echo"))
			}),
		)

		It("carries the label the operator's cache selects CronJobs by, and its Jobs do not", func() {
			selector := testenv.CacheSelector(&batchv1.CronJob{})
			Expect(selector).NotTo(BeNil(), "the cache has no entry for CronJobs")
			cj := BuildCronJob(newScheduledEcho("se"), "busybox")
			Expect(selector.Matches(labels.Set(cj.Labels))).To(BeTrue())
			Expect(selector.Matches(labels.Set(cj.Spec.JobTemplate.Labels))).To(BeFalse(),
				"the CronJob controller owns the Jobs; the operator's cache need not hold them")
		})
	})

	DescribeTable("cronJobSpec",
		func(change func(*batchv1.CronJob), inSync bool) {
			desired, observed := newCronJob(func(*batchv1.CronJob) {}), newCronJob(change)
			Expect(cronJobSpec.InSync(desired, observed)).To(Equal(inSync))
			cronJobSpec.Merge(desired, observed)
			Expect(cronJobSpec.InSync(desired, observed)).To(BeTrue())
		},
		Entry("as built", func(*batchv1.CronJob) {}, true),
		Entry("as the API server defaults it", func(cj *batchv1.CronJob) {
			pod := &cj.Spec.JobTemplate.Spec.Template.Spec
			pod.DNSPolicy, pod.SchedulerName = corev1.DNSClusterFirst, "default-scheduler"
			pod.Containers[0].TerminationMessagePath = "/dev/termination-log"
			pod.Containers[0].ImagePullPolicy = corev1.PullAlways
			cj.Spec.JobTemplate.Spec.Completions = ptr.To[int32](1)
		}, true),
		Entry("schedule", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "0 * * * *" }, false),
		Entry("suspend", func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }, false),
		Entry("concurrency policy", func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = batchv1.AllowConcurrent }, false),
		Entry("history limit", func(cj *batchv1.CronJob) { cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](10) }, false),
		Entry("message", func(cj *batchv1.CronJob) {
			cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env[0].Value = "other"
		}, false),
		Entry("an environment variable added by hand", func(cj *batchv1.CronJob) {
			c := &cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
			c.Env = append(c.Env, corev1.EnvVar{Name: "X", Value: "y"})
		}, false),
		Entry("a container added by hand", func(cj *batchv1.CronJob) {
			pod := &cj.Spec.JobTemplate.Spec.Template.Spec
			pod.Containers = append(pod.Containers, corev1.Container{Name: "x", Image: "x"})
		}, false),
		Entry("a pod label added by hand", func(cj *batchv1.CronJob) {
			cj.Spec.JobTemplate.Spec.Template.Labels["x"] = "y"
		}, false),
	)

	DescribeTable("cronJobChanged lets through only what the operator reads",
		func(change func(*batchv1.CronJob), want bool) {
			before := newCronJob(func(*batchv1.CronJob) {})
			after := before.DeepCopy()
			change(after)
			Expect(cronJobChanged().Update(event.UpdateEvent{ObjectOld: before, ObjectNew: after})).To(Equal(want))
		},
		Entry("nothing", func(*batchv1.CronJob) {}, false),
		Entry("a Job became active", func(cj *batchv1.CronJob) {
			cj.Status.Active = []corev1.ObjectReference{{Name: "se-echo-1"}}
		}, false),
		Entry("a run was scheduled", func(cj *batchv1.CronJob) { cj.Status.LastScheduleTime = &lastSchedule }, true),
		Entry("a spec edit", func(cj *batchv1.CronJob) { cj.Generation++ }, true),
		Entry("a label removed", func(cj *batchv1.CronJob) { cj.Labels = nil }, true),
	)
})
