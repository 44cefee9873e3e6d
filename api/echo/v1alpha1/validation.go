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

// Longest names, for which the CRDs' rules on metadata.name say the same numbers (markers take no
// constants; the admission corpus creates a name of each length and one character more to hold
// the two together).
const (
	// MaxEchoNameLength is the longest name of an Echo. Its Job is NAME-echo, and the Job
	// controller labels the Job's pods job-name=NAME-echo (and batch.kubernetes.io/job-name), a
	// label value of at most 63: 63 - len("-echo") = 58. The pods are named NAME-echo-<5
	// random characters>, which the API server shortens to fit, and carry
	// app.kubernetes.io/instance=NAME (58 <= 63).
	MaxEchoNameLength = 58

	// MaxScheduledEchoNameLength is the longest name of a ScheduledEcho. Its CronJob is
	// NAME-echo, and the CronJob API limits CronJob names to 52 (63 - 11) because the CronJob
	// controller names each Job CRONJOB-<minutes since the epoch> (8 digits until the year 2160)
	// and labels the Job's pods job-name=<Job name>, at most 63: 52 - len("-echo") = 47.
	MaxScheduledEchoNameLength = 47
)
