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
	corev1 "k8s.io/api/core/v1"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
)

// publishedRoles is what the operator publishes of one read of the members.
type publishedRoles struct {
	// members are the members' roles and positions, in the pods' order.
	members []databasev1alpha1.MemberStatus
	// primary is the member observed as the only primary, or, when none or several are, the
	// one last observed alone (status.currentPrimary).
	primary string
	// primaries are the members that report themselves primary; two or more is a split brain.
	primaries []string
	// labels are the role labels to set, by pod name: "" removes the label; a pod not named
	// keeps the label it has.
	labels map[string]string
}

// publishRoles decides, from one read of every member (reads, in the order of pods), what the
// status shows and which role label each pod carries. The primary label, which NAME-rw routes
// by, goes to one pod only, and only to the member observed as the only primary: with two
// members claiming the role (a split brain) neither carries it, so that no client writes to
// either through NAME-rw; a member whose agent did not answer loses the label when another
// member is observed as the primary, and keeps the label it has otherwise (an agent that misses
// one read must not cut the writes of a primary nobody else claims to be).
func publishRoles(pods []corev1.Pod, reads []memberRead, lastPrimary string) publishedRoles {
	out := publishedRoles{primary: lastPrimary, labels: map[string]string{}}
	for _, read := range reads {
		if reportsPrimary(read) {
			out.primaries = append(out.primaries, read.pod)
		}
	}
	if len(out.primaries) == 1 {
		out.primary = out.primaries[0]
	}
	for i, read := range reads {
		out.members = append(out.members, memberStatus(read))
		if role, ok := roleLabel(read, out.primaries, pods[i].Labels[databasev1alpha1.RoleLabel]); ok {
			out.labels[read.pod] = role
		}
	}
	return out
}

// memberStatus is the status of the member read.
func memberStatus(read memberRead) databasev1alpha1.MemberStatus {
	if read.err != nil {
		return databasev1alpha1.MemberStatus{Name: read.pod, Role: databasev1alpha1.MemberRoleUnknown}
	}
	role := databasev1alpha1.MemberRoleReplica
	if reportsPrimary(read) {
		role = databasev1alpha1.MemberRolePrimary
	}
	return databasev1alpha1.MemberStatus{Name: read.pod, Role: role, Position: read.observation.PositionText}
}

// roleLabel is the role label of the member read, whose pod now carries current, given the
// members that report themselves primary; false keeps the label as it is.
func roleLabel(read memberRead, primaries []string, current string) (string, bool) {
	primary := string(databasev1alpha1.MemberRolePrimary)
	switch {
	case read.err != nil && current == primary && len(primaries) > 0:
		return "", true // another member is primary, or claims to be: this one may not be routed to
	case read.err != nil:
		return "", false
	case demoted(read):
		return "", true // a fenced primary follows no primary: its reads go stale, it is not a replica
	case !reportsPrimary(read):
		return string(databasev1alpha1.MemberRoleReplica), true
	case len(primaries) == 1:
		return primary, true
	default:
		return "", true // a split brain: no member is routed to for writes
	}
}

// demoted says whether the member read is a primary that has been fenced (PostgreSQL read-only):
// it takes no writes and follows no primary, so neither NAME-rw nor NAME-ro routes to it, and it
// rejoins as a replica when its pod is replaced (the planner's rejoin rule).
func demoted(read memberRead) bool {
	return read.err == nil && read.observation.Role == memberagent.RolePrimary && read.observation.Fenced
}

// reportsPrimary says whether the member read reports itself the primary: its agent answered,
// with the primary's role, and the member is not fenced. A fenced primary takes no writes.
func reportsPrimary(read memberRead) bool {
	return read.err == nil && read.observation.Role == memberagent.RolePrimary && !read.observation.Fenced
}
