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

import "time"

// Role is what a member's agent reports the member to be. For etcd the leader is the primary.
type Role string

// The roles a member's agent reports.
const (
	// RolePrimary: the member accepts writes.
	RolePrimary Role = "primary"
	// RoleReplica: the member follows a primary and refuses writes.
	RoleReplica Role = "replica"
	// RoleUnknown: the agent did not answer, or could not tell.
	RoleUnknown Role = "unknown"
)

// Member is one member of the cluster as the operator observed it: its pod and its agent's last
// answer.
type Member struct {
	// Name is the member's pod name; Ordinal its StatefulSet ordinal.
	Name    string
	Ordinal int
	// Exists: the pod exists and is not terminating.
	Exists bool
	// Ready: the pod is Ready.
	Ready bool
	// Reachable: the member's agent answered at the last observation.
	Reachable bool
	// Role is what the agent reported; RoleUnknown when it is unreachable.
	Role Role
	// Position is the replication position (a PostgreSQL LSN, an etcd raft index), comparable
	// across members; only the positions of reachable members are used.
	Position uint64
	// Fenced: the member cannot write. Its pod is gone, its node is confirmed gone, its agent
	// reported it demoted or fenced, or its pod was created after the switchover in flight
	// started and it is not the switchover's target (it starts as a replica). A terminating pod
	// is not fenced: until the kubelet has stopped its containers (an isolated node never does),
	// its database may still take writes.
	Fenced bool
	// Replacement: the member's pod was created after the switchover in flight started and it is
	// not the switchover's target: it was announced a replica from its start, and waits for the
	// target or follows it. It is never deleted to fence it (it would only be replaced again).
	Replacement bool
	// UpToDate: the pod runs the StatefulSet's update revision.
	UpToDate bool
	// Demoted: the agent reports a primary that has been fenced (a switchover's old primary):
	// it takes no writes and follows no primary, and rejoins as a replica once its pod is
	// replaced.
	Demoted bool
	// UnavailableSince is the first time the member was seen not Ready or unreachable; zero
	// while it is Ready and Reachable.
	UnavailableSince time.Time
}

// UpdateMethod says how the primary's pod is updated.
type UpdateMethod string

// The update methods.
const (
	// UpdateSwitchover (the default) hands the primary role to an updated replica first, so that
	// the old primary is deleted as a replica.
	UpdateSwitchover UpdateMethod = "switchover"
	// UpdateRestart deletes the primary's pod in place: the cluster has no writer until it is
	// back.
	UpdateRestart UpdateMethod = "restart"
)

// DefaultSwitchoverTimeout is the switchover timeout of a Policy that names none.
const DefaultSwitchoverTimeout = time.Minute

// Policy is what the cluster's spec says about roles.
type Policy struct {
	// UpdateMethod is how the primary is updated; empty means UpdateSwitchover.
	UpdateMethod UpdateMethod
	// Failover: promote a replica when the primary has been unavailable for FailoverAfter.
	Failover      bool
	FailoverAfter time.Duration
	// FenceByDeletion: a primary whose agent does not answer may be fenced for a failover by
	// deleting its pod. Only for an engine whose recreated member starts as it is announced
	// (never the primary while a switchover to another member is in flight).
	FenceByDeletion bool
	// SwitchoverTimeout is how long a switchover or failover may take before the planner gives
	// up on it; zero means DefaultSwitchoverTimeout.
	SwitchoverTimeout time.Duration
}

// Progress is what the operator persists in the cluster's status between passes, so that it
// survives an operator restart. The operator writes it before it carries out the action.
type Progress struct {
	// CurrentPrimary is the last primary observed alone (exactly one member reporting
	// RolePrimary).
	CurrentPrimary string
	// Switchover is the switchover or failover in flight; nil when there is none.
	Switchover *Switchover
}

// SwitchReason says why a switchover was started.
type SwitchReason string

