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

// Package memberagent is the member agent: the part of the in-pod agent that observes and
// changes the role of its database member (primary or replica, its position in the log, the
// member list), and the operator's client for it.
//
// Each database engine is one implementation of Engine in a file of its own (etcd.go,
// postgresql.go), so that a third engine is one more file; SimEngine is an in-memory engine for
// tests and for the benchmark's simulated agents. The agent serves an Engine over HTTPS with
// mutual TLS only (server.go): it changes a database's roles, so it answers the operator alone,
// known by a client certificate that the cluster's CA issued with the CommonName
// OperatorClientName. The operator calls it with Client (client.go).
//
// How it is to be wired (not done in this package): a mode of the manager binary beside the
// storage agent ("manager member-agent"), running as a native sidecar in the database pods and
// listening on Port (9191) of the pod's IP. It dials its own member on 127.0.0.1 (etcd's client
// URL, PostgreSQL's DSN). Its certificates are mounted from a Secret that the operator issues
// from the cluster's CA (controllers/internal/certs): ca.crt, and the member's serving pair in
// tls.crt and tls.key; ServerTLSConfig reads them from that directory and reads them again
// when the kubelet updates the Secret's files. The operator keeps its own client pair, issued
// by NewClientCertificate from the same CA.
package memberagent

import (
	"context"
	"errors"
)

// The roles a member reports.
const (
	// RolePrimary is the member that accepts writes: etcd's leader, PostgreSQL's primary.
	RolePrimary = "primary"
	// RoleReplica is every other member.
	RoleReplica = "replica"
)

// ErrUnsupported is what an engine returns, wrapped with the reason, for an action it does not
// have (etcd cannot be fenced by hand, PostgreSQL cannot hand its role over); the agent answers
// it with 501 Not Implemented and the client returns it again, so that the operator can take
// another way (PostgreSQL: fence the primary, then promote the replica).
var ErrUnsupported = errors.New("the engine does not support this action")

// ErrStopped is the error of an observation that finds no database server running beside the
// agent: nothing listens at the server's address in the pod (the connection is refused), so no
// client can write to it now. A frozen server is not stopped: its socket still takes
// connections, which then time out. The agent answers it with 503 Service Unavailable and the
// client returns it again.
var ErrStopped = errors.New("no database server runs: nothing listens at its address")

// Engine is one database engine's way to observe and change the role of the member it runs
// beside. Every method acts on that member only, through its local endpoint, and returns when
// the database has answered; none of them waits for the other members.
type Engine interface {
	// Observe reports the role and position of this member.
	Observe(ctx context.Context) (Observation, error)
	// Promote makes this member the writable primary.
	Promote(ctx context.Context) error
	// Fence stops this member accepting writes (a demotion that keeps it running).
	Fence(ctx context.Context) error
	// TransferLeadership hands the primary role from this member to the member named to.
	TransferLeadership(ctx context.Context, to string) error
	// AddMember adds the member name, reached by its peers at peerURL, to the cluster.
	AddMember(ctx context.Context, name, peerURL string) error
	// RemoveMember removes the member name from the cluster.
	RemoveMember(ctx context.Context, name string) error
}

// Observation is what a member reports of itself.
type Observation struct {
	// Member is this member's name.
	Member string `json:"member"`
	// Role is RolePrimary or RoleReplica.
	Role string `json:"role"`
	// Position is how far this member is in the log: PostgreSQL's LSN as a number, etcd's
	// applied raft index. Positions compare between the members of one cluster only.
	Position uint64 `json:"position"`
	// PositionText is Position as the engine writes it: an LSN "0/3000060", a raft index.
	PositionText string `json:"positionText"`
	// Writable tells whether this member accepts a write now.
	Writable bool `json:"writable"`
	// Fenced tells whether this member has been fenced (Fence) and not promoted since.
	Fenced bool `json:"fenced"`
	// Members is the cluster's member list where the engine keeps one (etcd).
	Members []Peer `json:"members,omitempty"`
}

// Peer is one member of the cluster's member list.
type Peer struct {
	// Name is the member's name; etcd knows it only once the member has started.
	Name string `json:"name,omitempty"`
	// ID is the engine's identifier of the member (etcd's member ID, in decimal).
	ID string `json:"id,omitempty"`
	// PeerURLs are where the other members reach it.
	PeerURLs []string `json:"peerURLs,omitempty"`
	// ClientURLs are where clients reach it.
	ClientURLs []string `json:"clientURLs,omitempty"`
	// Learner tells whether it is a non-voting member that is catching up (etcd's learner).
	Learner bool `json:"learner,omitempty"`
}

// ListedName is the member's name: the one it reported, or, for a member that has not started
// yet, the first label of its first peer URL's host, which is the pod's name in the operator's
// peer URLs.
func (p Peer) ListedName() string {
	if p.Name != "" {
		return p.Name
	}
	return hostLabel(p.PeerURLs)
}
