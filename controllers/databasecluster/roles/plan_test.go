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
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRoles(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Role planner")
}

// now is the time of the tables' observations.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// ago is the time d before now.
func ago(d time.Duration) time.Time { return now.Add(-d) }

// memberOption changes a member of the tables.
type memberOption func(*Member)

// newMember is member db-<ordinal>, up, up to date, at position 100, in role.
func newMember(ordinal int, role Role, opts ...memberOption) Member {
	m := Member{Name: "db-" + string(rune('0'+ordinal)), Ordinal: ordinal, Exists: true, Ready: true, Reachable: true,
		Role: role, Position: 100, UpToDate: true}
	for _, o := range opts {
		o(&m)
	}
	return m
}

func primary(ordinal int, opts ...memberOption) Member {
	return newMember(ordinal, RolePrimary, opts...)
}
func replica(ordinal int, opts ...memberOption) Member {
	return newMember(ordinal, RoleReplica, opts...)
}

// at puts the member at position p.
func at(p uint64) memberOption { return func(m *Member) { m.Position = p } }

// outdated: the member runs an old revision.
func outdated() memberOption { return func(m *Member) { m.UpToDate = false } }

// fenced: the agent reported the member demoted or fenced.
func fenced() memberOption { return func(m *Member) { m.Fenced = true } }

// demoted: the agent reports a fenced primary (a switchover's old primary).
func demoted() memberOption { return func(m *Member) { m.Fenced, m.Demoted = true, true } }

// unready: the member's pod has not been Ready since d ago.
func unready(d time.Duration) memberOption {
	return func(m *Member) { m.Ready, m.UnavailableSince = false, ago(d) }
}

// unreachable: the member's agent has not answered (nor its pod been Ready) since d ago.
func unreachable(d time.Duration) memberOption {
	return func(m *Member) {
		m.Ready, m.Reachable, m.Role, m.Position, m.UnavailableSince = false, false, RoleUnknown, 0, ago(d)
	}
}

// gone: the member's pod has been deleted since d ago.
func gone(d time.Duration) memberOption {
	return func(m *Member) {
		unreachable(d)(m)
		m.Exists, m.Fenced = false, true
	}
}

// terminating: the member's pod is terminating (its kubelet has not stopped it) since d ago, and
// its agent does not answer.
func terminating(d time.Duration) memberOption {
	return func(m *Member) {
		unreachable(d)(m)
		m.Exists = false
	}
}

// inputOption changes an input of the tables.
type inputOption func(*Input)

// newInput is members observed now, db-0 the last primary, failover on after 30s, switchovers
// timing out after a minute.
func newInput(members []Member, opts ...inputOption) Input {
	in := Input{Members: members, Now: now, Progress: Progress{CurrentPrimary: "db-0"},
		Policy: Policy{Failover: true, FailoverAfter: 30 * time.Second, SwitchoverTimeout: time.Minute}}
	for _, o := range opts {
		o(&in)
	}
	return in
}

func members(m ...Member) []Member { return m }

// switchingOver: a switchover from-to for reason, started d ago.
func switchingOver(from, to string, reason SwitchReason, d time.Duration) inputOption {
	return func(in *Input) {
		in.Progress.Switchover = &Switchover{From: from, To: to, Reason: reason, Started: ago(d)}
	}
}

// deletionFences allows fencing by deletion (engine postgresql).
func deletionFences(in *Input) { in.Policy.FenceByDeletion = true }

// failoverOff turns failover off; restart sets the update method restart.
func failoverOff(in *Input) { in.Policy.Failover = false }
func restart(in *Input)     { in.Policy.UpdateMethod = UpdateRestart }

// request asks for a switchover to to.
func request(to string) inputOption { return func(in *Input) { in.Request = &Request{To: to} } }

// progress is a Progress; sw a Switchover started d ago.
func progress(current string, sw *Switchover) Progress {
	return Progress{CurrentPrimary: current, Switchover: sw}
}
func sw(from, to string, reason SwitchReason, d time.Duration) *Switchover {
	return &Switchover{From: from, To: to, Reason: reason, Started: ago(d)}
}

// waiting is the decision to wait for reason, degraded for degradedReason.
func waiting(p Progress, reason, degradedReason, msg string) Decision {
	return Decision{Action: Action{Kind: ActionWait, Reason: reason, Message: msg}, Progress: p, Degraded: degradedReason, Message: msg}
}

