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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
)

var _ = Describe("publishRoles", Label("unit"), func() {
	// member is one pod, carrying label (none when empty), and its read: a role, or an agent
	// that did not answer (role "").
	type member struct{ label, role string }
	// demotedRole is a member whose agent reports a fenced primary.
	const demotedRole = "fenced primary"
	run := func(lastPrimary string, members ...member) publishedRoles {
		var pods []corev1.Pod
		var reads []memberRead
		for i, m := range members {
			name := "db-" + string(rune('0'+i))
			pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
			if m.label != "" {
				pod.Labels = map[string]string{databasev1alpha1.RoleLabel: m.label}
			}
			pods = append(pods, pod)
			read := memberRead{pod: name, observation: memberagent.Observation{Member: name, Role: m.role, PositionText: "0/" + name}}
			if m.role == demotedRole {
				read.observation.Role, read.observation.Fenced = memberagent.RolePrimary, true
			}
			if m.role == "" {
				read = memberRead{pod: name, err: errors.New("timeout")}
			}
			reads = append(reads, read)
		}
		return publishRoles(pods, reads, lastPrimary)
	}
	const p, r = "primary", "replica"

	DescribeTable("labels and primary",
		func(lastPrimary string, members []member, wantLabels map[string]string, wantPrimary string, wantPrimaries []string) {
			got := run(lastPrimary, members...)
			Expect(got.labels).To(Equal(wantLabels))
			Expect(got.primary).To(Equal(wantPrimary))
			Expect(got.primaries).To(Equal(wantPrimaries))
		},
		Entry("one primary: it is labelled primary, the others replica", "",
			[]member{{"", p}, {"", r}, {"", r}}, map[string]string{"db-0": p, "db-1": r, "db-2": r}, "db-0", []string{"db-0"}),
		Entry("after a switchover, the fenced old primary carries no role: neither NAME-rw nor NAME-ro routes to it", "db-0",
			[]member{{r, demotedRole}, {p, p}, {r, r}}, map[string]string{"db-0": "", "db-1": p, "db-2": r}, "db-1", []string{"db-1"}),
		Entry("a switchover the database made: the labels follow the reads", "db-0",
			[]member{{p, r}, {r, p}, {r, r}}, map[string]string{"db-0": r, "db-1": p, "db-2": r}, "db-1", []string{"db-1"}),
		Entry("the primary's agent misses a read and nobody else claims the role: it keeps its label", "db-0",
			[]member{{p, ""}, {r, r}, {r, r}}, map[string]string{"db-1": r, "db-2": r}, "db-0", []string(nil)),
		Entry("an unanswering member labelled primary while another is primary: its label is removed", "db-0",
			[]member{{p, ""}, {r, p}, {r, r}}, map[string]string{"db-0": "", "db-1": p, "db-2": r}, "db-1", []string{"db-1"}),
		Entry("an unanswering replica keeps its label", "db-0",
			[]member{{p, p}, {r, ""}, {r, r}}, map[string]string{"db-0": p, "db-2": r}, "db-0", []string{"db-0"}),
		Entry("a split brain: neither claimant is labelled primary, the last primary stays the status's", "db-0",
			[]member{{p, p}, {r, p}, {r, r}}, map[string]string{"db-0": "", "db-1": "", "db-2": r}, "db-0", []string{"db-0", "db-1"}),
		Entry("a split brain with a third, unanswering member labelled primary: no label primary is left", "db-2",
			[]member{{r, p}, {r, p}, {p, ""}}, map[string]string{"db-0": "", "db-1": "", "db-2": ""}, "db-2", []string{"db-0", "db-1"}),
	)

	DescribeTable("samePods: a read stands for the pod read, never for another of the same name",
		func(change func(*corev1.Pod), want bool) {
			pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0", UID: "uid-1"}, Status: corev1.PodStatus{PodIP: "10.0.0.1"}}
			reads := []memberRead{{pod: "db-0", uid: "uid-1", ip: "10.0.0.1"}}
			change(&pod)
			Expect(samePods(reads, []corev1.Pod{pod})).To(Equal(want))
		},
		Entry("the same pod", func(*corev1.Pod) {}, true),
		Entry("recreated: another UID", func(p *corev1.Pod) { p.UID = "uid-2" }, false),
		Entry("another IP", func(p *corev1.Pod) { p.Status.PodIP = "10.0.0.9" }, false),
		Entry("being deleted since", func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} }, false),
	)

	It("samePods: a pod read as not running (no IP yet, or deleted) needs no new read until it changes", func() {
		read := []memberRead{{pod: "db-0", uid: "uid-1", err: errNotRunning}}
		pods := []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "db-0", UID: "uid-1"}}}
		Expect(samePods(read, pods)).To(BeTrue(), "still without an IP")
		pods[0].DeletionTimestamp = &metav1.Time{}
		Expect(samePods(read, pods)).To(BeTrue(), "deleted, and read as not running already")
		pods[0].DeletionTimestamp, pods[0].Status.PodIP = nil, "10.0.0.1"
		Expect(samePods(read, pods)).To(BeFalse(), "it has an IP now")
	})

	It("reads the agents on the port the pods declare and admission keeps free", func() {
		Expect(memberagent.Port).To(BeEquivalentTo(databasev1alpha1.MemberAgentPort))
	})

	It("reports each member's role and position, unknown for one whose agent did not answer", func() {
		got := run("", member{"", p}, member{"", ""}, member{"", r})
		Expect(got.members).To(Equal([]databasev1alpha1.MemberStatus{
			{Name: "db-0", Role: databasev1alpha1.MemberRolePrimary, Position: "0/db-0"},
			{Name: "db-1", Role: databasev1alpha1.MemberRoleUnknown},
			{Name: "db-2", Role: databasev1alpha1.MemberRoleReplica, Position: "0/db-2"},
		}))
	})
})

