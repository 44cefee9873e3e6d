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
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// The states of etcd's --initial-cluster-state that a member is announced with.
const (
	// StateNew bootstraps a new cluster from the members announced together.
	StateNew = "new"
	// StateExisting joins the cluster the member was added to.
	StateExisting = "existing"
)

// MembershipKind is the kind of a membership action.
type MembershipKind string

// The membership actions.
const (
	// MembershipWait changes nothing.
	MembershipWait MembershipKind = ""
	// MembershipAdd adds Member at PeerURLs, as a learner (a member that does not vote yet).
	MembershipAdd MembershipKind = "Add"
	// MembershipPromote makes Member, a learner that has started, a voting member (the engine's
	// AddMember again, which etcd refuses until the learner has caught up).
	MembershipPromote MembershipKind = "Promote"
	// MembershipRemove removes Member from the member list.
	MembershipRemove MembershipKind = "Remove"
	// MembershipTransfer moves the leadership from Member, which is to be removed, to Target.
	MembershipTransfer MembershipKind = "Transfer"
)

// MembershipInput is what the membership planner decides from.
type MembershipInput struct {
	// Desired is the number of members the spec asks for (0 when the cluster is stopped).
	Desired int
	// Pods are the members' pods there are.
	Pods []MemberPod
	// ListKnown says whether a member's agent answered with the database's member list (Listed).
	ListKnown bool
	// Listed is the database's member list.
	Listed []ListedMember
	// FormedBefore says whether the cluster has had members observed before (its status
	// recorded some): its members have data, and none is announced as a new cluster again.
	FormedBefore bool
	// PeerURLs are the peer URLs of each member the spec has or had (by name), as the spec's
	// arguments advertise them.
	PeerURLs map[string][]string
	// Names are the members' names by ordinal, from 0 to at least Desired-1.
	Names []string
	// Primary is the member that reports itself the primary ("" none).
	Primary string
	// Healthy names the members whose agent answered at the last observation.
	Healthy map[string]bool
}

// MemberPod is one member's pod.
type MemberPod struct {
	Name    string
	Ordinal int
	// Exists: the pod exists and is not terminating.
	Exists bool
	// Announced: the pod carries its announcement (the initial cluster it starts with).
	Announced bool
}

// ListedMember is one entry of the database's member list.
type ListedMember struct {
	// Name is the member's name: the one it reported, or for a member that has not started,
	// the pod whose peer URL it has.
	Name string
	// Ordinal is the StatefulSet ordinal of the member's pod, -1 for a member that is not one of
	// the cluster's pods (the operator never removes one).
	Ordinal int
	// Started: the member has started and reported its name.
	Started bool
	// Learner: the member does not vote yet.
	Learner bool
	// PeerURLs are where its peers reach it.
	PeerURLs []string
}

// Announcement is what a member's pod is told before its database starts: etcd's
// --initial-cluster and --initial-cluster-state.
type Announcement struct {
	InitialCluster string
	State          string
}

// MembershipAction is one change of the member list.
type MembershipAction struct {
	Kind MembershipKind
	// Member is the member added, removed, or (Transfer) leading.
	Member string
	// PeerURLs are an added member's.
	PeerURLs []string
	// Via is the member whose agent makes the change.
	Via string
	// Alternates are the other healthy voting members, by ordinal, through which a change other
	// than a Transfer is made when Via refuses it (etcd checks, on the member that takes the
	// request, that it is connected to every voting member).
	Alternates []string
	// Target is where a Transfer moves the leadership.
	Target string
}

// MembershipDecision is the membership planner's decision.
type MembershipDecision struct {
	// Action is the one change of the member list to make now.
	Action MembershipAction
	// Announce are the announcements to write now, by pod name.
	Announce map[string]Announcement
	// AnnounceAfter is the announcement of the member Action adds, written once it is added.
	AnnounceAfter map[string]Announcement
	// Replicas is how many pods the StatefulSet keeps: Desired, or more while a member above it
	// is still in the member list (a pod goes only once its member is removed).
	Replicas int
	// Waiting says why a change of the member list waits ("" when none does).
	Waiting string
}

