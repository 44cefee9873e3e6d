//go:build e2e

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

package faults

import (
	"fmt"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/faultproxy"
	"github.com/seed1b407122/database-operator/test/harness/leader"
)

// killStep is one step of the operator's multi-step work at which the leader dies: the proxy
// lets the step's request reach the API server and holds the answer, the leader is SIGKILLed
// while it waits for it, and the follower must finish the work once the Lease expires.
type killStep struct {
	step   string
	verb   string
	what   string
	change func(*databasev1alpha1.DatabaseClusterSpec)
	// scaledTo, when set, is the replica count after the step (whenScaled Delete drops the
	// claims of the removed members).
	scaledTo int32
}

// Storage growth (claims patched → StatefulSet orphan-deleted → recreated) and a scale-down with
// whenScaled Delete, with the leader killed at each step and a second manager taking over.
var _ = Describe("the leader killed at each step of storage growth and scale-down", Ordered, func() {
	var (
		lead, follower *leader.Manager
		s              *subject
		started        int
	)
	startStandby := func(ctx SpecContext) *leader.Manager {
		started++
		m := startElectingManager(ctx, fmt.Sprintf("m%d", started))
		Expect(m.WaitLogged(ctx, time.Minute, leader.MsgAttemptingLease)).To(Succeed())
		return m
	}

	BeforeAll(func(ctx SpecContext) {
		proxy.SetRules()
		first := startStandby(ctx)
		var err error
		lead, _, err = leader.FindLeader(ctx, k8s, []*leader.Manager{first}, time.Minute)
		Expect(err).NotTo(HaveOccurred())
		follower = startStandby(ctx)

		s = newSubject("faults-leader", "db", 3, databasev1alpha1.DeletePVC, databasev1alpha1.RetainPVC)
		s.create(ctx)
		s.expectConverged(ctx)
	}, NodeTimeout(3*time.Minute))

	AfterEach(func() {
		if CurrentSpecReport().Failed() {
			for _, m := range []*leader.Manager{lead, follower} {
				if m != nil {
					printLogTail(m.LogPath)
				}
			}
		}
	})

	AfterAll(func() {
		for _, m := range []*leader.Manager{lead, follower} {
			if m != nil && m.Running() {
				Expect(m.Stop(30*time.Second)).To(Succeed(), "manager %s exits 0 on SIGINT", m.Name)
			}
		}
	})

	grow := func(size string) func(*databasev1alpha1.DatabaseClusterSpec) {
		return func(spec *databasev1alpha1.DatabaseClusterSpec) { spec.Storage.Size = size }
	}
	scale := func(replicas int32) func(*databasev1alpha1.DatabaseClusterSpec) {
		return func(spec *databasev1alpha1.DatabaseClusterSpec) { spec.Replicas = ptr.To(replicas) }
	}

	DescribeTable("the follower finishes the work",
		func(ctx SpecContext, k killStep) {
			pods := s.podUIDs(ctx)
			hold := proxy.HoldNext(faultproxy.Match{Verbs: []string{k.verb}, Resources: []string{k.what}, Namespace: s.dc.Namespace}, true)
			DeferCleanup(hold.Release)
			if k.scaledTo > 0 {
				s.forgetClaimsFrom(k.scaledTo)
			}
			s.edit(ctx, k.change)
			Eventually(hold.Held()).WithTimeout(time.Minute).Should(BeClosed(), "the leader sent %s %s", k.verb, k.what)

			began := time.Now()
			Expect(lead.Signal(syscall.SIGKILL)).To(Succeed())
			exitErr, err := lead.WaitExit(30 * time.Second)
			Expect(err).NotTo(HaveOccurred())
			Expect(exitErr).To(MatchError(ContainSubstring("killed")))
			hold.Release()
			newLead, _, err := leader.FindLeader(ctx, k8s, []*leader.Manager{follower}, time.Minute)
			Expect(err).NotTo(HaveOccurred())
			Expect(newLead).To(BeIdenticalTo(follower), "the waiting follower took over")
			AddReportEntry("kill → follower leads", time.Since(began).Round(time.Millisecond).String())
			// A new standby, started once the follower leads (it would otherwise race the
			// follower for the Lease), so that the next step again has a follower.
			lead, follower = follower, startStandby(ctx)

			checked := s.expectConverged(ctx)
			AddReportEntry("kill → converged", time.Since(began).Round(time.Millisecond).String())
			after := s.podUIDs(ctx)
			for name, uid := range pods {
				if _, present := after[name]; !present && k.scaledTo > 0 {
					continue // removed by the scale-down
				}
				Expect(after).To(HaveKeyWithValue(name, uid), "pod %s was not restarted", name)
			}
			Expect(lead.Running()).To(BeTrue(), "the new leader is still running")
			record(row{fault: "leader SIGKILLed " + k.step, injected: 1,
				invariants: append(checked, invPodUIDs, invTakenOver, invRunning), dataLost: s.lost})
		},
		Entry("growth 1Gi → 2Gi, after the first claim was patched", killStep{
			step: "after the first claim of a growth was patched", verb: faultproxy.VerbPatch, what: "persistentvolumeclaims",
			change: grow("2Gi"),
		}, NodeTimeout(3*time.Minute)),
		Entry("growth 2Gi → 3Gi, after the StatefulSet was orphan-deleted", killStep{
			step: "after the StatefulSet of a growth was orphan-deleted", verb: faultproxy.VerbDelete, what: "statefulsets",
			change: grow("3Gi"),
		}, NodeTimeout(3*time.Minute)),
		Entry("growth 3Gi → 4Gi, after the StatefulSet was recreated", killStep{
			step: "after the StatefulSet of a growth was recreated", verb: faultproxy.VerbCreate, what: "statefulsets",
			change: grow("4Gi"),
		}, NodeTimeout(3*time.Minute)),
		Entry("scale-down 3 → 2 (whenScaled Delete), after the StatefulSet was scaled", killStep{
			step: "after the StatefulSet of a scale-down 3 → 2 (whenScaled Delete) was patched", verb: faultproxy.VerbPatch,
			what: "statefulsets", change: scale(2), scaledTo: 2,
		}, NodeTimeout(3*time.Minute)),
		Entry("scale-down 2 → 1 (whenScaled Delete), after the PodDisruptionBudget was deleted", killStep{
			step: "after the PodDisruptionBudget of a scale-down 2 → 1 (whenScaled Delete) was deleted", verb: faultproxy.VerbDelete,
			what: "poddisruptionbudgets", change: scale(1), scaledTo: 1,
		}, NodeTimeout(3*time.Minute)),
	)

	It("deletes the cluster under the last leader and keeps the remaining claim (whenDeleted Retain)", func(ctx SpecContext) {
		checked := s.expectDeleted(ctx)
		Expect(s.recordedClaims()).To(Equal([]string{"data-db-0"}))
		Expect(checked).To(ContainElement(invClaims))
		expectQuiet(ctx)
	}, NodeTimeout(2*time.Minute))
})
