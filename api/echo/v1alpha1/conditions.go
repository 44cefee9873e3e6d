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

package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Condition types of Echo and ScheduledEcho.
const (
	// ConditionComplete is True when the Echo's Job succeeded.
	ConditionComplete = "Complete"
	// ConditionFailed is True when the Echo's Job failed.
	ConditionFailed = "Failed"
	// ConditionReady is True when the ScheduledEcho's CronJob matches the spec.
	ConditionReady = "Ready"
	// ConditionSuspended is True while the ScheduledEcho is suspended.
	ConditionSuspended = "Suspended"
)

// Condition reasons of Echo and ScheduledEcho.
const (
	ReasonJobSucceeded    = "JobSucceeded"
	ReasonJobFailed       = "JobFailed"
	ReasonJobRunning      = "JobRunning"
	ReasonCronJobSynced   = "CronJobSynced"
	ReasonInvalidSchedule = "InvalidSchedule"
	ReasonSuspended       = "SuspendedByUser"
	ReasonActive          = "Active"
	// ReasonJobPending: the Job does not exist yet or has no pod yet.
	ReasonJobPending = "JobPending"
	// ReasonJobRejected: the API server refused the Job (e.g. an Echo name too long for a Job).
	ReasonJobRejected = "JobRejected"
	// ReasonCronJobRejected: the API server refused the CronJob for a reason other than the schedule.
	ReasonCronJobRejected = "CronJobRejected"
	// ReasonSyncFailed: the child could not be written for a reason that may pass (retried).
	ReasonSyncFailed = "SyncFailed"
)

// GetConditions returns the conditions of the Echo's status.
func (e *Echo) GetConditions() []metav1.Condition { return e.Status.Conditions }

// GetConditions returns the conditions of the ScheduledEcho's status.
func (s *ScheduledEcho) GetConditions() []metav1.Condition { return s.Status.Conditions }
