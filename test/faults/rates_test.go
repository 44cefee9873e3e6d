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
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/faultproxy"
	"github.com/seed1b407122/database-operator/test/harness/manager"
)

// faultClass is one class of injected fault and the cluster that lives through it.
type faultClass struct {
	label string
	rule  faultproxy.Rule
	// global rules apply to requests across all namespaces (watches have no namespace);
	// the others only to the class's own namespace.
	global  bool
	subject *subject
	checked []string
}

// Every class at once, one cluster (in its own namespace) per class, each created, scaled up,
// grown, scaled down and deleted while the proxy injects the class's fault into a share of the
// manager's requests in that namespace (dropped watches: into every watch). Running the classes
// side by side keeps the tier within its time budget; each cluster is checked on its own.
var _ = Describe("faults injected at a rate while clusters are created, scaled, grown and deleted", Ordered, func() {
	var (
		mgr      *manager.Process
		injected map[string]int
		rules    []faultproxy.Rule
	)
	classes := []*faultClass{
		{label: "409 Conflict, 30% of writes", rule: faultproxy.Rule{Fault: faultproxy.Conflict, Rate: 0.3,
			Match: faultproxy.Match{Verbs: faultproxy.WriteVerbs}}},
		{label: "500 Internal Server Error, 30%", rule: faultproxy.Rule{Fault: faultproxy.InternalError, Rate: 0.3}},
		{label: "503 Service Unavailable, 30%", rule: faultproxy.Rule{Fault: faultproxy.Unavailable, Rate: 0.3}},
		{label: "429 Too Many Requests with Retry-After: 1, 30%", rule: faultproxy.Rule{Fault: faultproxy.TooManyRequests, Rate: 0.3, RetryAfter: 1}},
		{label: "timeout: held 1 s, not applied, 504; 20%", rule: faultproxy.Rule{Fault: faultproxy.Timeout, Rate: 0.2, Delay: time.Second}},
		{label: "timeout: applied, answer lost, 504 after 1 s; 20%", rule: faultproxy.Rule{Fault: faultproxy.Timeout, Rate: 0.2, Delay: time.Second, Forward: true}},
		{label: "latency +300 ms, 50%", rule: faultproxy.Rule{Fault: faultproxy.Latency, Rate: 0.5, Delay: 300 * time.Millisecond}},
		{label: "watch dropped after 2 s, 50% of watches", rule: faultproxy.Rule{Fault: faultproxy.DropWatch, Rate: 0.5, Delay: 2 * time.Second}, global: true},
	}
	subjects := func() []*subject {
		var out []*subject
		for _, c := range classes {
			out = append(out, c.subject)
		}
		return out
	}
	// forEachClass runs fn for every class at once.
	forEachClass := func(fn func(*faultClass)) {
		byNamespace := map[string]*faultClass{}
		for _, c := range classes {
			byNamespace[c.subject.dc.Namespace] = c
		}
		forEach(subjects(), func(s *subject) { fn(byNamespace[s.dc.Namespace]) })
	}

	BeforeAll(func(ctx SpecContext) {
		for i, c := range classes {
			// Half the clusters delete the claims of removed members and of the cluster, half
			// keep them.
			policy := databasev1alpha1.RetainPVC
			if i%2 == 1 {
				policy = databasev1alpha1.DeletePVC
			}
			c.subject = newSubject(fmt.Sprintf("faults-rate-%d", i), "db", 2, policy, policy)
			c.rule.Name = c.label
			if !c.global {
				c.rule.Namespace = c.subject.dc.Namespace
			}
			rules = append(rules, c.rule)
		}
		injected = proxy.Injected()
		mgr = startPlainManager(ctx, "rates")
	}, NodeTimeout(2*time.Minute))

	AfterEach(func() {
		if CurrentSpecReport().Failed() && mgr != nil {
			printLogTail(mgr.LogPath)
		}
	})

	AfterAll(func() {
		proxy.SetRules()
		if mgr != nil {
			Expect(mgr.Stop(30*time.Second)).To(Succeed(), "the manager exits 0 on SIGINT")
		}
	})

	// underFaults makes change to every cluster with the faults on and lets the operator work
	// through them for faultWindow. Then it turns them off and waits until check passes for
	// every cluster: controller-runtime's per-item backoff doubles with every failed reconcile
	// (from 5 ms, reset only by a success), so with 30% of every request failing, a deletion of
	// five requests per pass can wait minutes for its next try; what the tier asserts is the
	// state the operator reaches, not how fast it retries. Last, one quiet window for all
	// clusters with the faults on again: a dropped watch or an answer fault must not make the
	// operator write.
	underFaults := func(ctx SpecContext, change func(*faultClass), check func(*faultClass)) {
		proxy.SetRules(rules...)
		forEachClass(change)
		select {
		case <-ctx.Done():
		case <-time.After(faultWindow):
		}
		proxy.SetRules()
		forEachClass(check)
		proxy.SetRules(rules...)
		expectQuiet(ctx)
		proxy.SetRules()
		Expect(mgr.Running()).To(BeTrue(), "the manager is still running")
	}
	converged := func(ctx context.Context) func(*faultClass) {
		return func(c *faultClass) { c.checked = append(c.checked, c.subject.waitConverged(ctx)...) }
	}

	It("creates every cluster", func(ctx SpecContext) {
		began := time.Now()
		underFaults(ctx, func(c *faultClass) { c.subject.create(ctx) }, converged(ctx))
		AddReportEntry("create → converged (8 clusters of 2)", time.Since(began).Round(time.Millisecond).String())
	}, NodeTimeout(3*time.Minute))

	It("scales every cluster up from 2 to 3", func(ctx SpecContext) {
		began := time.Now()
		underFaults(ctx, func(c *faultClass) {
			c.subject.edit(ctx, func(spec *databasev1alpha1.DatabaseClusterSpec) { spec.Replicas = ptr.To[int32](3) })
		}, converged(ctx))
		AddReportEntry("2 → 3 converged", time.Since(began).Round(time.Millisecond).String())
	}, NodeTimeout(3*time.Minute))

	It("grows every cluster's storage from 1Gi to 2Gi without restarting a pod", func(ctx SpecContext) {
		began := time.Now()
		pods := map[*faultClass]map[string]types.UID{}
		var mu sync.Mutex
		underFaults(ctx, func(c *faultClass) {
			uids := c.subject.podUIDs(ctx)
			mu.Lock()
			pods[c] = uids
			mu.Unlock()
			c.subject.edit(ctx, func(spec *databasev1alpha1.DatabaseClusterSpec) { spec.Storage.Size = "2Gi" })
		}, func(c *faultClass) {
			converged(ctx)(c)
			Expect(c.subject.podUIDs(ctx)).To(Equal(pods[c]), "%s: no pod was restarted by the growth", c.label)
			c.checked = append(c.checked, invPodUIDs)
		})
		AddReportEntry("1Gi → 2Gi converged", time.Since(began).Round(time.Millisecond).String())
	}, NodeTimeout(3*time.Minute))

	It("scales every cluster down from 3 to 2, deleting the third claim only where asked", func(ctx SpecContext) {
		began := time.Now()
		underFaults(ctx, func(c *faultClass) {
			if c.subject.dc.WhenScaled() == databasev1alpha1.DeletePVC {
				c.subject.forgetClaimsFrom(2)
			}
			c.subject.edit(ctx, func(spec *databasev1alpha1.DatabaseClusterSpec) { spec.Replicas = ptr.To[int32](2) })
		}, converged(ctx))
		AddReportEntry("3 → 2 converged", time.Since(began).Round(time.Millisecond).String())
	}, NodeTimeout(3*time.Minute))

	It("deletes every cluster, keeping the claims where whenDeleted is Retain", func(ctx SpecContext) {
		began := time.Now()
		underFaults(ctx, func(c *faultClass) { c.subject.delete(ctx) }, func(c *faultClass) {
			c.checked = append(c.checked, c.subject.waitDeleted(ctx)...)
		})
		AddReportEntry("delete → gone", time.Since(began).Round(time.Millisecond).String())

		now := proxy.Injected()
		for _, c := range classes {
			n := now[c.label] - injected[c.label]
			Expect(n).To(BeNumerically(">", 0), "%s: the proxy injected nothing", c.label)
			record(row{fault: c.label, injected: n, invariants: append(c.checked, invQuiet, invRunning), dataLost: c.subject.lost})
		}
		GinkgoWriter.Printf("injected: %v\n", maps.Collect(maps.All(now)))
	}, NodeTimeout(3*time.Minute))
})
