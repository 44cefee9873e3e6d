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

package databasecluster

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seed1b407122/database-operator/api/conditions"
	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// endInAWord matches a condition message that is not empty and does not end in a separator
// (":", ";", ",", "-" or white space): what a part left empty (a reason, a body, a name) leaves.
func endInAWord() types.GomegaMatcher {
	return MatchRegexp(`(?s)[^:;,\s-]\z`)
}

// messagePod is pod db-2 of revision, controlled by rolloutSts, not Ready for an hour, its
// database container waiting with reason and message.
func messagePod(revision, reason, message string) corev1.Pod {
	return member(2, revision, notReadyFor(time.Hour), func(p *corev1.Pod) {
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
	})
}

// stuckOn is the stuck member that findStuckRollout sees in pod (of rolloutSts's update
// revision), or stuckPodToReplace (of an older one).
func stuckOn(pod corev1.Pod) *stuckMember {
	sts := rolloutSts()
	if m, _ := findStuckRollout(cachecfg.ViewStatefulSet(sts), []corev1.Pod{pod}, rolloutNow, rolloutDeadline); m != nil {
		return m
	}
	return stuckPodToReplace(cachecfg.ViewStatefulSet(sts), []corev1.Pod{member(0, "db-new"), member(1, "db-new"), pod}, rolloutNow, rolloutDeadline, nil)
}

// progressing sets the Progressing condition of "db" with sts, the claims waited for and the
// rollout observation.
func progressing(sts *appsv1.StatefulSet, waits []string, rollout rolloutObservation) func(*[]metav1.Condition) {
	return func(c *[]metav1.Condition) {
		setProgressingCondition(c, newCluster("db"), cachecfg.ViewStatefulSet(sts), waits, rollout)
	}
}

// degraded sets the Degraded condition of "db" from obs.
func degraded(obs observation) func(*[]metav1.Condition) {
	return func(c *[]metav1.Condition) { setDegradedCondition(c, newCluster("db"), obs) }
}

// autoGrowing sets the StorageAutoGrow condition of a cluster with autoGrow from obs.
func autoGrowing(obs autoGrowObservation) func(*[]metav1.Condition) {
	obs.ran = true
	return func(c *[]metav1.Condition) { setStorageAutoGrowCondition(c, autoGrowCluster("10Gi"), obs) }
}

// noClassPlan is decideGrowth's plan for claim data-db-0 of a member 90% full, whose
// StorageClass is the default one (no name) and cannot expand: the class's name is empty.
func noClassPlan() growthPlan {
	return decideGrowth(growthInput{spec: growSpec("20Gi"), claims: []corev1.PersistentVolumeClaim{growClaim("0", "10Gi")},
		usage: map[string]memberUsage{"db-0": full(90)}, now: growNow})
}

// agentCluster is cluster g1 with autoGrow, its member g1-0 running the storage agent.
func agentCluster() (*databasev1alpha1.DatabaseCluster, corev1.Pod) {
	dc := autoGrowCluster("10Gi")
	dc.Name = "g1"
	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "g1-0", Namespace: dc.Namespace, UID: "uid-g1-0"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1",
			InitContainerStatuses: []corev1.ContainerStatus{{Name: databasev1alpha1.StorageAgentContainerName}}},
	}
	return dc, pod
}

