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

// Package cronschedule is the one cron parser and validation of the operator's scheduled Kinds
// (ScheduledEcho, ScheduledDatabaseBackup): robfig/cron's standard parser, the one the API server
// validates CronJobs with, plus the check that a schedule fires at all.
package cronschedule

import (
	"errors"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// Error says that a schedule is not one the CronJob API takes, or one that never fires.
type Error struct {
	Schedule string
	Err      error
}

func (e *Error) Error() string {
	return fmt.Sprintf("invalid schedule %q: %s", e.Schedule, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNeverFires says that a schedule matches no time at all. With both day fields set, cron
// fires when either matches, so only a day of the month that none of the months has can do this.
var ErrNeverFires = errors.New("it never fires: no month it names has a day of the month it names (e.g. 30 February)")

// ErrEmptyField says that a schedule never fires because a field names no value: the parser
// reads a field of commas only (e.g. "* , * * *") as matching nothing, and the CronJob API
// accepts it. Found by the FuzzSchedule of controllers/echo (ScheduledEchos), which
// ErrNeverFires misexplained.
var ErrEmptyField = errors.New("it never fires: a field names no value (e.g. a lone ',')")

// FireCheckStart is where the search for a schedule's first run starts. robfig/cron's Next looks
// 5 years ahead and returns the zero time when nothing matches. Standard cron has no year field,
// so a schedule that fires at all fires within any 5 years that hold a 29 February (its rarest
// day): 2000 to 2004 do. A fixed start keeps the check a function of the schedule alone.
var FireCheckStart = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// Parse parses schedule with the parser the API server validates CronJobs with (robfig/cron's
// standard parser), so that a schedule the CRD's rule lets through but the CronJob API would
// reject (e.g. "99 * * * *") is refused. A schedule that parses but never fires (e.g.
// "0 0 30 2 *") is accepted by the CronJob API and would never run: it is refused too. CEL cannot
// tell such a schedule, so this check is the controllers'. The parser can panic on some malformed
// input; that is an invalid schedule, never a crash. Every error is an *Error.
func Parse(schedule string) (s cron.Schedule, err error) {
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, &Error{Schedule: schedule, Err: fmt.Errorf("the cron parser failed: %v", p)}
		}
	}()
	parsed, err := cron.ParseStandard(schedule)
	if err != nil {
		return nil, &Error{Schedule: schedule, Err: err}
	}
	if parsed.Next(FireCheckStart).IsZero() {
		if HasEmptyField(parsed) {
			return nil, &Error{Schedule: schedule, Err: ErrEmptyField}
		}
		return nil, &Error{Schedule: schedule, Err: ErrNeverFires}
	}
	return parsed, nil
}

// Check is Parse for a caller that only needs the verdict.
func Check(schedule string) error {
	_, err := Parse(schedule)
	return err
}

// HasEmptyField reports whether a field of a parsed schedule matches no value at all (the
// parser marks a field written as '*' or '?' with the top bit, which is not a value).
func HasEmptyField(s cron.Schedule) bool {
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
