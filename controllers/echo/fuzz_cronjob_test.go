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
	"context"
	"fmt"
	"maps"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/api/labels"
	"github.com/seed1b407122/database-operator/test/harness/fuzzspec"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

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
		fuzzspec.CheckBuilder(t, "BuildCronJob", fuzzspec.ScheduledEcho(name, message, schedule, suspend), BuildCronJob, testImage, checkCronJob)
	})
}

func checkCronJob(s *echov1alpha1.ScheduledEcho, cj *batchv1.CronJob) error {
	tmpl := cj.Spec.JobTemplate
	errs := []error{
		fuzzspec.Child(cj, s, echov1alpha1.GroupVersion.WithKind(scheduledEchoKind), fuzzspec.DNSSubdomain),
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
	if len(c) != 1 || len(c[0].Env) != 1 || c[0].Env[0].Value != s.Spec.Message || c[0].Image != testImage {
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
		fuzzspec.CheckDrift(t, BuildCronJob(s, testImage), observed, cronJobSpec.InSync, cronJobSpec.Merge)
	})
}

// The drift check against the real API server's defaults, for every admitted seed of
// FuzzDriftCronJob whose schedule the controller lets through: the CronJob as the API server
// would store it (a server-side dry-run create returns it with every default, the pod template's
// included) is in sync with the one built, so the operator never patches a CronJob it has just
// created.
var _ = testenv.DescribeSeedsStoredInSync("Drift check against the API server's defaults",
	"controllers/echo", "FuzzDriftCronJob", fuzzspec.ScheduledEcho,
	func(ctx context.Context, c client.Client, seed fuzzspec.AdmittedSeed[*echov1alpha1.ScheduledEcho]) bool {
		if checkSchedule(seed.Object.Spec.Schedule) != nil {
			return false // reported by the controller, never written
		}
		testenv.ExpectStoredInSync(ctx, c, seed.File, BuildCronJob(seed.Object, testImage), cronJobSpec.InSync)
		return true
	})