// The reasons of a switchover.
const (
	// SwitchUpdate: the primary runs an outdated revision.
	SwitchUpdate SwitchReason = "Update"
	// SwitchRequested: a user asked for it (Input.Request).
	SwitchRequested SwitchReason = "Requested"
	// SwitchScaleDown: a scale-down removes the primary's ordinal; its role moves first.
	SwitchScaleDown SwitchReason = "ScaleDown"
	// SwitchFailover: the primary was lost and a replica promoted, or a timed-out switchover
	// was recovered by promoting the most advanced member.
	SwitchFailover SwitchReason = "Failover"
)

// Switchover is a change of primary in flight, from From to To.
type Switchover struct {
	From    string
	To      string
	Reason  SwitchReason
	Started time.Time
}

// Request is an on-demand switchover. To names the member to promote; empty means the most
// advanced healthy replica.
type Request struct {
	To string
}

// Input is everything Plan decides from.
type Input struct {
	Members  []Member
	Policy   Policy
	Progress Progress
	Now      time.Time
	// Desired is how many members the spec asks for (ordinals 0 to Desired-1); a primary of a
	// higher ordinal, which a scale-down removes, hands its role over first. 0: not known.
	Desired int
	// Request is the pending on-demand switchover, nil when there is none. The operator clears
	// it when a decision accepts it (Progress.Switchover with Reason SwitchRequested), reports
	// it done (Done with Reason SwitchRequested) or refuses it (Degraded
	// DegradedSwitchoverTargetNotHealthy).
	Request *Request
}

// ActionKind is what the operator does on a pass.
type ActionKind string

// The actions. Each is idempotent: the operator may carry one out twice, or not at all (a
// restart between persisting Progress and acting); the next pass decides again.
const (
	// ActionWait: change nothing.
	ActionWait ActionKind = "Wait"
	// ActionDeletePod: delete Member's pod, so that the StatefulSet recreates it at the update
	// revision.
	ActionDeletePod ActionKind = "DeletePod"
	// ActionSwitchover: through the agents, demote Member (the primary, if it still is one),
	// wait until Target has replayed everything Member wrote, then promote Target. The
	// operator repeats it on every pass while the switchover is in flight; each repetition
	// resumes where the last one stopped, and never promotes Target before Member is demoted.
	ActionSwitchover ActionKind = "Switchover"
	// ActionPromote: promote Member, whose peers are all fenced or replicas.
	ActionPromote ActionKind = "Promote"
	// ActionFence: through its agent, make Member unable to write (demote it, or stop its
	// database and keep it stopped).
	ActionFence ActionKind = "Fence"
)

// Action is the one thing the operator does on a pass.
type Action struct {
	Kind ActionKind
	// Member is the member acted on: the pod deleted, the member promoted or fenced, the
	// primary a switchover demotes.
	Member string
	// Target is the member a switchover promotes.
	Target string
	// Reason is a CamelCase reason for an event or a condition; Message says it in words.
	Reason  string
	Message string
}

// The reasons Decision.Degraded takes.
const (
	// DegradedSplitBrain: two or more members report RolePrimary.
	DegradedSplitBrain = "SplitBrain"
	// DegradedSwitchoverTimedOut: a switchover or failover took longer than its timeout.
	DegradedSwitchoverTimedOut = "SwitchoverTimedOut"
	// DegradedFailoverWaitingForFence: a failover is due, but a member that may still write
	// cannot be fenced (its agent does not answer).
	DegradedFailoverWaitingForFence = "FailoverWaitingForFence"
	// DegradedPrimaryUnavailable: no member serves as primary.
	DegradedPrimaryUnavailable = "PrimaryUnavailable"
	// DegradedNoFailoverCandidate: a failover is due and safe, but no replica is healthy.
	DegradedNoFailoverCandidate = "NoFailoverCandidate"
	// DegradedSwitchoverTargetNotHealthy: a requested switchover names no healthy replica.
	DegradedSwitchoverTargetNotHealthy = "SwitchoverTargetNotHealthy"
)

// Decision is Plan's answer.
type Decision struct {
	// Action is the one thing to do now.
	Action Action
	// Progress is the progress to persist, before Action is carried out.
	Progress Progress
	// Degraded is "" or the reason the cluster is degraded; Message says why in words.
	Degraded string
	Message  string
	// Done is the switchover or failover this pass observed complete, nil on other passes.
	Done *Switchover
}
