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

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/seed1b407122/database-operator/controllers/internal/cronschedule"
)

// scheduleField is the field of a CronJob the API server names when it rejects a schedule.
const scheduleField = "spec.schedule"

// The schedule check is the operator's one (cronschedule), shared with ScheduledDatabaseBackup;
// these names keep this package's specs and fuzz target reading as before.
type scheduleError = cronschedule.Error

var (
	errNeverFires  = cronschedule.ErrNeverFires
	errEmptyField  = cronschedule.ErrEmptyField
	fireCheckStart = cronschedule.FireCheckStart
	hasEmptyField  = cronschedule.HasEmptyField
)

// checkSchedule refuses a schedule the CronJob API would reject or that never fires.
func checkSchedule(schedule string) error { return cronschedule.Check(schedule) }

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
