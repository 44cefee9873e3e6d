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
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSimEngineConcurrently: writers, observers and actions at once lose no write and leave the
// member list whole (run with -race to check the locking too).
func TestSimEngineConcurrently(t *testing.T) {
	sim := NewSimEngine("db-0", RolePrimary)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			name := fmt.Sprintf("db-%d", i+1)
			for range 100 {
				sim.Advance(1)
				_, _ = sim.Observe(ctx)
			}
			if err := sim.AddMember(ctx, name, "https://"+name+":2380"); err != nil {
				t.Error(err)
			}
			_ = sim.Fence(ctx)
			_ = sim.Promote(ctx)
		})
	}
	wg.Wait()
	obs := observe(t, sim)
	if obs.Position != 800 || len(obs.Members) != 9 || obs.Role != RolePrimary || !obs.Writable {
		t.Fatalf("Observe = %+v, want position 800, 9 members, a writable primary", obs)
	}
}

// TestLeaderSimTransferLeadership: a transfer makes the target the only primary and is counted
// once; a transfer from a replica, to a member that is not simulated, or that was made to fail
// changes no role and is not counted.
func TestLeaderSimTransferLeadership(t *testing.T) {
	ctx := context.Background()
	sims := map[string]*SimEngine{"db-0": NewSimEngine("db-0", RolePrimary), "db-1": NewSimEngine("db-1", RoleReplica),
		"db-2": NewSimEngine("db-2", RoleReplica)}
	transfers := &atomic.Int32{}
	engine := func(name string) LeaderSim { return LeaderSim{SimEngine: sims[name], Sims: sims, Transfers: transfers} }
	roles := func() string {
		return observe(t, sims["db-0"]).Role + " " + observe(t, sims["db-1"]).Role + " " + observe(t, sims["db-2"]).Role
	}

	if err := engine("db-0").TransferLeadership(ctx, "db-2"); err != nil {
		t.Fatal(err)
	}
	if got, want := roles(), "replica replica primary"; got != want || transfers.Load() != 1 {
		t.Fatalf("after db-0 -> db-2: roles %q, %d transfers; want %q, 1", got, transfers.Load(), want)
	}
	if members := observe(t, sims["db-0"]).Members; len(members) != 3 {
		t.Fatalf("db-0's members after the transfer = %+v, want the three", members)
	}

	boom := errors.New("boom")
	sims["db-2"].Fail(ActionTransferLeadership, boom)
	for _, tc := range []struct {
		from, to string
		want     string
	}{
		{"db-1", "db-0", "db-1 is not the primary"},
		{"db-2", "db-9", `no simulated member named "db-9"`},
		{"db-2", "db-0", "boom"},
	} {
		err := engine(tc.from).TransferLeadership(ctx, tc.to)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s -> %s: err = %v, want %q", tc.from, tc.to, err, tc.want)
		}
	}
	if got, want := roles(), "replica replica primary"; got != want || transfers.Load() != 1 {
		t.Fatalf("after the refused transfers: roles %q, %d transfers; want %q, 1", got, transfers.Load(), want)
	}

	// Without a counter the transfer is done all the same.
	sims["db-2"].Fail(ActionTransferLeadership, nil)
	if err := (LeaderSim{SimEngine: sims["db-2"], Sims: sims}).TransferLeadership(ctx, "db-1"); err != nil {
		t.Fatal(err)
	}
	if got, want := roles(), "replica primary replica"; got != want {
		t.Fatalf("after db-2 -> db-1: roles %q, want %q", got, want)
	}
}
