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
	"context"
	"net"
	"strconv"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/certs"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// memberAgents are the member agents of the specs' pods, by pod name: the real agent server
// (memberagent.Serve, mutual TLS) on 127.0.0.1 in front of a simulated engine, since envtest's
// pods run nothing.
type memberAgents struct {
	mu    sync.Mutex
	addrs map[string]string
}

// serve starts the agent of member pod with engine and the serving pair until the spec ends.
func (a *memberAgents) serve(pod string, engine memberagent.Engine, caPEM []byte, serving certs.Pair) {
	cfg, err := memberagent.ServerConfig(caPEM, serving.CertPEM, serving.KeyPEM)
	Expect(err).NotTo(HaveOccurred())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = memberagent.Serve(ctx, l, engine, cfg) }()
	DeferCleanup(cancel)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.addrs[pod] = l.Addr().String()
}

func (a *memberAgents) address(pod *corev1.Pod) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.addrs[pod.Name]
}

// The envtest specs of the roles phase: the operator reads each member through its agent over
// mutual TLS and publishes the roles in the pods' labels and the status.
var _ = Describe("DatabaseCluster roles", Ordered, Label("integration"), func() {
	agents := &memberAgents{addrs: map[string]string{}}
	k8s := testenv.StartInBeforeAll(func(mgr ctrl.Manager) error {
		return (&Reconciler{ReconcilerBase: testenv.ReconcilerBase(mgr), PodReadyTimeout: podReadyTimeout,
			Members: &AgentMembers{APIReader: mgr.GetAPIReader(), Address: agents.address}, ObserveInterval: 200 * time.Millisecond}).SetupWithManager(mgr)
	})
	clusters := testenv.Kind[*databasev1alpha1.DatabaseCluster, *appsv1.StatefulSet]{
		Env: k8s, Name: "DatabaseCluster", ChildName: (*databasev1alpha1.DatabaseCluster).StatefulSetName,
	}
	// member makes the Ready, Running pod of ordinal.
	member := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, sts *appsv1.StatefulSet, ordinal int) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: dc.Name + "-" + strconv.Itoa(ordinal), Namespace: dc.Namespace, Labels: dc.Labels(),
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "database", Image: dc.Spec.Image}}},
		}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0." + strconv.Itoa(ordinal+1), Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}}
		Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
	}
	roleLabels := func(ctx SpecContext, ns string) func(Gomega) map[string]string {
		return func(g Gomega) map[string]string {
			var pods corev1.PodList
			g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns))).To(Succeed())
			out := map[string]string{}
			for _, p := range pods.Items {
				out[p.Name] = p.Labels[databasev1alpha1.RoleLabel]
			}
			return out
		}
	}
	published := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster) func(Gomega) []any {
		return func(g Gomega) []any {
			cur := clusters.Current(ctx, dc)(g)
			return []any{cur.Status.CurrentPrimary, cur.Status.Members}
		}
	}
	status := func(name string, role databasev1alpha1.MemberRole, position string) databasev1alpha1.MemberStatus {
		return databasev1alpha1.MemberStatus{Name: name, Role: role, Position: position}
	}

	It("publishes the roles the agents report, follows a role change, and routes no writes in a split brain", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "dbc-")), withEngine(databasev1alpha1.EngineEtcd))
		dc.Spec.TLS = &databasev1alpha1.TLSSpec{}
		sts := clusters.Create(ctx, dc)
		secret := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.CASecretName()}, secret)).To(Succeed())
		ca, err := certs.PairFromSecretData(secret.Data)
		Expect(err).NotTo(HaveOccurred())
		impostorCA, err := certs.NewCA("impostor", time.Now())
		Expect(err).NotTo(HaveOccurred())

		engines := []*memberagent.SimEngine{
			memberagent.NewSimEngine("db-0", memberagent.RolePrimary),
			memberagent.NewSimEngine("db-1", memberagent.RoleReplica),
			memberagent.NewSimEngine("db-2", memberagent.RoleReplica),
		}
		engines[0].Advance(300)
		engines[1].Advance(200)
		for i, engine := range engines {
			name := "db-" + strconv.Itoa(i)
			issuer := ca
			if i == 2 {
				issuer = impostorCA // an agent the cluster's CA did not certify is not believed
			}
			serving, err := certs.NewServing(issuer, []string{memberDNSName(dc, name)}, time.Now())
			Expect(err).NotTo(HaveOccurred())
			agents.serve(name, engine, ca.CertPEM, serving)
			member(ctx, dc, sts, i)
		}
		ns := dc.Namespace
		Eventually(roleLabels(ctx, ns)).Should(Equal(map[string]string{"db-0": "primary", "db-1": "replica", "db-2": ""}))
		Eventually(published(ctx, dc)).Should(Equal([]any{"db-0", []databasev1alpha1.MemberStatus{
			status("db-0", "primary", "300"), status("db-1", "replica", "200"), status("db-2", "unknown", ""),
		}}))

		By("a role change the database made: db-1 is the primary")
		Expect(engines[0].AddMember(ctx, "db-1", "")).To(Succeed())
		Expect(engines[0].TransferLeadership(ctx, "db-1")).To(Succeed())
		Expect(engines[1].Promote(ctx)).To(Succeed())
		Eventually(roleLabels(ctx, ns)).Should(Equal(map[string]string{"db-0": "replica", "db-1": "primary", "db-2": ""}))
		Eventually(published(ctx, dc)).Should(HaveExactElements("db-1", HaveLen(3)))
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(Equal([]string{"False", "AsExpected", "every child is as specified"}))

		By("a split brain: db-0 claims the role too")
		Expect(engines[0].Promote(ctx)).To(Succeed())
		Eventually(roleLabels(ctx, ns)).Should(Equal(map[string]string{"db-0": "", "db-1": "", "db-2": ""}))
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(Equal([]string{"True", "SplitBrain",
			"db-0 and db-1 each report themselves primary: no member is routed to for writes (db-rw) until one of them steps down"}))
		Expect(published(ctx, dc)(Default)[0]).To(Equal("db-1"), "the status keeps the last primary observed alone")

		By("db-0 steps down")
		Expect(engines[0].AddMember(ctx, "db-1", "")).To(Succeed())
		Expect(engines[0].TransferLeadership(ctx, "db-1")).To(Succeed())
		Eventually(roleLabels(ctx, ns)).Should(Equal(map[string]string{"db-0": "replica", "db-1": "primary", "db-2": ""}))
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(Equal([]string{"False", "AsExpected", "every child is as specified"}))
	})
})
