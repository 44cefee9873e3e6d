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

import "github.com/seed1b407122/database-operator/api/labels"

// Values of labels.Name on the children of each kind.
const (
	echoAppName          = "echo"
	scheduledEchoAppName = "scheduledecho"
)

// SelectorLabels are the labels of the pods of the Echo's Job.
func (e *Echo) SelectorLabels() map[string]string {
	return labels.Selector(echoAppName, e.Name)
}

// Labels are the labels of the Echo's Job: the selector labels plus managed-by.
func (e *Echo) Labels() map[string]string {
	return labels.Child(echoAppName, e.Name)
}

// SelectorLabels are the labels of the pods the ScheduledEcho's CronJob runs.
func (s *ScheduledEcho) SelectorLabels() map[string]string {
	return labels.Selector(scheduledEchoAppName, s.Name)
}

// Labels are the labels of the ScheduledEcho's CronJob: the selector labels plus managed-by.
func (s *ScheduledEcho) Labels() map[string]string {
	return labels.Child(scheduledEchoAppName, s.Name)
}
