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

package memberagent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed1b407122/database-operator/test/harness/operands"
)

// startEtcd runs a one-member etcd named m0 for the test's life and returns its client URL.
func startEtcd(t *testing.T) string {
	t.Helper()
	return operands.StartEtcd(t, nil, "m0")[0]
}

// etcdTLS is the https of an etcd that serves a's serving pair; nil without an authority.
func etcdTLS(a *authority) *operands.EtcdTLS {
	if a == nil {
		return nil
	}
	return &operands.EtcdTLS{CAPEM: a.ca.CertPEM, CertPEM: a.serving.CertPEM, KeyPEM: a.serving.KeyPEM, ServerName: memberDNSName}
}

// etcdLeader is the observation of the leader among the members at clients.
func etcdLeader(clients []string, tlsConfig *tls.Config) (Observation, error) {
	var err error
	for _, client := range clients {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		var obs Observation
		obs, err = NewEtcd(client, tlsConfig).Observe(ctx)
		cancel()
		if err == nil && obs.Role == RolePrimary {
			return obs, nil
		}
	}
	return Observation{}, fmt.Errorf("no member is the leader (last error: %w)", err)
}

// putKey writes a key through the gateway, which moves the raft index on.
func putKey(t *testing.T, client string) {
	t.Helper()
	// "a" and "b" base64-encoded, as the gateway takes bytes.
	resp, err := http.Post(client+"/v3/kv/put", "application/json", strings.NewReader(`{"key":"YQ==","value":"Yg=="}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("put: %s", resp.Status)
	}
}

// TestEtcdObserveLeader: the only member of a cluster is its leader, writable and unfenced,
// lists itself, and its position grows with a write.
func TestEtcdObserveLeader(t *testing.T) {
	client := startEtcd(t)
	e := NewEtcd(client, nil)
	ctx := context.Background()
	before, err := e.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if before.Member != "m0" || before.Role != RolePrimary || !before.Writable || before.Fenced {
		t.Fatalf("Observe = %+v, want m0, primary, writable, not fenced", before)
	}
	if len(before.Members) != 1 || before.Members[0].Name != "m0" || before.Members[0].ID == "" {
		t.Fatalf("Members = %+v, want m0 alone", before.Members)
	}
	putKey(t, client)
	after, err := e.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Position <= before.Position || after.PositionText != strconv.FormatUint(after.Position, 10) {
		t.Fatalf("position %d (%q) after a put, want more than %d", after.Position, after.PositionText, before.Position)
	}
}

// TestEtcdAddAndRemoveLearner: AddMember adds an unknown member as a learner, found again by
// the pod name in its peer URL although it has no name yet; a second AddMember asks to promote
// it, which etcd refuses while it has not caught up (it never started), and RemoveMember removes
// it, once and again (idempotent).
func TestEtcdAddAndRemoveLearner(t *testing.T) {
	e := NewEtcd(startEtcd(t), nil)
	ctx := context.Background()
	const peerURL = "http://m1.db-headless.ns.svc:2380"
	if err := e.AddMember(ctx, "m1", peerURL); err != nil {
		t.Fatal(err)
	}
	obs, err := e.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	learner, ok := peerAt(obs.Members, peerURL)
	if !ok || !learner.Learner || len(obs.Members) != 2 {
		t.Fatalf("Members = %+v, want m0 and a learner at %s", obs.Members, peerURL)
	}
	if obs.Role != RolePrimary || !obs.Writable {
		t.Fatalf("Observe after adding a learner = %+v, want the quorum kept", obs)
	}
	if err := e.AddMember(ctx, "m1", peerURL); err == nil || !strings.Contains(err.Error(), "learner") {
		t.Fatalf("promoting a learner that never started: err = %v, want etcd's refusal", err)
	}
	for range 2 {
		if err := e.RemoveMember(ctx, "m1"); err != nil {
			t.Fatal(err)
		}
	}
	if obs, err = e.Observe(ctx); err != nil || len(obs.Members) != 1 {
		t.Fatalf("Members after RemoveMember = %+v, %v, want m0 alone", obs.Members, err)
	}
}

// TestEtcdRefusals: leadership cannot go to a member that does not exist, etcd cannot be
// fenced, and the leader's Promote is a no-op.
func TestEtcdRefusals(t *testing.T) {
	e := NewEtcd(startEtcd(t), nil)
	ctx := context.Background()
	if err := e.TransferLeadership(ctx, "nobody"); err == nil || !strings.Contains(err.Error(), "nobody") {
		t.Fatalf("TransferLeadership to an unknown member: err = %v", err)
	}
	if err := e.Fence(ctx); !isUnsupported(err) {
		t.Fatalf("Fence: err = %v, want ErrUnsupported", err)
	}
	if err := e.Promote(ctx); err != nil {
		t.Fatalf("Promote of the leader: %v", err)
	}
}

// peerAt is the peer reached at peerURL.
func peerAt(peers []Peer, peerURL string) (Peer, bool) {
	for _, p := range peers {
		for _, u := range p.PeerURLs {
			if u == peerURL {
				return p, true
			}
		}
	}
	return Peer{}, false
}

// isUnsupported tells whether err is ErrUnsupported.
func isUnsupported(err error) bool { return errors.Is(err, ErrUnsupported) }

// TestEtcdTransferLeadership: in a cluster of three, the leader hands its role to a follower,
// which is then observed as the leader; a follower cannot Promote itself.
func TestEtcdTransferLeadership(t *testing.T) {
	clients := operands.StartEtcd(t, nil, "m0", "m1", "m2")
	ctx := context.Background()
	leader, err := etcdLeader(clients, nil)
	if err != nil {
		t.Fatal(err)
	}
	to := "m0"
	if leader.Member == to {
		to = "m1"
	}
	index, _ := strconv.Atoi(strings.TrimPrefix(to, "m"))
	follower := NewEtcd(clients[index], nil)
	if err := follower.Promote(ctx); !isUnsupported(err) {
		t.Fatalf("Promote of a follower: err = %v, want ErrUnsupported", err)
	}
	from, _ := strconv.Atoi(strings.TrimPrefix(leader.Member, "m"))
	if err := NewEtcd(clients[from], nil).TransferLeadership(ctx, to); err != nil {
		t.Fatal(err)
	}
	if obs := observe(t, follower); obs.Member != to || obs.Role != RolePrimary || !obs.Writable {
		t.Fatalf("Observe of %s after the transfer = %+v, want the leader", to, obs)
	}
}

// TestEtcdOverTLS: the engine reaches an https member through the cluster's CA, naming the
// member's certificate while it dials 127.0.0.1, and refuses a member another CA vouches for.
func TestEtcdOverTLS(t *testing.T) {
	a := newAuthority(t, "db-ca")
	client := operands.StartEtcd(t, etcdTLS(&a), "m0")[0]
	if obs := observe(t, NewEtcd(client, etcdTLS(&a).ClientConfig())); obs.Role != RolePrimary {
		t.Fatalf("Observe over TLS = %+v, want the leader", obs)
	}
	other := newAuthority(t, "other-ca")
	if _, err := NewEtcd(client, etcdTLS(&other).ClientConfig()).Observe(context.Background()); err == nil {
		t.Fatal("the engine trusted a member whose certificate another CA signed")
	}
}
