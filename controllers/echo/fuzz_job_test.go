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
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/fuzzspec"
)

// FuzzBuildJob builds the Job of any admitted Echo and checks: no panic, the name within what
// the Job controller puts in the pods' job-name label, valid labels that hold the selector
// labels, the controller reference, the message carried only in the environment (never in the
// shell command), the restricted Pod Security profile, and a pure builder.
func FuzzBuildJob(f *testing.F) {
	f.Add("hello", "Hello, world")
	f.Fuzz(func(t *testing.T, name, message string) {
		fuzzspec.CheckBuilder(t, "BuildJob", fuzzspec.Echo(name, message), BuildJob, testImage, checkJob)
	})
}

func checkJob(e *echov1alpha1.Echo, job *batchv1.Job) error {
	pod := job.Spec.Template
	errs := []error{
		fuzzspec.Child(job, e, echov1alpha1.GroupVersion.WithKind(echoKind), fuzzspec.DNSSubdomain),
		fuzzspec.LabelValue(job.Name, "the pods' label job-name"),
		fuzzspec.Labels(pod.Labels, "spec.template.metadata.labels"),
		fuzzspec.SelectsMap(e.SelectorLabels(), pod.Labels, "the Echo's selector labels"),
	}
	if job.Name != e.JobName() {
		errs = append(errs, fmt.Errorf("Job %q, want %q", job.Name, e.JobName()))
	}
	errs = append(errs, checkPod(pod.Spec, e.Spec.Message, testImage))
	if job.Spec.TTLSecondsAfterFinished == nil || *job.Spec.TTLSecondsAfterFinished != TTLSecondsAfterFinished {
		errs = append(errs, fmt.Errorf("ttlSecondsAfterFinished %v, want %d", job.Spec.TTLSecondsAfterFinished, TTLSecondsAfterFinished))
	}
	return fuzzspec.JoinErrors(errs)
}

// checkPod checks the pod that prints message: one container of image with the message in its
// environment only, no token, the restricted Pod Security profile, bounded retries and run time.
func checkPod(spec corev1.PodSpec, message, image string) error {
	if len(spec.Containers) != 1 {
		return fmt.Errorf("%d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	var errs []error
	// The command is the same for every message: no message can become shell code.
	if c.Image != image || !slices.Equal(c.Command, printCommand) || len(c.Args) != 0 {
		errs = append(errs, fmt.Errorf("container runs %q %q with image %q", c.Command, c.Args, c.Image))
	}
	if len(c.Env) != 1 || c.Env[0].Name != MessageEnv || c.Env[0].Value != message || c.Env[0].ValueFrom != nil {
		errs = append(errs, fmt.Errorf("env %+v, want %s=<the message>", c.Env, MessageEnv))
	}
	if spec.RestartPolicy != corev1.RestartPolicyNever || spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		errs = append(errs, fmt.Errorf("restartPolicy %s, automountServiceAccountToken %v", spec.RestartPolicy, spec.AutomountServiceAccountToken))
	}
	sc, psc := c.SecurityContext, spec.SecurityContext
	if sc == nil || psc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) ||
		psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		errs = append(errs, fmt.Errorf("the pod does not meet the restricted Pod Security profile: %+v %+v", psc, sc))
	}
	return fuzzspec.JoinErrors(errs)
}

// FuzzDriftJob checks the drift check of the Job (jobSpec) against the write path: the Job
// stored as built is in sync (no write), and a Job whose retry and cleanup settings were
// changed or defaulted is in sync once the write path has patched it (one write, then none).
func FuzzDriftJob(f *testing.F) {
	f.Add("hello", "Hello, world", int32(-1), int32(-1))
	f.Fuzz(func(t *testing.T, name, message string, backoffLimit, ttl int32) {
		e := fuzzspec.Admitted(t, fuzzspec.Echo(name, message))
		desired := BuildJob(e, testImage)
		// Someone changed (or, with -1, removed) the settings the operator keeps.
		observed := desired.DeepCopy()
		observed.Spec.BackoffLimit, observed.Spec.TTLSecondsAfterFinished = orNil(backoffLimit), orNil(ttl)
		fuzzspec.CheckDrift(t, desired, observed, jobSpec.InSync, jobSpec.Merge)
	})
}

func orNil(n int32) *int32 {
	if n < 0 {
		return nil
	}
	return &n
}
