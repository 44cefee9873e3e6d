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
	"slices"
	"strings"
	"time"
)

// This file holds the questions Plan asks of the members: who reports primary, who is healthy,
// who is the most advanced, and who may still write.

// find returns the member named name.
func find(members []Member, name string) (Member, bool) {
	i := slices.IndexFunc(members, func(m Member) bool { return m.Name == name })
	if i < 0 {
		return Member{}, false
	}
	return members[i], true
}

// reportedPrimaries are the reachable members whose agent reports RolePrimary.
func reportedPrimaries(members []Member) []Member {
	var primaries []Member
	for _, m := range members {
		if m.Reachable && m.Role == RolePrimary {
			primaries = append(primaries, m)
		}
	}
	return primaries
}

// up tells whether m's pod exists and is Ready, and its agent answers.
func up(m Member) bool { return m.Exists && m.Ready && m.Reachable }

// allUp tells whether every member is up: the precondition of every change the operator makes
// by choice (an update, a requested switchover), so that it never takes a second member down.
func allUp(members []Member) bool {
	return !slices.ContainsFunc(members, func(m Member) bool { return !up(m) })
}

// healthyReplica tells whether m may be promoted: up, and reporting RoleReplica.
func healthyReplica(m Member) bool { return up(m) && m.Role == RoleReplica }

// mostAdvanced returns the healthy replica for which ok holds with the highest position; ties
// go to prefer when it is among them, then to the lowest ordinal.
func mostAdvanced(members []Member, prefer string, ok func(Member) bool) (Member, bool) {
	var best Member
	found := false
	for _, m := range members {
		if !healthyReplica(m) || !ok(m) {
			continue
		}
		if !found || ahead(m, best, prefer) {
			best, found = m, true
		}
	}
	return best, found
}

// ahead tells whether a is a better candidate than b: further along, or as far along and
// preferred, or as far along and of a lower ordinal.
func ahead(a, b Member, prefer string) bool {
	switch {
	case a.Position != b.Position:
		return a.Position > b.Position
	case a.Name == prefer || b.Name == prefer:
		return a.Name == prefer
	default:
		return a.Ordinal < b.Ordinal
	}
}

// anyMember is the filter of mostAdvanced that keeps every healthy replica.
func anyMember(Member) bool { return true }

// mayWrite names the members other than target that may still write: neither fenced nor
// reporting RoleReplica. The member demoting (the primary a switchover demotes first) is left
// out while its agent answers, since the switchover demotes it before it promotes target.
// Promoting target is safe only when mayWrite is empty: never two writers.
func mayWrite(members []Member, target, demoting string) []string {
	var names []string
	for _, m := range members {
		switch {
		case m.Name == target, m.Fenced, m.Reachable && m.Role == RoleReplica:
		case m.Name == demoting && m.Reachable:
		default:
			names = append(names, m.Name)
		}
	}
	return names
}

// aheadOf names the healthy replicas further along than to, while from, the primary a
// switchover demotes, no longer reports RolePrimary. While it does, the switchover itself waits,
// after demoting it, until to has replayed all it wrote; once it does not (it was demoted, or
// lost the role some other way), the replicas are what to must have caught up with.
func aheadOf(members []Member, to Member, from string) []string {
	if f, ok := find(members, from); ok && f.Reachable && f.Role == RolePrimary {
		return nil
	}
	var names []string
	for _, m := range members {
		if m.Name != to.Name && healthyReplica(m) && m.Position > to.Position {
			names = append(names, m.Name)
		}
	}
	return names
}

// outdatedReplica returns the outdated member other than primary with the highest ordinal: the
// next pod an update deletes.
func outdatedReplica(members []Member, primary string) (Member, bool) {
	var last Member
	found := false
	for _, m := range members {
		if m.Name != primary && !m.UpToDate && (!found || m.Ordinal > last.Ordinal) {
			last, found = m, true
		}
	}
	return last, found
}

// unavailableFor is how long m has been not Ready or unreachable at now: zero while it is Ready
// and reachable, and when it was first seen unavailable on this very observation.
func unavailableFor(m Member, now time.Time) time.Duration {
	if up(m) || m.UnavailableSince.IsZero() {
		return 0
	}
	return now.Sub(m.UnavailableSince)
}

// names joins the names of members for a message.
func names(members []Member) string {
	out := make([]string, 0, len(members))
	for _, m := range members {
		out = append(out, m.Name)
	}
	return strings.Join(out, ", ")
}
