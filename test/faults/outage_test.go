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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/controlplane"
	"github.com/seed1b407122/database-operator/test/harness/faultproxy"
	"github.com/seed1b407122/database-operator/test/harness/manager"
)

// outage is how long a stopped component stays down: long enough for the manager's requests,
// watches and retries to fail, short of the node monitor's grace period (kwok's nodes must not
// turn NotReady, which would be a different test).
const outage = 5 * time.Second

// kube-apiserver and etcd stopped while the operator is in the middle of a reconcile: the
// proxy holds the operator's request of that reconcile, the component is stopped, the request
// is let go into the outage, and the component comes back after outage.
var _ = Describe("kube-apiserver and etcd stopped and started mid-reconcile", Ordered, func() {
	var (
		mgr *manager.Process
		s   *subject
	)

	BeforeAll(func(ctx SpecContext) {
		proxy.SetRules()
		mgr = startPlainManager(ctx, "outages")
		s = newSubject("faults-outage", "db", 3, databasev1alpha1.RetainPVC, databasev1alpha1.RetainPVC)
	}, NodeTimeout(2*time.Minute))

	AfterEach(func() {
		if CurrentSpecReport().Failed() && mgr != nil {
			printLogTail(mgr.LogPath)
		}
	})

	AfterAll(func() {
		if mgr != nil {
			Expect(mgr.Stop(30*time.Second)).To(Succeed(), "the manager exits 0 on SIGINT")
		}
	})

	// interrupt holds the next request match selects, stops component once it is held, lets
	// the request go, keeps the component down for outage and starts it again.
	interrupt := func(ctx SpecContext, component string, match faultproxy.Match, change func()) {
		hold := proxy.HoldNext(match, false)
		DeferCleanup(hold.Release)
		change()
		Eventually(hold.Held()).WithTimeout(time.Minute).Should(BeClosed(), "the operator sent %+v", match)
		Expect(cluster.StopComponent(component)).To(Succeed())
		began := time.Now()
		hold.Release()
		if component == controlplane.ComponentAPIServer {
			err := k8s.Get(ctx, client.ObjectKeyFromObject(s.dc), s.dc)
			Expect(err).To(MatchError(ContainSubstring("connection refused")), "kube-apiserver is down")
		}
		time.Sleep(outage - time.Since(began))
		Expect(cluster.StartComponent(component)).To(Succeed())
		AddReportEntry(component+" down", time.Since(began).Round(time.Millisecond).String())
	}

	It("converges after kube-apiserver is stopped while the StatefulSet is being created", func(ctx SpecContext) {
		interrupt(ctx, controlplane.ComponentAPIServer, faultproxy.Match{
			Verbs: []string{faultproxy.VerbCreate}, Resources: []string{"statefulsets"}, Namespace: s.dc.Namespace,
		}, func() { s.create(ctx) })
		began := time.Now()
		checked := s.expectConverged(ctx)
		AddReportEntry("kube-apiserver back → converged", time.Since(began).Round(time.Millisecond).String())
		Expect(mgr.Running()).To(BeTrue(), "the manager is still running")
		record(row{fault: fmt.Sprintf("kube-apiserver stopped for %s while the StatefulSet create was in flight", outage),
			injected: 1, invariants: append(checked, invRunning), dataLost: s.lost})
	}, NodeTimeout(4*time.Minute))

	It("converges after etcd is stopped while the StatefulSet is being scaled and its storage grown", func(ctx SpecContext) {
		pods := s.podUIDs(ctx)
		interrupt(ctx, controlplane.ComponentEtcd, faultproxy.Match{
			Verbs: []string{faultproxy.VerbPatch}, Resources: []string{"persistentvolumeclaims"}, Namespace: s.dc.Namespace,
		}, func() {
			s.edit(ctx, func(spec *databasev1alpha1.DatabaseClusterSpec) {
				spec.Replicas = ptr.To[int32](4)
				spec.Storage.Size = "2Gi"
			})
		})
		began := time.Now()
		checked := s.expectConverged(ctx)
		AddReportEntry("etcd back → converged", time.Since(began).Round(time.Millisecond).String())
		after := s.podUIDs(ctx)
		for name, uid := range pods {
			Expect(after).To(HaveKeyWithValue(name, uid), "pod %s was not restarted by the growth", name)
		}
		Expect(mgr.Running()).To(BeTrue(), "the manager is still running")

		deleted := s.expectDeleted(ctx)
		record(row{fault: fmt.Sprintf("etcd stopped for %s while a claim expansion was in flight", outage),
			injected: 1, invariants: append(append(checked, deleted...), invPodUIDs, invRunning), dataLost: s.lost})
	}, NodeTimeout(4*time.Minute))
})
