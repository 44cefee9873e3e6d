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
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/controllers/internal/certs"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// countingReader counts the Gets it passes on to the API server.
type countingReader struct {
	client.Reader
	gets atomic.Int32
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets.Add(1)
	return c.Reader.Get(ctx, key, obj, opts...)
}

var _ = Describe("AgentMembers' client", Ordered, Label("integration"), func() {
	k8s := testenv.StartInBeforeAll(func(ctrl.Manager) error { return nil })

	It("reads the cluster's CA Secret once a minute, not at every member read, and again after a failed call", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "agent-")))
		ca, err := certs.NewCA("test CA", time.Now())
		Expect(err).NotTo(HaveOccurred())
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: dc.Namespace, Name: dc.CASecretName()},
			Data: ca.SecretData()})).To(Succeed())
		agents := &memberAgents{addrs: map[string]string{}}
		serving, err := certs.NewServing(ca, []string{memberDNSName(dc, "db-0")}, time.Now())
		Expect(err).NotTo(HaveOccurred())
		agents.serve("db-0", memberagent.NewSimEngine("db-0", memberagent.RolePrimary), ca.CertPEM, serving)
		reader := &countingReader{Reader: k8s}
		clock := clocktesting.NewFakeClock(time.Now())
		members := &AgentMembers{APIReader: reader, Address: agents.address, Clock: clock}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: dc.Namespace, Name: "db-0"}}

		for range 5 {
			obs, err := members.Observe(ctx, dc, pod)
			Expect(err).NotTo(HaveOccurred())
			Expect(obs.Member).To(Equal("db-0"))
			clock.Step(10 * time.Second)
		}
		Expect(reader.gets.Load()).To(Equal(int32(1)), "five reads within a minute: one read of the CA Secret")

		clock.Step(20 * time.Second)
		_, err = members.Observe(ctx, dc, pod)
		Expect(err).NotTo(HaveOccurred())
		Expect(reader.gets.Load()).To(Equal(int32(2)), "a minute on: the CA Secret read again")

		agents.refuse("db-0")
		_, err = members.Observe(ctx, dc, pod)
		Expect(err).To(HaveOccurred())
		Expect(reader.gets.Load()).To(Equal(int32(2)))
		_, err = members.Observe(ctx, dc, pod)
		Expect(err).To(HaveOccurred())
		Expect(reader.gets.Load()).To(Equal(int32(3)), "after a failed call the CA Secret is read again")

		By("a cluster's members read at once, the CA due: one read of the Secret")
		serving2, err := certs.NewServing(ca, []string{memberDNSName(dc, "db-0")}, time.Now())
		Expect(err).NotTo(HaveOccurred())
		agents.serve("db-0", memberagent.NewSimEngine("db-0", memberagent.RolePrimary), ca.CertPEM, serving2)
		clock.Step(2 * time.Minute)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				defer GinkgoRecover()
				_, err := members.Observe(ctx, dc, pod)
				Expect(err).NotTo(HaveOccurred())
			})
		}
		wg.Wait()
		Expect(reader.gets.Load()).To(Equal(int32(4)), "eight reads at once: one read of the CA Secret")
	})
})
