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

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// jobObservation is what one reconcile saw of an Echo's Job.
type jobObservation struct {
	// job is the Job as the server holds it, nil when it does not exist or was not looked at.
	job *batchv1.Job
	// finished says the Echo had finished before this reconcile: nothing was looked at or changed.
	finished bool
	// err is the error that kept the Job from being created or read, if any.
	err error
}

// jobState is where the Job of an Echo is, as the Echo's status tells it.
type jobState struct {
	phase          echov1alpha1.EchoPhase
	reason         string
	message        string
	startTime      *metav1.Time
	completionTime *metav1.Time
}

// sameAs reports whether two states give the same status.
func (s jobState) sameAs(o jobState) bool {
	return s.phase == o.phase && s.reason == o.reason && s.message == o.message &&
		s.startTime.Equal(o.startTime) && s.completionTime.Equal(o.completionTime)
}

// isFinished reports whether phase is an end: the Job succeeded or failed for good.
func isFinished(phase echov1alpha1.EchoPhase) bool {
	return phase == echov1alpha1.EchoSucceeded || phase == echov1alpha1.EchoFailed
}

// stateOf derives the state of the Job named name from the Job itself, or from the error that
// kept it from being created. A Job the API server rejects can never run: the Echo's name and
// message cannot change, so it has failed for good.
func stateOf(name string, job *batchv1.Job, err error) jobState {
	switch {
	case apierrors.IsInvalid(err):
		return jobState{phase: echov1alpha1.EchoFailed, reason: echov1alpha1.ReasonJobRejected, message: err.Error()}
	case err != nil:
		return jobState{phase: echov1alpha1.EchoPending, reason: echov1alpha1.ReasonSyncFailed, message: err.Error()}
	case job == nil:
		return jobState{phase: echov1alpha1.EchoPending, reason: echov1alpha1.ReasonJobPending,
			message: fmt.Sprintf("Job %s does not exist yet", name)}
	}
	st := jobState{startTime: job.Status.StartTime}
	if c := jobCondition(job, batchv1.JobComplete); c != nil {
		st.phase, st.reason = echov1alpha1.EchoSucceeded, echov1alpha1.ReasonJobSucceeded
		st.message = fmt.Sprintf("Job %s printed the message", name)
		st.completionTime = job.Status.CompletionTime
		if st.completionTime == nil {
			st.completionTime = &c.LastTransitionTime
		}
		return st
	}
	if c := jobCondition(job, batchv1.JobFailed); c != nil {
		// A failed Job has no completionTime: the Failed condition tells when it ended.
		st.phase, st.reason, st.completionTime = echov1alpha1.EchoFailed, echov1alpha1.ReasonJobFailed, &c.LastTransitionTime
		st.message = fmt.Sprintf("Job %s failed: %s: %s", name, c.Reason, c.Message)
		return st
	}
	if job.Status.Active > 0 {
		st.phase, st.reason, st.message = echov1alpha1.EchoRunning, echov1alpha1.ReasonJobRunning, fmt.Sprintf("Job %s is running", name)
		return st
	}
	st.phase, st.reason, st.message = echov1alpha1.EchoPending, echov1alpha1.ReasonJobPending, fmt.Sprintf("Job %s has no pod running yet", name)
	return st
}

// jobCondition returns the condition of the given type of job when it is True, nil otherwise.
func jobCondition(job *batchv1.Job, conditionType batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if c := &job.Status.Conditions[i]; c.Type == conditionType && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// echoStatus returns the status of e as observed. A finished Echo keeps the status it ended
// with, whatever happens to its Job afterwards. The current status is otherwise only read to keep
// the lastTransitionTime of conditions that did not change.
func echoStatus(e *echov1alpha1.Echo, obs jobObservation) echov1alpha1.EchoStatus {
	if obs.finished {
		status := *e.Status.DeepCopy()
		status.ObservedGeneration = e.Generation
		return status
	}
	st := stateOf(e.JobName(), obs.job, obs.err)
	status := echov1alpha1.EchoStatus{
		JobName:            e.Status.JobName,
		Phase:              st.phase,
		StartTime:          st.startTime,
		CompletionTime:     st.completionTime,
		ObservedGeneration: e.Generation,
		Conditions:         append([]metav1.Condition(nil), e.Status.Conditions...),
	}
	if obs.job != nil {
		status.JobName = obs.job.Name
	}
	setCompleteCondition(&status.Conditions, e, st)
	setFailedCondition(&status.Conditions, e, st)
	meta.SetStatusCondition(&status.Conditions, child.DegradedCondition(obs.err, e.Generation))
	return status
}

// setCompleteCondition: True once the Job succeeded; the reason tells where it is otherwise.
func setCompleteCondition(conditions *[]metav1.Condition, e *echov1alpha1.Echo, st jobState) {
	setEndCondition(conditions, e, st, echov1alpha1.ConditionComplete, echov1alpha1.EchoSucceeded)
}

// setFailedCondition: True once the Job failed, or when the API server rejected it.
func setFailedCondition(conditions *[]metav1.Condition, e *echov1alpha1.Echo, st jobState) {
	setEndCondition(conditions, e, st, echov1alpha1.ConditionFailed, echov1alpha1.EchoFailed)
}

// setEndCondition sets the condition of type conditionType, which is True once the Job's phase
// is end. Complete and Failed both carry the reason and message of the Job's state, so that
// either tells where the Job is.
func setEndCondition(conditions *[]metav1.Condition, e *echov1alpha1.Echo, st jobState, conditionType string,
	end echov1alpha1.EchoPhase,
) {
	meta.SetStatusCondition(conditions, metav1.Condition{
		Type:               conditionType,
		Status:             conditionStatus(st.phase == end),
		Reason:             st.reason,
		Message:            st.message,
		ObservedGeneration: e.Generation,
	})
}

func conditionStatus(b bool) metav1.ConditionStatus {
	if b {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}
