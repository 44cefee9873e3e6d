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
	"maps"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// scheduledEchoKind names ScheduledEchos in owner references and in the operator's metrics.
const scheduledEchoKind = "ScheduledEcho"

// How many finished Jobs the CronJob keeps (the API server's defaults, set so that the drift
// check compares numbers exactly).
const (
	SuccessfulJobsHistoryLimit = 3
	FailedJobsHistoryLimit     = 1
)

// BuildCronJob returns the CronJob that prints the message of s on its schedule, with image. Its
// Jobs are those of an Echo; they carry the selector labels but not managed-by, so they stay out
// of the operator's cache: the CronJob controller owns and cleans them.
func BuildCronJob(s *echov1alpha1.ScheduledEcho, image string) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: child.Meta(s, echov1alpha1.GroupVersion.WithKind(scheduledEchoKind), s.CronJobName(), s.Labels()),
		Spec: batchv1.CronJobSpec{
			Schedule: s.Spec.Schedule,
			Suspend:  ptr.To(s.Spec.Suspend),
			// A run that is still going when the next is due makes the next one skip.
			ConcurrencyPolicy:          batchv1.ForbidConcurrent,
			SuccessfulJobsHistoryLimit: ptr.To[int32](SuccessfulJobsHistoryLimit),
			FailedJobsHistoryLimit:     ptr.To[int32](FailedJobsHistoryLimit),
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: s.SelectorLabels()},
				Spec:       buildJobSpec(s.Spec.Message, image, s.SelectorLabels()),
			},
		},
	}
}

// cronJobSpec keeps every field of the CronJob the operator sets. Unlike a Job's, the Job
// template of a CronJob may change: it applies to the next run. The other fields are listed once,
// in copySchedule: InSync merges them into a copy of observed and compares, so that what is
// compared is what Merge copies.
var cronJobSpec = child.Spec[*batchv1.CronJob]{
	InSync: func(desired, observed *batchv1.CronJob) bool {
		merged := observed.Spec
		copySchedule(&merged, &desired.Spec)
		return equality.Semantic.DeepEqual(merged, observed.Spec) &&
			jobTemplateInSync(desired.Spec.JobTemplate, observed.Spec.JobTemplate)
	},
	Merge: func(desired, observed *batchv1.CronJob) {
		copySchedule(&observed.Spec, &desired.Spec)
		observed.Spec.JobTemplate = desired.Spec.JobTemplate
	},
}

// copySchedule copies from src into dst the fields of a CronJob's spec the operator owns, the Job
// template aside: when the Jobs run, whether they may overlap, and how many finished ones are kept.
func copySchedule(dst, src *batchv1.CronJobSpec) {
	dst.Schedule = src.Schedule
	dst.Suspend = src.Suspend
	dst.ConcurrencyPolicy = src.ConcurrencyPolicy
	dst.SuccessfulJobsHistoryLimit = src.SuccessfulJobsHistoryLimit
	dst.FailedJobsHistoryLimit = src.FailedJobsHistoryLimit
}

// jobTemplateInSync compares the Job template the operator wants with the one the API server
// stored. DeepDerivative ignores the fields left empty in desired, which the API server defaults;
// it also lets observed lists and maps be longer, so their sizes are compared too.
func jobTemplateInSync(desired, observed batchv1.JobTemplateSpec) bool {
	if !equality.Semantic.DeepDerivative(desired, observed) ||
		!maps.Equal(desired.Labels, observed.Labels) ||
		!maps.Equal(desired.Spec.Template.Labels, observed.Spec.Template.Labels) {
		return false
	}
	want, have := desired.Spec.Template.Spec.Containers, observed.Spec.Template.Spec.Containers
	if len(want) != len(have) {
		return false
	}
	for i := range want {
		if len(want[i].Env) != len(have[i].Env) || len(want[i].Command) != len(have[i].Command) || len(want[i].Args) != len(have[i].Args) {
			return false
		}
	}
	return true
}
