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
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/testenv"
)

// conditionOf returns type, status, reason and message of one condition, for exact comparison.
var conditionOf = testenv.ConditionOf

var (
	errTZ        = invalid(field.NewPath("spec", "schedule"), "CRON_TZ=UTC 0 * * *", "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
	errTooLong   = invalid(field.NewPath("metadata", "name"), "x-echo", "must be no more than 52 characters")
	errTransient = errors.New("connection refused")
)

var _ = Describe("Schedule", Label("unit"), func() {
	DescribeTable("checkSchedule accepts what the CronJob API accepts",
		func(schedule string, want types.GomegaMatcher) {
			err := checkSchedule(schedule)
			if want == nil {
				Expect(err).NotTo(HaveOccurred())
				return
			}
			Expect(err).To(MatchError(want))
			Expect(isScheduleError(err)).To(BeTrue())
		},
		Entry("every five minutes", "*/5 * * * *", nil),
		Entry("weekdays at midnight", "0 0 * * 1-5", nil),
		Entry("a macro", "@hourly", nil),
		Entry("minute 99", "99 * * * *", Equal(`invalid schedule "99 * * * *": end of range (99) above maximum (59): 99`)),
		Entry("month 13", "0 0 1 13 *", Equal(`invalid schedule "0 0 1 13 *": end of range (13) above maximum (12): 13`)),
		Entry("six fields", "0 * * * * *", Equal(`invalid schedule "0 * * * * *": expected exactly 5 fields, found 6: [0 * * * * *]`)),
		Entry("a time zone without a schedule makes the parser panic, not the operator", "TZ=UTC",
			HavePrefix(`invalid schedule "TZ=UTC": the cron parser failed: runtime error: slice bounds out of range`)),
	)

	DescribeTable("classifies errors",
		func(err error, schedule, terminal bool) {
			Expect(isScheduleError(err)).To(Equal(schedule))
			Expect(isTerminal(err)).To(Equal(terminal))
		},
		Entry("the parser's verdict", checkSchedule("99 * * * *"), true, true),
		Entry("the API server's verdict on the schedule", fmt.Errorf("creating CronJob: %w", errTZ), true, true),
		Entry("the API server's verdict on another field", fmt.Errorf("creating CronJob: %w", errTooLong), false, true),
		Entry("an error that may pass", errTransient, false, false),
		Entry("no error", nil, false, false),
	)
})

var _ = Describe("Status", Label("unit"), func() {
	DescribeTable("Ready",
		func(err error, want []string) {
			conditions := testenv.SetOn(func(c *[]metav1.Condition) { setReadyCondition(c, newScheduledEcho("se"), err) })
			Expect(conditionOf(conditions, "Ready")).To(Equal(want))
		},
		Entry("in sync", nil, []string{"Ready", "True", "CronJobSynced", `CronJob se-echo runs on schedule "*/5 * * * *"`}),
		Entry("schedule rejected by the parser", checkSchedule("99 * * * *"), []string{"Ready", "False", "InvalidSchedule",
			`invalid schedule "99 * * * *": end of range (99) above maximum (59): 99`}),
		Entry("schedule rejected by the API server", errTZ, []string{"Ready", "False", "InvalidSchedule", errTZ.Error()}),
		Entry("CronJob rejected by the API server", errTooLong, []string{"Ready", "False", "CronJobRejected", errTooLong.Error()}),
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

	Describe("computeStatus", func() {
		It("reports the CronJob and its last schedule", func() {
			cj := newCronJob(func(cj *batchv1.CronJob) { cj.Status.LastScheduleTime = &lastSchedule })
			status := computeStatus(newScheduledEcho("se"), observation{cronJob: cj})
			Expect(status.CronJobName).To(Equal("se-echo"))
			Expect(status.LastScheduleTime).To(Equal(&lastSchedule))
			Expect(status.ObservedGeneration).To(Equal(int64(1)))
			Expect(status.Conditions).To(HaveLen(3))
		})

		It("keeps what it knew when the CronJob cannot be read", func() {
			s := newScheduledEcho("se")
			s.Status.CronJobName, s.Status.LastScheduleTime = "se-echo", &lastSchedule
			status := computeStatus(s, observation{err: errTransient})
			Expect(status.CronJobName).To(Equal("se-echo"))
			Expect(status.LastScheduleTime).To(Equal(&lastSchedule))
			Expect(conditionOf(status.Conditions, "Ready")).To(Equal([]string{"Ready", "False", "SyncFailed", "connection refused"}))
		})
	})
})
