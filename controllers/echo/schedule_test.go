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
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	"github.com/robfig/cron/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		Entry("the API server's verdict on another field", fmt.Errorf("creating CronJob: %w", errCronJobTooLong), false, true),
		Entry("an error that may pass", errTransient, false, false),
		Entry("no error", nil, false, false),
	)
})

var _ = Describe("A schedule that never fires", Label("unit"), func() {
	// neverFires is the message of checkSchedule for such a schedule.
	neverFires := func(schedule string) string {
		return `invalid schedule "` + schedule + `": it never fires: no month it names has a day of the month it names (e.g. 30 February)`
	}

	DescribeTable("checkSchedule refuses it, and only it",
		func(schedule string, refused bool) {
			expectVerdict(schedule, refused, neverFires(schedule), errNeverFires)
		},
		Entry("30 February", "0 0 30 2 *", true),
		Entry("31 February", "0 0 31 2 *", true),
		Entry("31 April", "0 0 31 4 *", true),
		Entry("31 June, September and November", "0 0 31 6,9,11 *", true),
		Entry("30 or 31 February", "0 0 30,31 2 *", true),
		Entry("31 of a range of short months", "15 3 31 4-4 *", true),
		Entry("every minute of 30 February", "* * 30 2 *", true),
		Entry("in a time zone", "CRON_TZ=Europe/Paris 0 0 30 2 *", true),
		Entry("29 February: once every four years", "0 0 29 2 *", false),
		Entry("29 or 30 February", "0 0 29,30 2 *", false),
		Entry("31 February or April, or any Monday: either day field matches", "0 0 31 2,4 1", false),
		Entry("31 of every month that has one", "0 0 31 * *", false),
		Entry("31 April or May", "0 0 31 4,5 *", false),
		Entry("a macro", "@yearly", false),
	)

	// Found by FuzzSchedule: the parser reads a field of commas only as matching nothing.
	DescribeTable("checkSchedule says when a field names no value",
		func(schedule string, refused bool) {
			expectVerdict(schedule, refused, `invalid schedule "`+schedule+`": it never fires: a field names no value (e.g. a lone ',')`, errEmptyField)
		},
		Entry("the hour", "* , * * *", true),
		Entry("the hour, with a step of minutes", "*/2 , 1 1 0", true),
		Entry("the minute", ",, * * * *", true),
		Entry("the month", "0 0 * ,,, *", true),
		Entry("the day of the month, with any day of the week", "0 0 , 2 *", true),
		Entry("the day of the month, or Mondays: either day field matches", "0 0 , * 1", false),
	)

	It("searches from a start whose five years hold a 29 February", func() {
		parsed, err := cron.ParseStandard("0 0 29 2 *")
		Expect(err).NotTo(HaveOccurred())
		Expect(parsed.Next(fireCheckStart)).To(Equal(time.Date(2000, time.February, 29, 0, 0, 0, 0, time.UTC)))
	})

	It("is reported as InvalidSchedule, saying why", func() {
		var conditions []metav1.Condition
		setReadyCondition(&conditions, newScheduledEcho("se", withSchedule("0 0 30 2 *")), checkSchedule("0 0 30 2 *"))
		Expect(conditionOf(conditions, "Ready")).To(Equal([]string{"Ready", "False", "InvalidSchedule", neverFires("0 0 30 2 *")}))
	})
})

// expectVerdict checks that checkSchedule lets schedule through or, when refused, refuses it for
// good with message and the sentinel error that names the reason.
func expectVerdict(schedule string, refused bool, message string, sentinel error) {
	GinkgoHelper()
	err := checkSchedule(schedule)
	if !refused {
		Expect(err).NotTo(HaveOccurred())
		return
	}
	Expect(err).To(MatchError(message))
	Expect(err).To(MatchError(sentinel))
	Expect(isScheduleError(err)).To(BeTrue())
	Expect(isTerminal(err)).To(BeTrue())
}
