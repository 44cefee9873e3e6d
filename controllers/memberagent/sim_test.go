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
	"sync"
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
