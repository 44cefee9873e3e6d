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
	"time"

	"github.com/robfig/cron/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// scheduleField is the field of a CronJob the API server names when it rejects a schedule.
const scheduleField = "spec.schedule"

// scheduleError says that a schedule is not one the CronJob API takes.
type scheduleError struct {
	schedule string
	err      error
}

func (e *scheduleError) Error() string {
	return fmt.Sprintf("invalid schedule %q: %s", e.schedule, e.err)
}

func (e *scheduleError) Unwrap() error { return e.err }

// errNeverFires says that a schedule matches no time at all. With both day fields set, cron
// fires when either matches, so only a day of the month that none of the months has can do this.
var errNeverFires = errors.New("it never fires: no month it names has a day of the month it names (e.g. 30 February)")

// errEmptyField says that a schedule never fires because a field names no value: the parser
// reads a field of commas only (e.g. "* , * * *") as matching nothing, and the CronJob API
// accepts it. Found by FuzzSchedule, which errNeverFires misexplained.
var errEmptyField = errors.New("it never fires: a field names no value (e.g. a lone ',')")

// fireCheckStart is where the search for a schedule's first run starts. robfig/cron's Next looks
// 5 years ahead and returns the zero time when nothing matches. Standard cron has no year field,
// so a schedule that fires at all fires within any 5 years that hold a 29 February (its rarest
// day): 2000 to 2004 do. A fixed start keeps the check a function of the schedule alone.
var fireCheckStart = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// checkSchedule parses schedule with the parser the API server validates CronJobs with
// (robfig/cron's standard parser), so that a schedule the CRD's rule lets through but the CronJob
// API would reject (e.g. "99 * * * *") is reported before anything is written. A schedule that
// parses but never fires (e.g. "0 0 30 2 *") is accepted by the CronJob API, and would leave a
// CronJob that never runs: it is reported too. CEL cannot tell such a schedule, so this check is
// the controller's. The parser can panic on some malformed input; that is an invalid schedule,
// never a crash.
func checkSchedule(schedule string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &scheduleError{schedule: schedule, err: fmt.Errorf("the cron parser failed: %v", p)}
		}
	}()
	parsed, err := cron.ParseStandard(schedule)
	if err != nil {
		return &scheduleError{schedule: schedule, err: err}
	}
	if parsed.Next(fireCheckStart).IsZero() {
		if hasEmptyField(parsed) {
			return &scheduleError{schedule: schedule, err: errEmptyField}
		}
		return &scheduleError{schedule: schedule, err: errNeverFires}
	}
	return nil
}

// hasEmptyField reports whether a field of a parsed schedule matches no value at all (the
// parser marks a field written as '*' or '?' with the top bit, which is not a value).
func hasEmptyField(s cron.Schedule) bool {
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return false
	}
	const starBit = 1 << 63
	for _, bits := range []uint64{spec.Minute, spec.Hour, spec.Dom, spec.Month, spec.Dow} {
		if bits&^starBit == 0 {
			return true
		}
	}
	return false
}

// isScheduleError reports whether err rejects the schedule: the parser's verdict, or the API
// server's when it names spec.schedule (it checks more than the parser, e.g. no CRON_TZ).
func isScheduleError(err error) bool {
	var se *scheduleError
	if errors.As(err, &se) {
		return true
	}
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Field == scheduleField {
			return true
		}
	}
	return false
}

// isTerminal reports whether err can never pass without a change of the spec: the schedule, or
// anything else the API server finds invalid in the CronJob (e.g. a name too long for one).
func isTerminal(err error) bool {
	return isScheduleError(err) || apierrors.IsInvalid(err)
}
