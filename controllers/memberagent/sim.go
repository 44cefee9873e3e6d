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
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

// The actions of an Engine, as SimEngine.Fail names them.
const (
	ActionObserve            = "observe"
	ActionPromote            = "promote"
	ActionFence              = "fence"
	ActionTransferLeadership = "transfer-leadership"
	ActionAddMember          = "add-member"
	ActionRemoveMember       = "remove-member"
)

// SimEngine is a simulated member held in memory: its role, position, fence and member list,
// safe for concurrent use. It is the engine of the agent's tests and of the benchmark's simulated
// agents. It knows only itself: TransferLeadership makes it a replica and leaves making the
// other member primary to whoever simulates that one.
type SimEngine struct {
	mu       sync.Mutex
	name     string
	role     string
	position uint64
	fenced   bool
	members  []Peer
	failures map[string]error
}

var _ Engine = (*SimEngine)(nil)

// NewSimEngine returns a simulated member name in role (RolePrimary or RoleReplica), unfenced,
// at position 0, whose member list holds itself.
func NewSimEngine(name, role string) *SimEngine {
	return &SimEngine{name: name, role: role, members: []Peer{{Name: name}}, failures: map[string]error{}}
}

// Fail makes every later call of action (ActionPromote ...) return err; a nil err heals it.
func (s *SimEngine) Fail(action string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		delete(s.failures, action)
		return
	}
	s.failures[action] = err
}

// Advance moves the member's position on by n, as a write (primary) or replay (replica) would.
func (s *SimEngine) Advance(n uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.position += n
}

// Observe reports the simulated member; it is writable as an unfenced primary.
func (s *SimEngine) Observe(context.Context) (Observation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failures[ActionObserve]; err != nil {
		return Observation{}, err
	}
	return Observation{
		Member:       s.name,
		Role:         s.role,
		Position:     s.position,
		PositionText: strconv.FormatUint(s.position, 10),
		Writable:     s.role == RolePrimary && !s.fenced,
		Fenced:       s.fenced,
		Members:      slices.Clone(s.members),
	}, nil
}

// Promote makes the member an unfenced primary.
func (s *SimEngine) Promote(context.Context) error {
	return s.act(ActionPromote, func() error {
		s.role, s.fenced = RolePrimary, false
		return nil
	})
}

// Fence fences the member: it keeps its role and stops being writable.
func (s *SimEngine) Fence(context.Context) error {
	return s.act(ActionFence, func() error {
		s.fenced = true
		return nil
	})
}

// TransferLeadership makes the primary a replica, if to is in its member list.
func (s *SimEngine) TransferLeadership(_ context.Context, to string) error {
	return s.act(ActionTransferLeadership, func() error {
		if s.role != RolePrimary {
			return fmt.Errorf("%s is not the primary", s.name)
		}
		if s.find(to) < 0 {
			return fmt.Errorf("no member named %q", to)
		}
		s.role = RoleReplica
		return nil
	})
}

// AddMember adds name to the member list, or does nothing if it is there with peerURL.
func (s *SimEngine) AddMember(_ context.Context, name, peerURL string) error {
	return s.act(ActionAddMember, func() error {
		if i := s.find(name); i >= 0 {
			if !slices.Contains(s.members[i].PeerURLs, peerURL) {
				return fmt.Errorf("member %q has the peer URLs %v, not %s", name, s.members[i].PeerURLs, peerURL)
			}
			return nil
		}
		s.members = append(s.members, Peer{Name: name, PeerURLs: []string{peerURL}})
		return nil
	})
}

// RemoveMember removes name from the member list; a member not in it is removed already.
func (s *SimEngine) RemoveMember(_ context.Context, name string) error {
	return s.act(ActionRemoveMember, func() error {
		if i := s.find(name); i >= 0 {
			s.members = slices.Delete(s.members, i, i+1)
		}
		return nil
	})
}

// act runs change under the lock, unless action has been made to fail.
func (s *SimEngine) act(action string, change func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failures[action]; err != nil {
		return err
	}
	return change()
}

// find is the index of the member name in the member list, -1 if it is not there.
func (s *SimEngine) find(name string) int {
	return slices.IndexFunc(s.members, func(p Peer) bool { return p.Name == name })
}

// LeaderSim is the engine of one of the simulated members of an etcd, Sims (by name, itself
// included): its TransferLeadership makes the target the leader, as etcd does, where SimEngine's
// only makes this member a replica. The tests of the switchover drive it through the agents.
type LeaderSim struct {
	*SimEngine
	// Sims are the etcd's members by name.
	Sims map[string]*SimEngine
	// Transfers, when set, counts the leadership transfers done by any member that shares it.
	Transfers *atomic.Int32
}

var _ Engine = LeaderSim{}

// TransferLeadership hands the leadership to the member to of Sims: it lists every member of Sims
// in this member's list (as etcd's members know each other), makes this member a replica
// (SimEngine.TransferLeadership, which fails unless it is the primary) and promotes to.
func (l LeaderSim) TransferLeadership(ctx context.Context, to string) error {
	target, ok := l.Sims[to]
	if !ok {
		return fmt.Errorf("no simulated member named %q", to)
	}
	for name := range l.Sims {
		// A member listed already answers with an error, and stays as it is.
		_ = l.AddMember(ctx, name, "")
	}
	if err := l.SimEngine.TransferLeadership(ctx, to); err != nil {
		return err
	}
	if l.Transfers != nil {
		l.Transfers.Add(1)
	}
	return target.Promote(ctx)
}