var _ = Describe("Condition messages", Label("unit"), func() {
	DescribeTable("end in a word when a reason, a body or a name they tell is empty",
		func(set func(*[]metav1.Condition)) {
			conditions := testenv.SetOn(set)
			Expect(conditions).NotTo(BeEmpty())
			for _, c := range conditions {
				Expect(c.Reason).NotTo(BeEmpty(), "condition %s", c.Type)
				Expect(c.Message).To(endInAWord(), "condition %s, reason %s", c.Type, c.Reason)
			}
		},
		Entry("Available: no StatefulSet", func(c *[]metav1.Condition) { setAvailableCondition(c, newCluster("db"), nil) }),
		Entry("Available: stopped for a backup", func(c *[]metav1.Condition) {
			dc := newCluster("db")
			dc.Annotations = map[string]string{databasev1alpha1.OfflineBackupAnnotation: "b"}
			setAvailableCondition(c, dc, cachecfg.ViewStatefulSet(rolloutSts()))
		}),
		Entry("Hibernated: stopping", func(c *[]metav1.Condition) {
			dc := newCluster("db")
			dc.Spec.Hibernated = true
			setHibernatedCondition(c, dc, cachecfg.ViewStatefulSet(rolloutSts()))
		}),
		Entry("Paused", func(c *[]metav1.Condition) {
			dc := newCluster("db")
			dc.Spec.Paused = true
			setPausedCondition(c, dc)
		}),
		Entry("Resizing: a claim being expanded, of no name", func(c *[]metav1.Condition) {
			grown := claim("10Gi")
			grown.Spec.Resources.Requests = claim("12Gi").Status.Capacity
			setResizingCondition(c, newCluster("db", withSize("10Gi")), nil, []corev1.PersistentVolumeClaim{grown})
		}),

		Entry("Progressing: no StatefulSet", progressing(nil, nil, rolloutObservation{})),
		Entry("Progressing: RolloutStuck, CreateContainerConfigError without the kubelet's message",
			progressing(rolloutSts(), nil, rolloutObservation{stuck: stuckOn(messagePod("db-new", "CreateContainerConfigError", ""))})),
		Entry("Progressing: RolloutStuck, CreateContainerConfigError with a message that ends in a colon",
			progressing(rolloutSts(), nil, rolloutObservation{stuck: stuckOn(messagePod("db-new", "CreateContainerConfigError", "secret \"s\" not found: \n"))})),
		Entry("Progressing: RolloutStuck past the deadline, the container waiting with no reason",
			progressing(rolloutSts(), nil, rolloutObservation{stuck: stuckOn(messagePod("db-new", "", ""))})),
		Entry("Progressing: RolloutStuck past the deadline, a reason and a message that ends in a colon",
			progressing(rolloutSts(), nil, rolloutObservation{stuck: stuckOn(messagePod("db-new", "ContainerCreating", "waiting for:"))})),
		Entry("Progressing: RolloutStuck with no detail", progressing(rolloutSts(), nil, rolloutObservation{stuck: &stuckMember{pod: "db-2"}})),
		Entry("Progressing: StuckPodReplaced, every name empty", progressing(rolloutSts(), nil,
			rolloutObservation{replaced: &stuckMember{}, statefulSet: cachecfg.ViewStatefulSet(&appsv1.StatefulSet{})})),
		Entry("Progressing: StuckPodReplaced, a pod with no waiting reason", progressing(rolloutSts(), nil,
			rolloutObservation{replaced: stuckOn(messagePod("db-old", "", "")), statefulSet: cachecfg.ViewStatefulSet(rolloutSts())})),

		Entry("Degraded: a stuck pod with nothing said", degraded(observation{stuck: &stuckPod{name: "db-2"}})),
		Entry("Degraded: a stuck pod, no reason, a message", degraded(observation{stuck: &stuckPod{name: "db-2",
			detail: waitingReason(ptr.To(messagePod("db-new", "", "back-off")))}})),

		Entry("StorageAutoGrow: no agent image", autoGrowing(autoGrowObservation{noImage: true})),
		Entry("StorageAutoGrow: ExpansionNotAllowed by the default StorageClass (no name)",
			autoGrowing(autoGrowObservation{plan: noClassPlan()})),
		Entry("StorageAutoGrow: no member measured", autoGrowing(autoGrowObservation{})),

		Entry("MemberLost: none", func(c *[]metav1.Condition) { setMemberLostCondition(c, newCluster("db"), lostObservation{}) }),
		Entry("MemberLost: a member with every field empty", func(c *[]metav1.Condition) {
			setMemberLostCondition(c, newCluster("db"), lostObservation{members: []lostMember{{}}})
		}),
		Entry("MemberLost: a replacement with every field empty", func(c *[]metav1.Condition) {
			setMemberLostCondition(c, newCluster("db"), lostObservation{replaced: &lostReplacement{}})
		}),

		Entry("Progressing: Scaling waits for a claim of no name",
			progressing(stsWithStatus(2, 2, 2, "r", "r"), []string{""}, rolloutObservation{})),
		Entry("Degraded: an error with no text",
			degraded(observation{err: errors.New("")})),
		Entry("Degraded: an error wrapping one with no text",
			degraded(observation{err: fmt.Errorf("reading ConfigMap db-config: %w", errors.New(""))})),
		Entry("Degraded: a FailedCreate note that ends in a colon",
			degraded(observation{createFailure: "create Pod db-0 in StatefulSet db failed error: "})),
		Entry("MonitoringReady: PodMonitorFailed without an error",
			func(c *[]metav1.Condition) {
				dc := newCluster("db")
				dc.Spec.Monitoring = &databasev1alpha1.MonitoringSpec{}
				setMonitoringReadyCondition(c, dc, observation{podMonitor: podMonitorFailed})
			}),
	)

	DescribeTable("tell what is left of a part that is empty, or what the part would have said",
		func(set func(*[]metav1.Condition), conditionType, want string) {
			Expect(conditionOf(testenv.SetOn(set), conditionType)).To(HaveExactElements(conditionType, Not(BeEmpty()), Not(BeEmpty()), want))
		},
		Entry("Scaling: the claims of no name are not named",
			progressing(stsWithStatus(2, 2, 2, "r", "r"), []string{"", "data-db-3"}, rolloutObservation{}),
			databasev1alpha1.ConditionProgressing,
			"scaling from 2 to 3 pods; waiting for the claims of removed members to be deleted first: data-db-3"),
		Entry("Scaling: no claim named",
			progressing(stsWithStatus(2, 2, 2, "r", "r"), []string{""}, rolloutObservation{}),
			databasev1alpha1.ConditionProgressing,
			"scaling from 2 to 3 pods; waiting for the claims of removed members to be deleted first"),
		Entry("Degraded: an error with no text", degraded(observation{err: errors.New("")}), conditions.Degraded,
			"the children could not be brought to the spec, and the error does not say why"),
		Entry("Degraded: a terminal error with no text", degraded(observation{err: errors.New("terminal error: ")}), conditions.Degraded,
			"the children could not be brought to the spec, and the error does not say why"),
		Entry("Degraded: an error wrapping one with no text",
			degraded(observation{err: fmt.Errorf("reading ConfigMap db-config: %w", errors.New(""))}), conditions.Degraded,
			"reading ConfigMap db-config"),
		Entry("Degraded: a FailedCreate note that ends in a colon",
			degraded(observation{createFailure: "create Pod db-0 in StatefulSet db failed error: "}), conditions.Degraded,
			"the StatefulSet cannot create every pod: create Pod db-0 in StatefulSet db failed error"),
		Entry("MonitoringReady: PodMonitorFailed without an error", func(c *[]metav1.Condition) {
			dc := newCluster("db")
			dc.Spec.Monitoring = &databasev1alpha1.MonitoringSpec{}
			setMonitoringReadyCondition(c, dc, observation{podMonitor: podMonitorFailed})
		}, databasev1alpha1.ConditionMonitoringReady, "PodMonitor db could not be written"),
	)

	DescribeTable("StorageAutoGrow tells an agent's answer without a trailing separator",
		func(ctx SpecContext, answer http.HandlerFunc, want string) {
			agent := httptest.NewServer(answer)
			DeferCleanup(agent.Close)
			dc, pod := agentCluster()
			r := &Reconciler{AgentAddress: func(*corev1.Pod) string { return strings.TrimPrefix(agent.URL, "http://") }}
			obs := autoGrowObservation{ran: true}
			r.measureMembers(ctx, dc, []corev1.Pod{pod}, nil, &obs)
			conditions := testenv.SetOn(func(c *[]metav1.Condition) { setStorageAutoGrowCondition(c, dc, obs) })
			Expect(conditionOf(conditions, databasev1alpha1.ConditionStorageAutoGrow)).To(Equal([]string{
				databasev1alpha1.ConditionStorageAutoGrow, "False", databasev1alpha1.ReasonUsageUnknown, want}))
		},
		Entry("404 with an empty body", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusNotFound)
		}), "cannot read the storage agent of g1-0: the agent answered 404 Not Found"),
		Entry("404 with Go's body, which ends in a newline", http.HandlerFunc(http.NotFound),
			"cannot read the storage agent of g1-0: the agent answered 404 Not Found: 404 page not found"),
		Entry("500 with a body of two lines and a trailing colon", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "statfs /var/lib/database:\ninput/output error:", http.StatusInternalServerError)
		}), "cannot read the storage agent of g1-0: the agent answered 500 Internal Server Error: "+
			"statfs /var/lib/database: input/output error"),
	)

	DescribeTable("agentFailure never leaves a separator, nor nothing",
		func(err error, want string) { Expect(agentFailure(err)).To(Equal(want)) },
		Entry("an empty body", errors.New("the agent answered 404 Not Found: "), "the agent answered 404 Not Found"),
		Entry("an error with no text", errors.New(""), "the read failed without saying why"),
		Entry("white space only", errors.New(" \n"), "the read failed without saying why"),
	)
})
