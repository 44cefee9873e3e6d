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
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
)

// horizonYears is how far robfig/cron's Next looks ahead, and so the horizon within which
// checkSchedule claims that a schedule it accepts fires.
const horizonYears = 5

// FuzzSchedule checks the schedule check of the controller against the CronJob controller's
// parser (robfig/cron/v3's standard parser, which Kubernetes uses):
//   - checkSchedule never panics, whatever the parser does;
//   - it accepts exactly the schedules the parser parses and that fire: a parse error is its
//     error, and a schedule it accepts parses;
//   - a schedule it accepts fires within the horizon it claims, from its fixed start and from
//     any start in 2000-2095 (where every 5 years hold a 29 February);
//   - a schedule it says has an empty field does not fire and has one;
//   - a schedule it says never fires matches no day of 2000-2003 (the 4 years hold every
//     day of every month, 29 February included), by the day rule of cron read from the
//     parsed fields, independent of the parser's Next.
func FuzzSchedule(f *testing.F) {
	f.Add("*/5 * * * *", int64(0))
	f.Fuzz(func(t *testing.T, schedule string, start int64) {
		err := checkSchedule(schedule)
		parsed, parseErr := parseStandard(schedule)
		var se *scheduleError
		if err != nil && !errors.As(err, &se) {
			t.Fatalf("checkSchedule(%q) = %v, not a schedule error", schedule, err)
		}
		switch {
		case parseErr != nil:
			if err == nil || errors.Is(err, errNeverFires) {
				t.Fatalf("checkSchedule(%q) = %v, but the parser refuses it: %v", schedule, err, parseErr)
			}
		case err == nil:
			next := parsed.Next(fireCheckStart)
			if next.IsZero() || next.After(fireCheckStart.AddDate(horizonYears, 0, 0)) {
				t.Fatalf("checkSchedule accepts %q, which does not fire within %d years of %s (next %s)", schedule, horizonYears, fireCheckStart, next)
			}
			from := fireCheckStart.Add(time.Duration(uint64(start)%uint64(95*365*24*time.Hour/time.Minute)) * time.Minute)
			if parsed.Next(from).IsZero() {
				t.Fatalf("checkSchedule accepts %q, which does not fire within %d years of %s", schedule, horizonYears, from)
			}
		case errors.Is(err, errNeverFires):
			if spec, ok := parsed.(*cron.SpecSchedule); ok && anyDayMatches(spec) {
				t.Fatalf("checkSchedule says %q never fires, but it matches a day of 2000-2003", schedule)
			}
			if _, ok := parsed.(*cron.SpecSchedule); !ok {
				t.Fatalf("checkSchedule says %q never fires, but it is a %T", schedule, parsed)
			}
		case errors.Is(err, errEmptyField):
			if !parsed.Next(fireCheckStart).IsZero() || !hasEmptyField(parsed) {
				t.Fatalf("checkSchedule says a field of %q names no value, but it fires or has none", schedule)
			}
		default:
			t.Fatalf("checkSchedule(%q) = %v, but the parser parses it and it is not a schedule that never fires", schedule, err)
		}
	})
}

// parseStandard is cron.ParseStandard with a panic turned into an error.
func parseStandard(schedule string) (s cron.Schedule, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the parser panicked: %v", p)
		}
	}()
	return cron.ParseStandard(schedule)
}

// anyDayMatches reports whether a day of 2000-2003 matches the day fields of spec, by cron's
// rule: when either day field is a star both must match, otherwise either may.
func anyDayMatches(spec *cron.SpecSchedule) bool {
	const starBit = 1 << 63
	for d := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 2004; d = d.AddDate(0, 0, 1) {
		if spec.Month&(1<<uint(d.Month())) == 0 {
			continue
		}
		dom := spec.Dom&(1<<uint(d.Day())) != 0
		dow := spec.Dow&(1<<uint(d.Weekday())) != 0
		if spec.Dom&starBit != 0 || spec.Dow&starBit != 0 {
			if dom && dow {
				return true
			}
		} else if dom || dow {
			return true
		}
	}
	return false
}