// PlanMembership keeps the database's member list in line with the desired members, one change
// at a time: a member beyond Desired is removed (the leader's leadership moved first) before its
// pod goes, and never when the remaining voting members would not have a healthy majority; a pod
// of a member not in the list is added (as a learner) before its database starts, and only while
// no other member is still joining; a learner that has started is promoted. Every pod is
// announced the initial cluster it starts with: with the list unknown, the Desired members (a
// cluster that formed before is told "existing": its members start from their data, which etcd
// prefers to any announcement), else the member list. A stopped cluster (Desired 0) changes
// nothing.
func PlanMembership(in MembershipInput) MembershipDecision {
	d := MembershipDecision{Replicas: in.Desired, Announce: map[string]Announcement{}}
	if in.Desired <= 0 {
		return d // stopped (hibernated, or held by an offline backup): its members keep their places
	}
	if !in.ListKnown {
		return announceUnknown(in, d)
	}
	for _, m := range in.Listed {
		if m.Ordinal >= in.Desired {
			d.Replicas = max(d.Replicas, m.Ordinal+1)
		}
	}
	listed := announcement(in.Listed, StateExisting)
	for _, p := range in.Pods {
		if p.Exists && !p.Announced && slices.ContainsFunc(in.Listed, named(p.Name)) {
			d.Announce[p.Name] = listed
		}
	}
	if m, ok := highestBeyond(in); ok {
		return planRemoval(in, d, m)
	}
	if i := slices.IndexFunc(in.Listed, func(m ListedMember) bool { return m.Learner && m.Started && m.Ordinal >= 0 }); i >= 0 {
		return withAction(in, d, MembershipAction{Kind: MembershipPromote, Member: in.Listed[i].Name, PeerURLs: in.Listed[i].PeerURLs})
	}
	return planAddition(in, d)
}

// announceUnknown announces every desired pod without an announcement the Desired members, and
// keeps every pod there is: no member is removed, so none loses its pod, while the list is
// unknown.
func announceUnknown(in MembershipInput, d MembershipDecision) MembershipDecision {
	state := StateNew
	if in.FormedBefore {
		state = StateExisting
		d.Waiting = "no member's agent answered with etcd's member list"
	}
	var desired []ListedMember
	for ordinal := range in.Desired {
		desired = append(desired, ListedMember{Name: in.Names[ordinal], Ordinal: ordinal, PeerURLs: in.PeerURLs[in.Names[ordinal]]})
	}
	initial := announcement(desired, state)
	for _, p := range in.Pods {
		d.Replicas = max(d.Replicas, p.Ordinal+1)
		if p.Exists && !p.Announced && p.Ordinal < in.Desired {
			d.Announce[p.Name] = initial
		}
	}
	return d
}

// highestBeyond is the member of the list with the highest ordinal at or beyond Desired.
func highestBeyond(in MembershipInput) (ListedMember, bool) {
	var found ListedMember
	ok := false
	for _, m := range in.Listed {
		if m.Ordinal >= in.Desired && (!ok || m.Ordinal > found.Ordinal) {
			found, ok = m, true
		}
	}
	return found, ok
}

// planRemoval removes m: a learner or a member that never started at once; a voting member only
// while the others keep a healthy majority, and the leader only after its leadership moved.
func planRemoval(in MembershipInput, d MembershipDecision, m ListedMember) MembershipDecision {
	if !m.Learner && m.Started {
		voters, healthy := 0, 0
		for _, o := range in.Listed {
			if o.Name == m.Name || o.Learner || !o.Started {
				continue
			}
			voters++
			if in.Healthy[o.Name] {
				healthy++
			}
		}
		if healthy < voters/2+1 {
			d.Waiting = fmt.Sprintf("removing %s waits: %d of the %d other voting members answer, a majority must", m.Name, healthy, voters)
			return d
		}
		if m.Name == in.Primary {
			target := healthyVoter(in, m.Name)
			return withAction(in, d, MembershipAction{Kind: MembershipTransfer, Member: m.Name, Via: m.Name, Target: target})
		}
	}
	return withAction(in, d, MembershipAction{Kind: MembershipRemove, Member: m.Name})
}