// acting is the decision to carry out a, degraded for degradedReason.
func acting(p Progress, a Action, degradedReason string) Decision {
	return Decision{Action: a, Progress: p, Degraded: degradedReason, Message: a.Message}
}

// done is d with Done set.
func done(d Decision, s *Switchover) Decision {
	d.Done = s
	return d
}

var _ = Describe("Plan", Label("unit"), func() {
	DescribeTable("decides the one next action", func(in Input, want Decision) {
		Expect(Plan(in)).To(Equal(want))
	},
		// Rule 1: split brain.
		Entry("1: two members report primary: wait, name them, delete nothing",
			newInput(members(primary(0), primary(1), replica(2, outdated()))),
			waiting(progress("db-0", nil), DegradedSplitBrain, DegradedSplitBrain,
				"Members db-0, db-1 all report the primary role; changing nothing until one is demoted.")),
		Entry("1: split brain during a switchover: the switchover is kept, nothing promoted",
			newInput(members(primary(0), primary(1)), switchingOver("db-0", "db-1", SwitchUpdate, time.Second)),
			waiting(progress("db-0", sw("db-0", "db-1", SwitchUpdate, time.Second)), DegradedSplitBrain, DegradedSplitBrain,
				"Members db-0, db-1 all report the primary role; changing nothing until one is demoted.")),

		// The rejoin rule.
		Entry("rejoin: after a switchover, the fenced old primary's pod is replaced so that it comes back a replica",
			newInput(members(replica(0, demoted()), primary(1), replica(2)), func(in *Input) { in.Progress.CurrentPrimary = "db-1" }),
			acting(progress("db-1", nil), Action{Kind: ActionDeletePod, Member: "db-0", Reason: ReasonRejoining,
				Message: "Replacing the pod of db-0, a fenced old primary, so that it rejoins as a replica of db-1."}, "")),
		Entry("rejoin waits while another member is down",
			newInput(members(replica(0, demoted()), primary(1), replica(2, unready(time.Second))), func(in *Input) { in.Progress.CurrentPrimary = "db-1" }),
			waiting(progress("db-1", nil), ReasonWaitingForMembers, "", "Waiting for every member to be Ready and reachable.")),

		// The scale-down rule.
		Entry("scale-down: a primary beyond the desired members hands its role to the most advanced replica that stays",
			newInput(members(replica(0, at(90)), replica(1, at(95)), primary(2, at(100))), func(in *Input) {
				in.Progress.CurrentPrimary, in.Desired = "db-2", 2
			}),
			acting(progress("db-2", sw("db-2", "db-1", SwitchScaleDown, 0)),
				Action{Kind: ActionSwitchover, Member: "db-2", Target: "db-1", Reason: ReasonSwitchoverStarted,
					Message: "Switching the primary over from db-2 to db-1 (ScaleDown)."}, "")),
		Entry("scale-down: a primary below the desired members changes nothing",
			newInput(members(primary(0), replica(1), replica(2)), func(in *Input) { in.Desired = 2 }),
			waiting(progress("db-0", nil), ReasonStable, "", "db-0 is the primary and every member is up to date.")),

		// Rule 2: the switchover in flight.
		Entry("2: the target is the one primary: done",
			newInput(members(replica(0, fenced()), primary(1)), switchingOver("db-0", "db-1", SwitchUpdate, 10*time.Second)),
			done(waiting(progress("db-1", nil), ReasonSwitchoverCompleted, "", "db-1 is the primary (Update from db-0)."),
				sw("db-0", "db-1", SwitchUpdate, 10*time.Second))),
		Entry("2: not done yet: the switchover is repeated",
			newInput(members(primary(0), replica(1)), switchingOver("db-0", "db-1", SwitchRequested, 10*time.Second)),
			acting(progress("db-0", sw("db-0", "db-1", SwitchRequested, 10*time.Second)),
				Action{Kind: ActionSwitchover, Member: "db-0", Target: "db-1", Reason: ReasonSwitchoverInProgress,
					Message: "Switching the primary over from db-0 to db-1 (Requested)."}, "")),
		Entry("2: a failover not done yet: the promotion is repeated",
			newInput(members(primary(0, gone(time.Minute)), replica(1)), switchingOver("db-0", "db-1", SwitchFailover, 10*time.Second)),
			acting(progress("db-0", sw("db-0", "db-1", SwitchFailover, 10*time.Second)),
				Action{Kind: ActionPromote, Member: "db-1", Reason: ReasonFailoverInProgress, Message: "Promoting db-1 in place of db-0."}, "")),
		Entry("2: a failover whose target fell behind is re-targeted",
			newInput(members(primary(0, gone(time.Minute)), replica(1, at(90)), replica(2, at(95))),
				switchingOver("db-0", "db-1", SwitchFailover, 10*time.Second)),
			acting(progress("db-0", sw("db-0", "db-2", SwitchFailover, 10*time.Second)),
				Action{Kind: ActionPromote, Member: "db-2", Reason: ReasonFailoverInProgress, Message: "Promoting db-2 in place of db-0."}, "")),
		Entry("2: a failover with no healthy replica waits",
			newInput(members(primary(0, gone(time.Minute)), replica(1, unready(time.Second))),
				switchingOver("db-0", "db-1", SwitchFailover, 10*time.Second)),
			waiting(progress("db-0", sw("db-0", "db-1", SwitchFailover, 10*time.Second)), ReasonSwitchoverWaiting, "",
				"Waiting for a healthy replica to promote in place of db-0.")),
		Entry("2: the old primary demoted, the target waits to catch up with every replica",
			newInput(members(replica(0, fenced(), at(100)), replica(1, at(97)), replica(2, at(99))),
				switchingOver("db-0", "db-1", SwitchUpdate, 10*time.Second)),
			waiting(progress("db-0", sw("db-0", "db-1", SwitchUpdate, 10*time.Second)), ReasonSwitchoverWaiting, "",
				"Waiting for db-1 to catch up with db-0, db-2 before promoting it.")),
		Entry("2: a member that may write holds the switchover back",
			newInput(members(primary(0), replica(1), replica(2, unreachable(5*time.Second))),
				switchingOver("db-0", "db-1", SwitchUpdate, 10*time.Second)),
			waiting(progress("db-0", sw("db-0", "db-1", SwitchUpdate, 10*time.Second)), ReasonSwitchoverWaiting, "",
				"Waiting for db-2, which may still write, before promoting db-1.")),
		Entry("2: timed out with the old primary still primary: given up",
			newInput(members(primary(0), replica(1)), switchingOver("db-0", "db-1", SwitchUpdate, 2*time.Minute)),
			waiting(progress("db-0", nil), DegradedSwitchoverTimedOut, DegradedSwitchoverTimedOut,
				"The switchover from db-0 to db-1 (Update) did not complete within 1m0s; db-0 stays the primary.")),
		Entry("2: timed out with no primary: From, the most advanced, is promoted back",
			newInput(members(replica(0, fenced(), at(120)), replica(1, at(110))), switchingOver("db-0", "db-1", SwitchUpdate, 2*time.Minute)),
			acting(progress("db-0", sw("db-0", "db-0", SwitchFailover, 0)),
				Action{Kind: ActionPromote, Member: "db-0", Reason: ReasonPromotingAfterTimeout,
					Message: "The switchover from db-0 to db-1 (Update) did not complete within 1m0s; promoting db-0, the most advanced member."},
				DegradedSwitchoverTimedOut)),
		Entry("2: timed out with no primary: a replica ahead of From is promoted",
			newInput(members(replica(0, fenced(), at(100)), replica(1, at(90)), replica(2, at(105))),
				switchingOver("db-0", "db-1", SwitchUpdate, 2*time.Minute)),
			acting(progress("db-0", sw("db-0", "db-2", SwitchFailover, 0)),
				Action{Kind: ActionPromote, Member: "db-2", Reason: ReasonPromotingAfterTimeout,
					Message: "The switchover from db-0 to db-1 (Update) did not complete within 1m0s; promoting db-2, the most advanced member."},
				DegradedSwitchoverTimedOut)),
		Entry("2: timed out with no primary and a member that may write: nothing promoted",
			newInput(members(replica(0, fenced()), replica(1, unreachable(time.Minute))), switchingOver("db-0", "db-1", SwitchUpdate, 2*time.Minute)),
			waiting(progress("db-0", sw("db-0", "db-1", SwitchUpdate, 2*time.Minute)), DegradedSwitchoverTimedOut, DegradedSwitchoverTimedOut,
				"The switchover from db-0 to db-1 (Update) did not complete within 1m0s; not promoting db-0 while db-1 may still write.")),

		// Rule 3: failover.
		Entry("3: the fenced primary is replaced by the most advanced healthy replica",
			newInput(members(primary(0, gone(40*time.Second)), replica(1, at(90)), replica(2, at(95)))),
			acting(progress("db-0", sw("db-0", "db-2", SwitchFailover, 0)),
				Action{Kind: ActionPromote, Member: "db-2", Reason: ReasonFailingOver,
					Message: "Failing over from db-0 to db-2, the most advanced healthy replica."}, DegradedPrimaryUnavailable)),
		Entry("3: on a tie, the lowest ordinal",
			newInput(members(primary(0, gone(40*time.Second)), replica(1, at(95)), replica(2, at(95)))),
			acting(progress("db-0", sw("db-0", "db-1", SwitchFailover, 0)),
				Action{Kind: ActionPromote, Member: "db-1", Reason: ReasonFailingOver,
					Message: "Failing over from db-0 to db-1, the most advanced healthy replica."}, DegradedPrimaryUnavailable)),
		Entry("3: not unavailable for FailoverAfter yet: wait",
			newInput(members(primary(0, gone(10*time.Second)), replica(1))),
			waiting(progress("db-0", nil), ReasonWaitingForFailover, DegradedPrimaryUnavailable,
				"The primary db-0 is unavailable; failing over after 30s.")),
		Entry("3: an unfenced primary whose agent answers is fenced first",
			newInput(members(primary(0, unready(40*time.Second)), replica(1))),
			acting(progress("db-0", nil), Action{Kind: ActionFence, Member: "db-0", Reason: ReasonFencingPrimary,
				Message: "Fencing the unavailable primary db-0 before failing over."}, DegradedPrimaryUnavailable)),
		Entry("3: an unavailable primary that stepped down (a replica that answers) is not fenced again: failover",
			newInput(members(replica(0, unready(40*time.Second), at(100)), replica(1, at(100)))),
			acting(progress("db-0", sw("db-0", "db-1", SwitchFailover, 0)),
				Action{Kind: ActionPromote, Member: "db-1", Reason: ReasonFailingOver,
					Message: "Failing over from db-0 to db-1, the most advanced healthy replica."}, DegradedPrimaryUnavailable)),
		Entry("3: an isolated primary (unfenced, unreachable) is never replaced",
			newInput(members(primary(0, unreachable(time.Hour)), replica(1))),
			waiting(progress("db-0", nil), DegradedFailoverWaitingForFence, DegradedFailoverWaitingForFence,
				"Not promoting while db-0 may still write: its agent does not answer and it is not fenced.")),
		Entry("3: an isolated primary is fenced by deleting its pod where the engine allows it, the failover recorded first",
			newInput(members(primary(0, unreachable(40*time.Second)), replica(1, at(90)), replica(2, at(95))), deletionFences),
			acting(progress("db-0", sw("db-0", "db-2", SwitchFailover, 0)),
				Action{Kind: ActionDeletePod, Member: "db-0", Reason: ReasonFencingByDeletion,
					Message: "Deleting the pod of the unavailable primary db-0, whose agent does not answer, to fence it: db-2 is promoted once no member may write."},
				DegradedPrimaryUnavailable)),
		Entry("3: not before FailoverAfter",
			newInput(members(primary(0, unreachable(20*time.Second)), replica(1)), deletionFences),
			waiting(progress("db-0", nil), ReasonWaitingForFailover, DegradedPrimaryUnavailable,
				"The primary db-0 is unavailable; failing over after 30s.")),
		Entry("3: a primary whose pod is terminating is not fenced: its kubelet may never stop it",
			newInput(members(primary(0, terminating(time.Hour)), replica(1)), deletionFences),
			waiting(progress("db-0", nil), DegradedFailoverWaitingForFence, DegradedFailoverWaitingForFence,
				"Not promoting while db-0 may still write: its agent does not answer and it is not fenced.")),
		Entry("3: nothing is deleted without a replica to promote",
			newInput(members(primary(0, unreachable(time.Minute)), replica(1, fenced(), unready(time.Minute))), deletionFences),
			waiting(progress("db-0", nil), DegradedNoFailoverCandidate, DegradedNoFailoverCandidate,
				"The primary db-0 is lost and no replica is healthy.")),
		Entry("3: nothing is deleted while a member that may write cannot be fenced by deletion (its pod terminating)",
			newInput(members(primary(0, unreachable(time.Minute)), replica(1), replica(2, terminating(time.Minute))), deletionFences),
			waiting(progress("db-0", nil), DegradedFailoverWaitingForFence, DegradedFailoverWaitingForFence,
				"Not promoting while db-0, db-2 may still write: its agent does not answer and it is not fenced.")),
		Entry("3: each member that may write and does not answer is fenced by deletion, one pod per pass, the failover recorded first",
			newInput(members(primary(0, gone(time.Minute)), replica(1), replica(2, unreachable(time.Minute))), deletionFences),
			acting(progress("db-0", sw("db-0", "db-1", SwitchFailover, 0)),
				Action{Kind: ActionDeletePod, Member: "db-2", Reason: ReasonFencingByDeletion,
					Message: "Deleting the pod of db-2, which does not answer, to fence it: db-1 is promoted in place of db-0 once no member may write."},
				DegradedPrimaryUnavailable)),
		Entry("3: a Ready member is never fenced by deletion",
			newInput(members(primary(0, unreachable(time.Minute)), replica(1), replica(2, func(m *Member) { unreachable(time.Minute)(m); m.Ready = true })), deletionFences),
			waiting(progress("db-0", nil), DegradedFailoverWaitingForFence, DegradedFailoverWaitingForFence,
				"Not promoting while db-0, db-2 may still write: its agent does not answer and it is not fenced.")),
		Entry("2: a failover whose fenced primary's pod is still terminating waits",
			newInput(members(replica(0, terminating(10*time.Second)), replica(1)), deletionFences, switchingOver("db-0", "db-1", SwitchFailover, 10*time.Second)),
			waiting(progress("db-0", sw("db-0", "db-1", SwitchFailover, 10*time.Second)), DegradedFailoverWaitingForFence, DegradedFailoverWaitingForFence,
				"Not promoting while db-0 may still write: its agent does not answer and it is not fenced.")),
		Entry("2: a failover recorded deletes the pod of its primary (and again after an operator restart)",
			newInput(members(primary(0, unreachable(time.Minute)), replica(1)), deletionFences, switchingOver("db-0", "db-1", SwitchFailover, 10*time.Second)),
			acting(progress("db-0", sw("db-0", "db-1", SwitchFailover, 10*time.Second)),
				Action{Kind: ActionDeletePod, Member: "db-0", Reason: ReasonFencingByDeletion,
					Message: "Deleting the pod of the unavailable primary db-0, whose agent does not answer, to fence it: db-1 is promoted once no member may write."},
				DegradedPrimaryUnavailable)),
		Entry("2: a failover whose primary's pod was replaced waits for the replacement (its agent not answering yet) and never deletes it",
			newInput(members(replica(0, unreachable(5*time.Second), func(m *Member) { m.Replacement = true }), replica(1)), deletionFences,
				switchingOver("db-0", "db-1", SwitchFailover, 10*time.Second)),
			waiting(progress("db-0", sw("db-0", "db-1", SwitchFailover, 10*time.Second)), DegradedFailoverWaitingForFence, DegradedFailoverWaitingForFence,
				"Not promoting while db-0 may still write: its agent does not answer and it is not fenced.")),
		Entry("2: a failover whose fenced primary's pod was replaced (fenced: it starts as a replica) promotes its target",
			newInput(members(replica(0, unreachable(5*time.Second), fenced()), replica(1)), deletionFences, switchingOver("db-0", "db-1", SwitchFailover, 10*time.Second)),
			acting(progress("db-0", sw("db-0", "db-1", SwitchFailover, 10*time.Second)),
				Action{Kind: ActionPromote, Member: "db-1", Reason: ReasonFailoverInProgress, Message: "Promoting db-1 in place of db-0."},
				"")),
		Entry("3: another member that may write holds the failover back",
			newInput(members(primary(0, gone(time.Minute)), replica(1), replica(2, unreachable(time.Minute)))),
			waiting(progress("db-0", nil), DegradedFailoverWaitingForFence, DegradedFailoverWaitingForFence,
				"Not promoting while db-2 may still write: its agent does not answer and it is not fenced.")),
		Entry("3: no healthy replica",
			newInput(members(primary(0, gone(time.Minute)), replica(1, fenced(), unready(time.Minute)))),
			waiting(progress("db-0", nil), DegradedNoFailoverCandidate, DegradedNoFailoverCandidate,
				"The primary db-0 is lost and no replica is healthy.")),
		Entry("3: failover off: reported, nothing done",
			newInput(members(primary(0, gone(time.Hour)), replica(1)), failoverOff),
			waiting(progress("db-0", nil), DegradedPrimaryUnavailable, DegradedPrimaryUnavailable,
				"The primary db-0 is unavailable and failover is off.")),

		// Rule 4: updates.
		Entry("4a: the outdated replica of the highest ordinal is deleted first",
			newInput(members(primary(0, outdated()), replica(1, outdated()), replica(2, outdated()), replica(3))),
			acting(progress("db-0", nil), Action{Kind: ActionDeletePod, Member: "db-2", Reason: ReasonUpdatingReplica,
				Message: "Deleting the outdated replica db-2."}, "")),
		Entry("4a: with a member down, nothing is deleted",
			newInput(members(primary(0), replica(1, outdated()), replica(2, unready(time.Second)))),
			waiting(progress("db-0", nil), ReasonWaitingForMembers, "", "Waiting for every member to be Ready and reachable.")),
		Entry("4b: the outdated primary is switched over to the most advanced replica",
			newInput(members(primary(0, outdated()), replica(1, at(90)), replica(2, at(99)))),
			acting(progress("db-0", sw("db-0", "db-2", SwitchUpdate, 0)),
				Action{Kind: ActionSwitchover, Member: "db-0", Target: "db-2", Reason: ReasonSwitchoverStarted,
					Message: "Switching the primary over from db-0 to db-2 (Update)."}, "")),
		Entry("4b: with the method restart, the outdated primary is deleted",
			newInput(members(primary(0, outdated()), replica(1)), restart),
			acting(progress("db-0", nil), Action{Kind: ActionDeletePod, Member: "db-0", Reason: ReasonUpdatingPrimary,
				Message: "Deleting the outdated primary db-0."}, "")),
		Entry("4b: with no replica, the outdated primary is deleted",
			newInput(members(primary(0, outdated()))),
			acting(progress("db-0", nil), Action{Kind: ActionDeletePod, Member: "db-0", Reason: ReasonUpdatingPrimary,
				Message: "Deleting the outdated primary db-0."}, "")),

		// Rule 5: requested switchovers.
		Entry("5: to the replica named",
			newInput(members(primary(0), replica(1, at(90)), replica(2, at(99))), request("db-1")),
			acting(progress("db-0", sw("db-0", "db-1", SwitchRequested, 0)),
				Action{Kind: ActionSwitchover, Member: "db-0", Target: "db-1", Reason: ReasonSwitchoverStarted,
					Message: "Switching the primary over from db-0 to db-1 (Requested)."}, "")),
		Entry("5: to no one named: the most advanced replica",
			newInput(members(primary(0), replica(1, at(90)), replica(2, at(99))), request("")),
			acting(progress("db-0", sw("db-0", "db-2", SwitchRequested, 0)),
				Action{Kind: ActionSwitchover, Member: "db-0", Target: "db-2", Reason: ReasonSwitchoverStarted,
					Message: "Switching the primary over from db-0 to db-2 (Requested)."}, "")),
		Entry("5: to a member that is no healthy replica: refused",
			newInput(members(primary(0), replica(1)), request("db-9")),
			waiting(progress("db-0", nil), DegradedSwitchoverTargetNotHealthy, DegradedSwitchoverTargetNotHealthy,
				`No healthy replica "db-9" to switch over to.`)),
		Entry("5: to the primary: done at once",
			newInput(members(primary(0), replica(1)), request("db-0")),
			done(waiting(progress("db-0", nil), ReasonSwitchoverNotNeeded, "", "db-0 is already the primary."),
				sw("db-0", "db-0", SwitchRequested, 0))),
		Entry("5: with a member down, the request waits",
			newInput(members(primary(0), replica(1), replica(2, unreachable(time.Second))), request("db-1")),
			waiting(progress("db-0", nil), ReasonWaitingForMembers, "", "Waiting for every member to be Ready and reachable.")),

		// Rule 6: otherwise.
		Entry("6: one primary, every member up to date: wait",
			newInput(members(primary(0), replica(1), replica(2))),
			waiting(progress("db-0", nil), ReasonStable, "", "db-0 is the primary and every member is up to date.")),
		Entry("6: the primary observed alone becomes the current primary",
			newInput(members(replica(0), primary(1)), func(in *Input) { in.Progress.CurrentPrimary = "" }),
			waiting(progress("db-1", nil), ReasonStable, "", "db-1 is the primary and every member is up to date.")),
	)

	It("shares no switchover with its input", func() {
		in := newInput(members(primary(0), replica(1)), switchingOver("db-0", "db-1", SwitchUpdate, time.Second))
		d := Plan(in)
		Expect(d.Progress.Switchover).To(Equal(in.Progress.Switchover))
		Expect(d.Progress.Switchover).NotTo(BeIdenticalTo(in.Progress.Switchover))
	})
})
