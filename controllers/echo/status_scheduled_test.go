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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

var _ = Describe("ScheduledEcho status", Label("unit"), func() {
	DescribeTable("Ready",
		func(err error, want []string) {
			conditions := testenv.SetOn(func(c *[]metav1.Condition) { setReadyCondition(c, newScheduledEcho("se"), err) })
			Expect(conditionOf(conditions, "Ready")).To(Equal(want))
		},
		Entry("in sync", nil, []string{"Ready", "True", "CronJobSynced", `CronJob se-echo runs on schedule "*/5 * * * *"`}),
		Entry("schedule rejected by the parser", checkSchedule("99 * * * *"), []string{"Ready", "False", "InvalidSchedule",
			`invalid schedule "99 * * * *": end of range (99) above maximum (59): 99`}),
		Entry("schedule rejected by the API server", errTZ, []string{"Ready", "False", "InvalidSchedule", errTZ.Error()}),
		Entry("CronJob rejected by the API server", errCronJobTooLong, []string{"Ready", "False", "CronJobRejected", errCronJobTooLong.Error()}),
		Entry("a write that is retried", errTransient, []string{"Ready", "False", "SyncFailed", "connection refused"}),
	)

	DescribeTable("Suspended",
		func(s *echov1alpha1.ScheduledEcho, cj *batchv1.CronJob, want []string) {
			var conditions []metav1.Condition
			setSuspendedCondition(&conditions, s, cj)
			Expect(conditionOf(conditions, "Suspended")).To(Equal(want))
		},
		Entry("active", newScheduledEcho("se"), newCronJob(func(*batchv1.CronJob) {}),
			[]string{"Suspended", "False", "Active", "new runs start on schedule"}),
		Entry("suspended", newScheduledEcho("se", withSuspend(true)), newCronJob(func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }),
			[]string{"Suspended", "True", "SuspendedByUser", "spec.suspend is true: no new run starts"}),
		Entry("suspend asked but not applied (invalid schedule): the CronJob still runs", newScheduledEcho("se", withSuspend(true)),
			newCronJob(func(*batchv1.CronJob) {}), []string{"Suspended", "False", "Active", "new runs start on schedule"}),
		Entry("no CronJob: as the spec says", newScheduledEcho("se", withSuspend(true)), nil,
			[]string{"Suspended", "True", "SuspendedByUser", "spec.suspend is true: no new run starts"}),
	)

	Describe("scheduledEchoStatus", func() {
		It("reports the CronJob and its last schedule", func() {
			cj := newCronJob(func(cj *batchv1.CronJob) { cj.Status.LastScheduleTime = &lastSchedule })
			status := scheduledEchoStatus(newScheduledEcho("se"), cronJobObservation{cronJob: cj})
			Expect(status.CronJobName).To(Equal("se-echo"))
			Expect(status.LastScheduleTime).To(Equal(&lastSchedule))
			Expect(status.ObservedGeneration).To(Equal(int64(1)))
			Expect(status.Conditions).To(HaveLen(3))
		})

		It("keeps what it knew when the CronJob cannot be read", func() {
			s := newScheduledEcho("se")
			s.Status.CronJobName, s.Status.LastScheduleTime = "se-echo", &lastSchedule
			status := scheduledEchoStatus(s, cronJobObservation{err: errTransient})
			Expect(status.CronJobName).To(Equal("se-echo"))
			Expect(status.LastScheduleTime).To(Equal(&lastSchedule))
			Expect(conditionOf(status.Conditions, "Ready")).To(Equal([]string{"Ready", "False", "SyncFailed", "connection refused"}))
		})
	})
})
