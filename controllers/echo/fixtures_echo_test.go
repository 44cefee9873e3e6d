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
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// echoOption changes a test Echo.
type echoOption func(*echov1alpha1.Echo)

// newEcho returns a valid Echo that prints "hello", changed by the options.
func newEcho(name string, opts ...echoOption) *echov1alpha1.Echo {
	return testenv.Apply(&echov1alpha1.Echo{ObjectMeta: testenv.Meta(name), Spec: echov1alpha1.EchoSpec{Message: "hello"}}, opts...)
}

var withEchoNamespace = testenv.InNamespace[*echov1alpha1.Echo]

func withEchoMessage(message string) echoOption {
	return func(e *echov1alpha1.Echo) { e.Spec.Message = message }
}

func withPhase(phase echov1alpha1.EchoPhase) echoOption {
	return func(e *echov1alpha1.Echo) { e.Status.Phase = phase }
}

// jobOption changes a test Job.
type jobOption func(*batchv1.Job)

// newJob returns the Job of newEcho("ec"), as created and not started, changed by the options.
func newJob(opts ...jobOption) *batchv1.Job {
	job := BuildJob(newEcho("ec"), "busybox")
	for _, opt := range opts {
		opt(job)
	}
	return job
}

// t0 and t1 are the start and the end of the test Jobs, whole seconds as the API server stores them.
var (
	t0 = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(2 * time.Second))
)

func withActive(n int32) jobOption {
	return func(job *batchv1.Job) {
		job.Status.Active = n
		job.Status.StartTime = &t0
	}
}

// withSucceeded sets the status the Job controller writes for a Job whose pod succeeded.
func withSucceeded() jobOption {
	return func(job *batchv1.Job) {
		job.Status = batchv1.JobStatus{
			StartTime: &t0, CompletionTime: &t1, Succeeded: 1,
			Conditions: []batchv1.JobCondition{
				jobCond(batchv1.JobSuccessCriteriaMet, "CompletionsReached", "Reached expected number of succeeded pods"),
				jobCond(batchv1.JobComplete, "CompletionsReached", "Reached expected number of succeeded pods"),
			},
		}
	}
}

// withFailed sets the status the Job controller writes for a Job out of retries.
func withFailed() jobOption {
	return func(job *batchv1.Job) {
		job.Status = batchv1.JobStatus{
			StartTime: &t0, Failed: BackoffLimit + 1,
			Conditions: []batchv1.JobCondition{
				jobCond(batchv1.JobFailureTarget, "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
				jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
			},
		}
	}
}

func jobCond(conditionType batchv1.JobConditionType, reason, message string) batchv1.JobCondition {
	return batchv1.JobCondition{
		Type: conditionType, Status: corev1.ConditionTrue, Reason: reason, Message: message,
		LastProbeTime: t1, LastTransitionTime: t1,
	}
}
