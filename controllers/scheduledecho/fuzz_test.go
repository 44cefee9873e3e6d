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
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/api/labels"
	"github.com/seed1b407122/database-operator/controllers/internal/fuzzspec"
	"github.com/seed1b407122/database-operator/controllers/internal/testenv"
)

// fuzzImage is the image the operator is configured with (ECHO_IMAGE), not user input.
const fuzzImage = "registry.example/tools/busybox:1.36"

// maxJobSuffix is the longest suffix the CronJob controller gives the Jobs it creates:
// "-<scheduled time in minutes since 1970>" (10 digits last until the year 20984).
const maxJobSuffix = "-9999999999"

// FuzzBuildCronJob builds the CronJob of any admitted ScheduledEcho and checks: no panic, the
// name within what its Jobs and their pods' job-name label allow, valid labels, the controller
// reference, the spec carried over, Jobs that carry the selector labels but not managed-by (the
// CronJob controller owns them), and a pure builder.
func FuzzBuildCronJob(f *testing.F) {
	f.Add("nightly", "Good night", "0 3 * * *", false)
	f.Fuzz(func(t *testing.T, name, message, schedule string, suspend bool) {
		fuzzspec.CheckBuilder(t, "BuildCronJob", fuzzspec.ScheduledEcho(name, message, schedule, suspend), BuildCronJob, fuzzImage, checkCronJob)
	})
}

func checkCronJob(s *echov1alpha1.ScheduledEcho, cj *batchv1.CronJob) error {
	tmpl := cj.Spec.JobTemplate
	errs := []error{
		fuzzspec.Child(cj, s, echov1alpha1.GroupVersion.WithKind(kind), fuzzspec.DNSSubdomain),
		fuzzspec.LabelValue(cj.Name+maxJobSuffix, "the Jobs' pods' label job-name"),
		fuzzspec.Labels(tmpl.Labels, "spec.jobTemplate.metadata.labels"),
		fuzzspec.Labels(tmpl.Spec.Template.Labels, "spec.jobTemplate.spec.template.metadata.labels"),
		fuzzspec.SelectsMap(s.SelectorLabels(), tmpl.Spec.Template.Labels, "the ScheduledEcho's selector labels"),
	}
	if cj.Name != s.CronJobName() {
		errs = append(errs, fmt.Errorf("CronJob %q, want %q", cj.Name, s.CronJobName()))
	}
	if _, ok := tmpl.Labels[labels.ManagedBy]; ok || !maps.Equal(tmpl.Labels, s.SelectorLabels()) {
		errs = append(errs, fmt.Errorf("Job labels %v, want the selector labels without %s", tmpl.Labels, labels.ManagedBy))
	}
	if cj.Spec.Schedule != s.Spec.Schedule || cj.Spec.Suspend == nil || *cj.Spec.Suspend != s.Spec.Suspend ||
		cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		errs = append(errs, fmt.Errorf("schedule %q, suspend %v, concurrencyPolicy %s", cj.Spec.Schedule, cj.Spec.Suspend, cj.Spec.ConcurrencyPolicy))
	}
	c := tmpl.Spec.Template.Spec.Containers
	if len(c) != 1 || len(c[0].Env) != 1 || c[0].Env[0].Value != s.Spec.Message || c[0].Image != fuzzImage {
		errs = append(errs, fmt.Errorf("containers %+v do not print the message with the image", c))
	}
	return fuzzspec.JoinErrors(errs)
}

// FuzzDriftCronJob checks the drift check of the CronJob (cronJobSpec, jobTemplateInSync)
// against the write path: the CronJob stored as built is in sync (no write), and one built from
// another spec is in sync once the write path has patched it (one write, then none).
func FuzzDriftCronJob(f *testing.F) {
	f.Add("nightly", "Good night", "0 3 * * *", false)
	f.Fuzz(func(t *testing.T, name, message, schedule string, suspend bool) {
		s := fuzzspec.Admitted(t, fuzzspec.ScheduledEcho(name, message, schedule, suspend))
		old := fuzzspec.ScheduledEcho(s.Name, "an older message", "*/5 * * * *", !suspend)
		observed := BuildCronJob(old, "registry.example/tools/busybox:1.35")
		fuzzspec.CheckDrift(t, BuildCronJob(s, fuzzImage), observed, cronJobSpec.InSync, cronJobSpec.Merge)
	})
}

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

// The drift check against the real API server's defaults, for every admitted seed of
// FuzzDriftCronJob whose schedule the controller lets through: the CronJob as the API server
// would store it (a server-side dry-run create returns it with every default, the pod template's
// included) is in sync with the one built, so the operator never patches a CronJob it has just
// created.
var _ = testenv.DescribeSeedsStoredInSync("Drift check against the API server's defaults",
	"controllers/scheduledecho", "FuzzDriftCronJob", fuzzspec.ScheduledEcho,
	func(ctx context.Context, c client.Client, seed fuzzspec.AdmittedSeed[*echov1alpha1.ScheduledEcho]) bool {
		if checkSchedule(seed.Object.Spec.Schedule) != nil {
			return false // reported by the controller, never written
		}
		testenv.ExpectStoredInSync(ctx, c, seed.File, BuildCronJob(seed.Object, fuzzImage), cronJobSpec.InSync)
		return true
	})
