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

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// cronJobNameLimit is the CronJob API's limit on names (63 - 11), which is not a constant of the
// API packages.
const cronJobNameLimit = 52

// echoProblems returns what the API server would refuse among the names and labels of the Job of
// an Echo called name and of its pods.
func echoProblems(name string) []string {
	e := &Echo{ObjectMeta: metav1.ObjectMeta{Name: name}}
	var problems []string
	problems = append(problems, validation.IsDNS1123Subdomain(e.JobName())...)
	problems = append(problems, validation.IsValidLabelValue(e.JobName())...) // job-name on its pods
	for _, value := range e.Labels() {
		problems = append(problems, validation.IsValidLabelValue(value)...)
	}
	return problems
}

// scheduledEchoProblems returns what the API server would refuse among the names and labels of
// the CronJob of a ScheduledEcho called name, of the Jobs it starts and of their pods.
func scheduledEchoProblems(name string) []string {
	s := &ScheduledEcho{ObjectMeta: metav1.ObjectMeta{Name: name}}
	var problems []string
	if len(s.CronJobName()) > cronJobNameLimit {
		problems = append(problems, fmt.Sprintf("CronJob %s is longer than %d", s.CronJobName(), cronJobNameLimit))
	}
	// The CronJob controller names each Job CRONJOB-<minutes since the epoch>: 8 digits until
	// 2160, so a run in 2150 has the longest name for a long time.
	job := fmt.Sprintf("%s-%d", s.CronJobName(), time.Date(2150, time.December, 31, 23, 59, 0, 0, time.UTC).Unix()/60)
	problems = append(problems, validation.IsValidLabelValue(job)...) // job-name on its pods
	for _, value := range s.Labels() {
		problems = append(problems, validation.IsValidLabelValue(value)...)
	}
	return problems
}

func TestMaxEchoNameLengthIsTheLongestNameTheJobTakes(t *testing.T) {
	if problems := echoProblems(strings.Repeat("a", MaxEchoNameLength)); len(problems) > 0 {
		t.Errorf("a name of MaxEchoNameLength (%d) is too long: %v", MaxEchoNameLength, problems)
	}
	if problems := echoProblems(strings.Repeat("a", MaxEchoNameLength+1)); len(problems) == 0 {
		t.Errorf("a name of MaxEchoNameLength+1 fits: MaxEchoNameLength is too small")
	}
}

func TestMaxScheduledEchoNameLengthIsTheLongestNameTheCronJobTakes(t *testing.T) {
	if problems := scheduledEchoProblems(strings.Repeat("a", MaxScheduledEchoNameLength)); len(problems) > 0 {
		t.Errorf("a name of MaxScheduledEchoNameLength (%d) is too long: %v", MaxScheduledEchoNameLength, problems)
	}
	if problems := scheduledEchoProblems(strings.Repeat("a", MaxScheduledEchoNameLength+1)); len(problems) == 0 {
		t.Errorf("a name of MaxScheduledEchoNameLength+1 fits: MaxScheduledEchoNameLength is too small")
	}
}
