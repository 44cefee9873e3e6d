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
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// scheduledEchoOption changes a test ScheduledEcho.
type scheduledEchoOption func(*echov1alpha1.ScheduledEcho)

// newScheduledEcho returns a valid ScheduledEcho that prints "hello" every five minutes,
// changed by the options.
func newScheduledEcho(name string, opts ...scheduledEchoOption) *echov1alpha1.ScheduledEcho {
	spec := echov1alpha1.ScheduledEchoSpec{Message: "hello", Schedule: "*/5 * * * *"}
	return testenv.Apply(&echov1alpha1.ScheduledEcho{ObjectMeta: testenv.Meta(name), Spec: spec}, opts...)
}

var withScheduledEchoNamespace = testenv.InNamespace[*echov1alpha1.ScheduledEcho]

func withScheduledEchoMessage(message string) scheduledEchoOption {
	return func(s *echov1alpha1.ScheduledEcho) { s.Spec.Message = message }
}

func withSchedule(schedule string) scheduledEchoOption {
	return func(s *echov1alpha1.ScheduledEcho) { s.Spec.Schedule = schedule }
}

func withSuspend(suspend bool) scheduledEchoOption {
	return func(s *echov1alpha1.ScheduledEcho) { s.Spec.Suspend = suspend }
}

// newCronJob returns the CronJob of newScheduledEcho("se"), changed by change.
func newCronJob(change func(*batchv1.CronJob)) *batchv1.CronJob {
	cj := BuildCronJob(newScheduledEcho("se"), "busybox")
	change(cj)
	return cj
}

// lastSchedule is a schedule time as the API server stores it, in whole seconds.
var lastSchedule = metav1.NewTime(time.Date(2026, 1, 2, 3, 5, 0, 0, time.UTC))

// invalidCronJob is the error the API server answers for a CronJob with an error in field.
func invalidCronJob(path *field.Path, value, detail string) error {
	return testenv.Invalid(schema.GroupKind{Group: "batch", Kind: "CronJob"}, "se-echo", path, value, detail)
}

// Errors of a write of the CronJob: the API server's verdicts on its schedule and on its name,
// and one that may pass.
var (
	errTZ             = invalidCronJob(field.NewPath("spec", "schedule"), "CRON_TZ=UTC 0 * * *", "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
	errCronJobTooLong = invalidCronJob(field.NewPath("metadata", "name"), "x-echo", "must be no more than 52 characters")
	errTransient      = errors.New("connection refused")
)
