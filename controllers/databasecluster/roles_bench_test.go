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
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/controllers/internal/certs"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
)

// BenchmarkReadMembers is the cost of the roles phase's read of a cluster of 3 members: three
// real agents (memberagent.Serve, mutual TLS, simulated engines) on 127.0.0.1 and the operator's
// reader, each read a new TLS 1.3 connection (the client keeps none: a pod's IP may change). It
// reports the CPU of the whole process (operator and agents) per member read, from getrusage,
// and the operator's share is below it. At the default interval (10 s) a member is read 6 times
// a minute: manager CPU per member per minute ≤ 6 × cpu-µs/member-read; at N=1,000 clusters of
// 3 members, 300 reads a second.
//
//	go test ./controllers/databasecluster/ -run '^$' -bench ReadMembers -benchtime 2000x
func BenchmarkReadMembers(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ca, err := certs.NewCA("bench", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	dc := newCluster("db")
	dc.Namespace = "bench"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: dc.CASecretName()}, Data: ca.SecretData()}
	addrs := map[string]string{}
	var pods []corev1.Pod
	for i := range 3 {
		name := "db-" + strconv.Itoa(i)
		addrs[name] = benchAgent(ctx, b, ca, memberDNSName(dc, name), memberagent.NewSimEngine(name, memberagent.RoleReplica))
		pods = append(pods, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench"},
			Status: corev1.PodStatus{PodIP: "10.0.0." + strconv.Itoa(i+1)}})
	}
	r := &Reconciler{Members: &AgentMembers{
		APIReader: fake.NewClientBuilder().WithScheme(scheme.Must()).WithObjects(secret).Build(),
		Address:   func(pod *corev1.Pod) string { return addrs[pod.Name] },
	}}
	if reads := r.readMembers(ctx, dc, pods); reads[0].err != nil {
		b.Fatal(reads[0].err)
	}
	before := cpuTime(b)
	b.ResetTimer()
	for range b.N {
		for _, read := range r.readMembers(ctx, dc, pods) {
			if read.err != nil {
				b.Fatal(read.err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-before).Microseconds())/float64(3*b.N), "cpu-µs/member-read")
}

// benchAgent serves engine for serverName, certified by ca, on 127.0.0.1 until ctx ends, and
// returns its address.
func benchAgent(ctx context.Context, b *testing.B, ca certs.Pair, serverName string, engine memberagent.Engine) string {
	serving, err := certs.NewServing(ca, []string{serverName}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := memberagent.ServerConfig(ca.CertPEM, serving.CertPEM, serving.KeyPEM)
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = memberagent.Serve(ctx, l, engine, cfg) }()
	return l.Addr().String()
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
