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

package roles

import (
	"flag"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// The safety property: Plan, run by a simulated operator over a simulated cluster with faults
// (sim_test.go), never makes two writers, never deletes the primary for an update while a
// replica could take over, never takes two members down, never promotes a replica behind a more
// advanced one, reports a switchover done only when it is, and settles once the faults end.

// seedFlag replays one seed of the property (ROLES_SEED does the same).
var seedFlag = flag.Int64("roles.seed", 0, "replay this seed of the roles safety property (0: the default seeds)")

// The property's size: seeds, faulty steps per seed, and at most so many quiet steps after.
const (
	propertySeeds = 200
	faultySteps   = 500
	quietSteps    = 300
)

// seedsFlag runs more (or fewer) seeds than propertySeeds, for a deeper search.
var seedsFlag = flag.Int("roles.seeds", propertySeeds, "how many seeds the roles safety property runs")

// seeds are the seeds to run: the one replayed, or 1..-roles.seeds.
func seeds(t *testing.T) []int64 {
	t.Helper()
	if *seedFlag != 0 {
		return []int64{*seedFlag}
	}
	if env := os.Getenv("ROLES_SEED"); env != "" {
		seed, err := strconv.ParseInt(env, 10, 64)
		if err != nil {
			t.Fatalf("ROLES_SEED=%q is not a number: %v", env, err)
		}
		return []int64{seed}
	}
	out := make([]int64, 0, *seedsFlag)
	for i := range *seedsFlag {
		out = append(out, int64(i+1))
	}
	return out
}

func TestSafetyProperty(t *testing.T) {
	began := time.Now()
	steps := 0
	seen := map[string]int{}
	slowest := 0
	for _, seed := range seeds(t) {
		s := newSim(seed, Plan)
		if v := s.run(faultySteps, quietSteps); v != "" {
			t.Fatalf("the roles safety property is broken:\n%s", s.report())
		}
		steps += s.step
		slowest = max(slowest, s.quiet)
		for k, n := range s.seen {
			seen[k] += n
		}
	}
	t.Logf("%d steps over %d seeds in %s; the slowest settled %d steps after its faults ended",
		steps, len(seeds(t)), time.Since(began).Round(time.Millisecond), slowest)
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		t.Logf("  %6d %s", seen[k], k)
	}
}

// brokenPlanners are planners with one of Plan's safeguards taken away by what they feed it; the
// property must catch each.
var brokenPlanners = []struct {
	name string
	plan func(Input) Decision
}{
	{"ignores fencing: every member seen fenced", func(in Input) Decision {
		in.Members = withEach(in.Members, func(m *Member) { m.Fenced = true })
		return Plan(in)
	}},
	{"ignores readiness: every member seen Ready", func(in Input) Decision {
		in.Members = withEach(in.Members, func(m *Member) { m.Exists, m.Ready = true, true })
		return Plan(in)
	}},
	{"prefers the least advanced replica", func(in Input) Decision {
		in.Members = withEach(in.Members, func(m *Member) { m.Position = math.MaxUint64 - m.Position })
		return Plan(in)
	}},
	{"restarts the primary for updates", func(in Input) Decision {
		in.Policy.UpdateMethod = UpdateRestart
		return Plan(in)
	}},
	{"reports done once the target answers", func(in Input) Decision {
		d := Plan(in)
		if sw := in.Progress.Switchover; sw != nil && d.Done == nil {
			if to, ok := find(in.Members, sw.To); ok && to.Reachable {
				d.Done, d.Progress.Switchover = sw, nil
			}
		}
		return d
	}},
}

// withEach is a copy of members with change applied to each.
func withEach(members []Member, change func(*Member)) []Member {
	out := append([]Member(nil), members...)
	for i := range out {
		change(&out[i])
	}
	return out
}

// TestSafetyPropertyCatchesBrokenPlanners shows the property can fail: each broken planner
// breaks it within the default seeds.
func TestSafetyPropertyCatchesBrokenPlanners(t *testing.T) {
	for _, broken := range brokenPlanners {
		t.Run(broken.name, func(t *testing.T) {
			for seed := int64(1); seed <= propertySeeds; seed++ {
				s := newSim(seed, broken.plan)
				if v := s.run(faultySteps, quietSteps); v != "" {
					t.Logf("caught at seed %d, step %d: %s", seed, s.step, v)
					return
				}
			}
			t.Fatalf("no seed caught the planner that %s", broken.name)
		})
	}
}