// planAddition adds the lowest desired pod whose member is not in the list, while every member
// in the list has started and votes (etcd takes one learner at a time).
func planAddition(in MembershipInput, d MembershipDecision) MembershipDecision {
	for _, p := range in.Pods {
		if !p.Exists || p.Ordinal >= in.Desired || slices.ContainsFunc(in.Listed, named(p.Name)) {
			continue
		}
		if i := slices.IndexFunc(in.Listed, func(m ListedMember) bool { return m.Learner || !m.Started }); i >= 0 {
			d.Waiting = fmt.Sprintf("adding %s waits for %s to join", p.Name, in.Listed[i].Name)
			return d
		}
		added := ListedMember{Name: p.Name, Ordinal: p.Ordinal, PeerURLs: in.PeerURLs[p.Name]}
		d = withAction(in, d, MembershipAction{Kind: MembershipAdd, Member: p.Name, PeerURLs: added.PeerURLs})
		if d.Action.Kind == MembershipAdd {
			d.AnnounceAfter = map[string]Announcement{p.Name: announcement(append(slices.Clone(in.Listed), added), StateExisting)}
		}
		return d
	}
	return d
}

// withAction sets action, made through the primary's agent (or, without one, a healthy voting
// member's) unless it names its own; it waits when no member can make it.
func withAction(in MembershipInput, d MembershipDecision, action MembershipAction) MembershipDecision {
	if action.Via == "" {
		action.Via = in.Primary
		if action.Via == "" || action.Via == action.Member || !in.Healthy[action.Via] {
			action.Via = healthyVoter(in, action.Member)
		}
	}
	if action.Via == "" || (action.Kind == MembershipTransfer && action.Target == "") {
		d.Waiting = fmt.Sprintf("%s %s waits for a healthy voting member", strings.ToLower(string(action.Kind)), action.Member)
		return d
	}
	if action.Kind != MembershipTransfer {
		action.Alternates = healthyVoters(in, action.Member, action.Via)
	}
	d.Action = action
	return d
}

// healthyVoter is the healthy voting member with the lowest ordinal other than except ("" if
// there is none).
func healthyVoter(in MembershipInput, except string) string {
	if voters := healthyVoters(in, except); len(voters) > 0 {
		return voters[0]
	}
	return ""
}

// healthyVoters are the healthy voting members other than except, by ordinal (a member whose
// ordinal is not known last).
func healthyVoters(in MembershipInput, except ...string) []string {
	var voters []ListedMember
	for _, m := range in.Listed {
		if !slices.Contains(except, m.Name) && !m.Learner && m.Started && in.Healthy[m.Name] {
			voters = append(voters, m)
		}
	}
	slices.SortStableFunc(voters, func(a, b ListedMember) int {
		switch {
		case a.Ordinal < 0 || b.Ordinal < 0:
			return cmp.Compare(b.Ordinal, a.Ordinal) // the unknown (-1) last
		default:
			return cmp.Compare(a.Ordinal, b.Ordinal)
		}
	})
	var names []string
	for _, m := range voters {
		names = append(names, m.Name)
	}
	return names
}

// announcement is members as etcd's --initial-cluster (name=url for each peer URL) with state.
func announcement(members []ListedMember, state string) Announcement {
	var entries []string
	for _, m := range members {
		for _, u := range m.PeerURLs {
			entries = append(entries, m.Name+"="+u)
		}
	}
	return Announcement{InitialCluster: strings.Join(entries, ","), State: state}
}

func named(name string) func(ListedMember) bool {
	return func(m ListedMember) bool { return m.Name == name }
}