var _ = Describe("startsAsReplica", Label("unit"), func() {
	started := time.Date(2026, 3, 1, 12, 0, 0, 600_000_000, time.UTC)
	stopped := fmt.Errorf("the agent answered 503: %w", memberagent.ErrStopped)
	cluster := func(engine databasev1alpha1.Engine, to string) *databasev1alpha1.DatabaseCluster {
		dc := &databasev1alpha1.DatabaseCluster{Spec: databasev1alpha1.DatabaseClusterSpec{Engine: engine}}
		if to != "" {
			dc.Status.Switchover = &databasev1alpha1.SwitchoverStatus{From: "db-0", To: to, Reason: "Failover", StartedAt: metav1.NewTime(started)}
		}
		return dc
	}
	DescribeTable("a member is fenced as about to start as a replica only when",
		func(dc *databasev1alpha1.DatabaseCluster, name string, created time.Time, err error, want bool) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created.Truncate(time.Second))}}
			Expect(startsAsReplica(dc, pod, memberRead{pod: name, err: err})).To(Equal(want))
			if want {
				Expect(createdDuringSwitchover(dc, pod)).To(BeTrue())
			}
		},
		Entry("its pod came two seconds past the failover's start and its agent finds no server",
			cluster(databasev1alpha1.EnginePostgreSQL, "db-2"), "db-0", started.Add(2*time.Second), stopped, true),
		Entry("not its pod created in the next second: the clocks may be a second apart",
			cluster(databasev1alpha1.EnginePostgreSQL, "db-2"), "db-0", started.Add(time.Second), stopped, false),
		Entry("not a pod created before the failover started",
			cluster(databasev1alpha1.EnginePostgreSQL, "db-2"), "db-0", started.Add(-time.Hour), stopped, false),
		Entry("not a server that runs but does not answer (frozen, or promoted by a person)",
			cluster(databasev1alpha1.EnginePostgreSQL, "db-2"), "db-0", started.Add(time.Minute), errors.New("timeout"), false),
		Entry("not the failover's target",
			cluster(databasev1alpha1.EnginePostgreSQL, "db-2"), "db-2", started.Add(time.Minute), stopped, false),
		Entry("not without a switchover in flight",
			cluster(databasev1alpha1.EnginePostgreSQL, ""), "db-0", started.Add(time.Minute), stopped, false),
		Entry("not with engine etcd",
			cluster(databasev1alpha1.EngineEtcd, "db-2"), "db-0", started.Add(time.Minute), stopped, false),
	)
})
