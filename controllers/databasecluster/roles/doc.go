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

// Package roles is the pure role planner of a replicated database cluster: from an observation
// of its members (their pods and their agents' answers), the policy and the progress persisted
// in the cluster's status, Plan decides the one next action the operator takes. It imports
// nothing but the standard library: no client, no clock (the time is an input), no logging.
//
// The operator maps the pods and the agents' answers into an Input, calls Plan, persists
// Decision.Progress in the status and only then carries out Decision.Action; every action is
// idempotent, and an operator restart loses nothing but what is not in Progress.
//
// # Rules
//
// Plan tries them in this order, except that rule 5 comes before rule 4.
//
//  1. Split brain first. Two or more reachable members report RolePrimary: Wait, Degraded
//     SplitBrain, naming them. Nothing that changes roles or deletes a pod.
//  2. A switchover or failover in flight (Progress.Switchover) is done when exactly one member
//     reports RolePrimary, it is its target, and every other member is fenced or reports
//     RoleReplica: Decision.Done, the switchover cleared, the target the CurrentPrimary. Before its timeout it is continued: the Switchover action (or
//     Promote, for a failover) is repeated on every pass, and each repetition resumes where the
//     last stopped. Past its timeout it is Degraded SwitchoverTimedOut: with one primary, the
//     switchover is given up; with none, the most advanced healthy replica (its From on a tie)
//     is promoted, as a new failover switchover, so that the promotion too is repeated until it
//     is seen.
//  3. Failover (Policy.Failover). No member serves as primary (none reports it, or the one that
//     does is not Ready), and the last primary has been unavailable for FailoverAfter (at once
//     when it is up but demoted): a fenced one is replaced by the most advanced healthy replica
//     (ties: the lowest ordinal), Promote and a switchover with Reason Failover; an unfenced
//     one whose agent answers is fenced first; an unfenced one whose agent does not answer may
//     still take writes: with Policy.FenceByDeletion and its pod neither Ready nor terminating,
//     the failover is recorded and its pod deleted (ActionDeletePod, FencingByDeletion), and
//     the target is promoted once the pod is gone or replaced; otherwise, or while the pod
//     stays terminating, Plan waits (Degraded FailoverWaitingForFence). With failover off:
//     Degraded PrimaryUnavailable.
//  4. Updates, only with exactly one primary, no switchover in flight and every member
//     Exists, Ready and Reachable: the outdated replica of the highest ordinal is deleted, one
//     at a time; then the outdated primary is switched over to the most advanced updated
//     replica (UpdateSwitchover, the default; the old primary is deleted as a replica on a later
//     pass), or deleted (UpdateRestart, or no replica).
//  5. A requested switchover (Input.Request), under the same precondition and tried before the
//     update, after the rejoin rule (a demoted member, an old primary fenced by a switchover,
//     has its pod deleted, one at a time, so that it comes back a replica): to the replica it names, which must be a healthy one (else Degraded
//     SwitchoverTargetNotHealthy), or to the most advanced healthy replica; naming the primary
//     reports it done at once.
//  6. Otherwise Wait.
//
// # Invariants
//
// The property test (property_test.go, over the simulator of sim_test.go) checks them after
// every step of a cluster with faults:
//   - never two writers: a member is promoted (Promote, or the target of a Switchover) only when
//     every other member is fenced or reports RoleReplica, the primary a Switchover demotes
//     first aside;
//   - the primary is never deleted for an update while a healthy replica could take over, unless
//     the update method is restart;
//   - never more than one member down by the operator's hand: a pod is deleted only when every
//     member is up, but for the pod of a primary down already, deleted to fence it for a
//     failover (which takes no member down);
//   - never a Ready or reachable member fenced by deletion;
//   - never a promotion of a replica behind a more advanced healthy replica;
//   - a switchover or failover is reported done only when its target is the one primary;
//   - once the faults end, the cluster settles: every member up and updated, one primary.
//
// Plan relies on the member agent for one thing: a member that starts (a restarted process, a
// recreated pod) starts as the primary only when it was the primary, Progress names it
// CurrentPrimary and no switchover is in flight; otherwise it starts as a replica. Without it,
// a primary that was replaced while it was down would come back as a second writer.
package roles
