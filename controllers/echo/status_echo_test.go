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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// errJobRejected is the error the API server answers for a Job whose name is too long.
var errJobRejected = testenv.Invalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "x-echo",
	field.NewPath("spec", "template", "labels"), "x-echo", "must be no more than 63 bytes")

var _ = Describe("Echo status", Label("unit"), func() {
	DescribeTable("stateOf",
		func(job *batchv1.Job, err error, want jobState) {
			Expect(stateOf("ec-echo", job, err)).To(Equal(want))
		},
		Entry("no Job yet", nil, nil, jobState{phase: echov1alpha1.EchoPending, reason: "JobPending",
			message: "Job ec-echo does not exist yet"}),
		Entry("a Job that may still be created", nil, errors.New("connection refused"), jobState{
			phase: echov1alpha1.EchoPending, reason: "SyncFailed", message: "connection refused"}),
		Entry("a Job the API server rejects", nil, errJobRejected, jobState{phase: echov1alpha1.EchoFailed,
			reason: "JobRejected", message: errJobRejected.Error()}),
		Entry("created, no pod yet", newJob(), nil, jobState{phase: echov1alpha1.EchoPending, reason: "JobPending",
			message: "Job ec-echo has no pod running yet"}),
		Entry("a pod is running", newJob(withActive(1)), nil, jobState{phase: echov1alpha1.EchoRunning,
			reason: "JobRunning", message: "Job ec-echo is running", startTime: &t0}),
		Entry("succeeded", newJob(withSucceeded()), nil, jobState{phase: echov1alpha1.EchoSucceeded,
			reason: "JobSucceeded", message: "Job ec-echo printed the message", startTime: &t0, completionTime: &t1}),
		Entry("succeeded without completionTime: the condition tells when", newJob(withSucceeded(), func(job *batchv1.Job) {
			job.Status.CompletionTime = nil
		}), nil, jobState{phase: echov1alpha1.EchoSucceeded, reason: "JobSucceeded",
			message: "Job ec-echo printed the message", startTime: &t0, completionTime: &t1}),
		Entry("failed", newJob(withFailed()), nil, jobState{phase: echov1alpha1.EchoFailed, reason: "JobFailed",
			message:   "Job ec-echo failed: BackoffLimitExceeded: Job has reached the specified backoff limit",
			startTime: &t0, completionTime: &t1}),
	)

	DescribeTable("Complete and Failed",
		func(st jobState, complete, failed []string) {
			conditions := testenv.SetOn(func(conditions *[]metav1.Condition) {
				setCompleteCondition(conditions, newEcho("ec"), st)
				setFailedCondition(conditions, newEcho("ec"), st)
			})
			Expect(conditionOf(conditions, "Complete")).To(Equal(complete))
			Expect(conditionOf(conditions, "Failed")).To(Equal(failed))
		},
		Entry("pending", jobState{phase: echov1alpha1.EchoPending, reason: "JobPending", message: "m"},
			[]string{"Complete", "False", "JobPending", "m"}, []string{"Failed", "False", "JobPending", "m"}),
		Entry("running", jobState{phase: echov1alpha1.EchoRunning, reason: "JobRunning", message: "m"},
			[]string{"Complete", "False", "JobRunning", "m"}, []string{"Failed", "False", "JobRunning", "m"}),
		Entry("succeeded", jobState{phase: echov1alpha1.EchoSucceeded, reason: "JobSucceeded", message: "m"},
			[]string{"Complete", "True", "JobSucceeded", "m"}, []string{"Failed", "False", "JobSucceeded", "m"}),
		Entry("failed", jobState{phase: echov1alpha1.EchoFailed, reason: "JobFailed", message: "m"},
			[]string{"Complete", "False", "JobFailed", "m"}, []string{"Failed", "True", "JobFailed", "m"}),
		Entry("rejected", jobState{phase: echov1alpha1.EchoFailed, reason: "JobRejected", message: "m"},
			[]string{"Complete", "False", "JobRejected", "m"}, []string{"Failed", "True", "JobRejected", "m"}),
	)

	Describe("echoStatus", func() {
		It("reports the Job", func() {
			status := echoStatus(newEcho("ec"), jobObservation{job: newJob(withSucceeded())})
			Expect(status.JobName).To(Equal("ec-echo"))
			Expect(status.Phase).To(Equal(echov1alpha1.EchoSucceeded))
			Expect(status.StartTime).To(Equal(&t0))
			Expect(status.CompletionTime).To(Equal(&t1))
			Expect(status.ObservedGeneration).To(Equal(int64(1)))
			Expect(conditionOf(status.Conditions, "Complete")).To(Equal([]string{"Complete", "True", "JobSucceeded", "Job ec-echo printed the message"}))
		})

		It("names no Job that was never created", func() {
			status := echoStatus(newEcho("ec"), jobObservation{err: errJobRejected})
			Expect(status.JobName).To(BeEmpty())
			Expect(status.Phase).To(Equal(echov1alpha1.EchoFailed))
		})

		It("keeps the status of a finished Echo as it is", func() {
			e := newEcho("ec", withPhase(echov1alpha1.EchoSucceeded))
			e.Status.JobName, e.Status.StartTime, e.Status.CompletionTime = "ec-echo", &t0, &t1
			setCompleteCondition(&e.Status.Conditions, e, jobState{phase: echov1alpha1.EchoSucceeded, reason: "JobSucceeded", message: "m"})
			e.Status.ObservedGeneration = 1
			Expect(echoStatus(e, jobObservation{finished: true})).To(Equal(e.Status))
		})
	})

	DescribeTable("isFinished",
		func(phase echov1alpha1.EchoPhase, want bool) { Expect(isFinished(phase)).To(Equal(want)) },
		Entry("new", echov1alpha1.EchoPhase(""), false),
		Entry("pending", echov1alpha1.EchoPending, false),
		Entry("running", echov1alpha1.EchoRunning, false),
		Entry("succeeded", echov1alpha1.EchoSucceeded, true),
		Entry("failed", echov1alpha1.EchoFailed, true),
	)
})
