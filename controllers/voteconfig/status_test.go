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

package voteconfig

import (
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// conditionOf returns type, status, reason and message of one condition, for exact comparison.
var conditionOf = testenv.ConditionOf

var (
	earlier = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	now     = metav1.NewTime(earlier.Add(time.Hour))
)

var _ = Describe("Status", Label("unit"), func() {
	DescribeTable("Ready",
		func(err error, want []string) {
			conditions := testenv.SetOn(func(c *[]metav1.Condition) { setReadyCondition(c, newVoteConfig("vc"), err) })
			Expect(conditionOf(conditions, "Ready")).To(Equal(want))
		},
		Entry("in sync", nil, []string{"Ready", "True", "ConfigMapSynced", "ConfigMap vc-config holds the 2 options"}),
		Entry("not written", errors.New("patching ConfigMap: conflict"), []string{"Ready", "False", "SyncFailed", "patching ConfigMap: conflict"}),
	)

	DescribeTable("TargetFound",
		func(vc *votingv1alpha1.VoteConfig, target targetState, want []string) {
			conditions := []metav1.Condition{{Type: "TargetFound", Status: "True", Reason: "DeploymentFound", Message: "before"}}
			setTargetFoundCondition(&conditions, vc, target)
			Expect(conditionOf(conditions, "TargetFound")).To(Equal(want))
		},
		Entry("no target", newVoteConfig("vc"), targetNone,
			[]string{"TargetFound", "False", "NoTargetDeployment", "spec.targetDeployment is not set: no Deployment rolls on change"}),
		Entry("found", newVoteConfig("vc", withTarget("web")), targetFound,
			[]string{"TargetFound", "True", "DeploymentFound", "Deployment web rolls its pods when the options change"}),
		Entry("missing", newVoteConfig("vc", withTarget("web")), targetMissing,
			[]string{"TargetFound", "False", "DeploymentNotFound", "Deployment web does not exist in namespace default"}),
		Entry("not readable: left as it was", newVoteConfig("vc", withTarget("web")), targetUnknown,
			[]string{"TargetFound", "True", "DeploymentFound", "before"}),
	)

	DescribeTable("computeStatus sets lastUpdated only when the content changed",
		func(obs observation, want *metav1.Time, configMapName string) {
			vc := newVoteConfig("vc")
			vc.Status.LastUpdated = &earlier
			status := computeStatus(vc, obs, now)
			Expect(status.LastUpdated).To(Equal(want))
			Expect(status.ConfigMapName).To(Equal(configMapName))
			Expect(status.ObservedGeneration).To(Equal(int64(1)))
		},
		Entry("created or patched", observation{changed: true, target: targetNone}, &now, "vc-config"),
		Entry("unchanged", observation{target: targetNone}, &earlier, "vc-config"),
		Entry("not written", observation{configMapErr: errors.New("boom")}, &earlier, ""),
	)
})
