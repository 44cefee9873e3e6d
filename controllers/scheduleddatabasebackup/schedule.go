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

package scheduleddatabasebackup

import (
	"time"

	"github.com/robfig/cron/v3"
)

// plan is what the clock says about a schedule at one moment.
type plan struct {
	// due is the scheduled minute of the run to start now; zero when none is due.
	due time.Time
	// missed is the most recent scheduled minute that passed its starting deadline unstarted;
	// zero when none did. It is skipped, as a CronJob skips it.
	missed time.Time
	// next is the next scheduled minute after now.
	next time.Time
}

// planRuns reads sched at now. Runs are counted from last, the scheduled minute of the last run
// started (or the schedule's creation when none ran). Of the minutes that passed since, only the
// most recent can start, and only within deadline of its minute: at most one missed run is
// caught up, and one missed by more than deadline (the operator was down) is skipped. Only the
// minutes within deadline of now are visited, so a long outage costs no loop.
func planRuns(sched cron.Schedule, last, now time.Time, deadline time.Duration) plan {
	// The schedule is read in UTC: the parser matches fields in the zone of the time it is given,
	// and the operator's local zone (or the one a status time was decoded in) is no part of it.
	last, now = last.UTC(), now.UTC()
	p := plan{next: sched.Next(now)}
	from := last
	if earliest := now.Add(-deadline); from.Before(earliest) {
		// Whether a run was missed before the window: the first minute after last, if any.
		if first := sched.Next(last); !first.After(earliest) {
			p.missed = first
		}
		from = earliest.Add(-time.Nanosecond)
	}
	for t := sched.Next(from); !t.IsZero() && !t.After(now); t = sched.Next(t) {
		p.due = t
	}
	if !p.due.IsZero() {
		p.missed = time.Time{}
	}
	return p
}
