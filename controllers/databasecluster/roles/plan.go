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
	"fmt"
	"strings"
)

// The reasons of the actions Plan decides (Action.Reason), besides the Degraded reasons.
const (
	ReasonStable                = "Stable"
	ReasonWaitingForMembers     = "WaitingForMembers"
	ReasonSwitchoverCompleted   = "SwitchoverCompleted"
	ReasonSwitchoverInProgress  = "SwitchoverInProgress"
	ReasonSwitchoverWaiting     = "SwitchoverWaiting"
	ReasonFailoverInProgress    = "FailoverInProgress"
	ReasonPromotingAfterTimeout = "PromotingAfterTimeout"
	ReasonWaitingForFailover    = "WaitingForFailover"
	ReasonFencingPrimary        = "FencingPrimary"
	ReasonFencingByDeletion     = "FencingByDeletion"
	ReasonFailingOver           = "FailingOver"
	ReasonUpdatingReplica       = "UpdatingReplica"
	ReasonUpdatingPrimary       = "UpdatingPrimary"
	ReasonSwitchoverStarted     = "SwitchoverStarted"
	ReasonSwitchoverNotNeeded   = "SwitchoverNotNeeded"
	ReasonRejoining             = "Rejoining"
)

// Plan decides the one next action from an observation of the members, the policy and the
// persisted progress. The rules, in the order they are tried, are the package's (see doc.go):
// split brain, the switchover in flight, the lost primary, then, with every member up, a
// requested switchover and the update.
func Plan(in Input) Decision {
	in.Policy = in.Policy.withDefaults()
	progress := in.Progress.clone()
	primaries := reportedPrimaries(in.Members)
	if len(primaries) > 1 {
		return splitBrain(progress, primaries)
	}
	if len(primaries) == 1 {
		progress.CurrentPrimary = primaries[0].Name
	}
	if progress.Switchover != nil {
		return inFlight(in, progress, primaries)
	}
	if len(primaries) == 0 || !primaries[0].Ready {
		return primaryLost(in, progress)
	}
	if !allUp(in.Members) {
		return wait(progress, ReasonWaitingForMembers, "Waiting for every member to be Ready and reachable.")
	}
	if d, ok := rejoin(in, progress); ok {
		return d
	}
	if d, ok := scaleDown(in, progress, primaries[0]); ok {
		return d
	}
	if in.Request != nil {
		return requested(in, progress, primaries[0])
	}
	return update(in, progress, primaries[0])
}

// rejoin is the rule after a switchover: with the primary Ready and every member up, the pod of
// a demoted member (an old primary, fenced) is deleted, one at a time, so that it comes back as a
// replica of the primary.
func rejoin(in Input, progress Progress) (Decision, bool) {
	for _, m := range in.Members {
		if m.Demoted && m.Name != progress.CurrentPrimary {
			return act(progress, Action{Kind: ActionDeletePod, Member: m.Name, Reason: ReasonRejoining,
				Message: fmt.Sprintf("Replacing the pod of %s, a fenced old primary, so that it rejoins as a replica of %s.",
					m.Name, progress.CurrentPrimary)}), true
		}
	}
	return Decision{}, false
}

// scaleDown is the rule before a scale-down takes the primary's pod: the primary, beyond the
// desired members, hands its role to the most advanced healthy replica that stays. The pod goes
// only once it is a replica (the operator holds the StatefulSet's replicas until then).
func scaleDown(in Input, progress Progress, primary Member) (Decision, bool) {
	if in.Desired <= 0 || primary.Ordinal < in.Desired {
		return Decision{}, false
	}
	target, ok := mostAdvanced(in.Members, "", func(m Member) bool { return m.Ordinal < in.Desired })
	if !ok {
		return wait(progress, ReasonSwitchoverWaiting,
			fmt.Sprintf("Waiting for a healthy replica below ordinal %d to take over from %s before it is scaled away.", in.Desired, primary.Name)), true
	}
	return startSwitchover(in, progress, primary, target, SwitchScaleDown), true
}

// withDefaults fills the fields of p left empty.
func (p Policy) withDefaults() Policy {
	if p.UpdateMethod == "" {
		p.UpdateMethod = UpdateSwitchover
	}
	if p.SwitchoverTimeout == 0 {
		p.SwitchoverTimeout = DefaultSwitchoverTimeout
	}
	return p
}

// clone copies p, so that the decision shares nothing with the input.
func (p Progress) clone() Progress {
	if p.Switchover != nil {
		sw := *p.Switchover
		p.Switchover = &sw
	}
	return p
}

// wait is the decision to change nothing, for reason.
func wait(progress Progress, reason, message string) Decision {
	return Decision{Action: Action{Kind: ActionWait, Reason: reason, Message: message}, Progress: progress, Message: message}
}

// degraded is d with the cluster reported degraded for reason.
func degraded(d Decision, reason string) Decision {
	d.Degraded = reason
	return d
}

// act is the decision to carry out action, its message also the decision's.
func act(progress Progress, action Action) Decision {
	return Decision{Action: action, Progress: progress, Message: action.Message}
}

// splitBrain is rule 1: with two members reporting primary, any change of roles or pods could
// lose writes or make it worse. The operator waits for a person.
func splitBrain(progress Progress, primaries []Member) Decision {
	msg := fmt.Sprintf("Members %s all report the primary role; changing nothing until one is demoted.", names(primaries))
	return degraded(wait(progress, DegradedSplitBrain, msg), DegradedSplitBrain)
}

// inFlight is rule 2: the switchover or failover in flight is done when its target is seen
// primary alone, every other member fenced or a replica (one that does not answer might still
// be a primary); past its timeout it is given up or recovered; before, it is continued.
func inFlight(in Input, progress Progress, primaries []Member) Decision {
	sw := *progress.Switchover
	if len(primaries) == 1 && primaries[0].Name == sw.To && len(mayWrite(in.Members, sw.To, "")) == 0 {
		progress.Switchover = nil
		progress.CurrentPrimary = sw.To
		d := wait(progress, ReasonSwitchoverCompleted, fmt.Sprintf("%s is the primary (%s from %s).", sw.To, sw.Reason, sw.From))
		d.Done = &sw
		return d
	}
	if in.Now.Sub(sw.Started) > in.Policy.SwitchoverTimeout {
		return timedOut(in, progress, primaries)
	}
	return continueSwitchover(in, progress)
}

// continueSwitchover repeats the action of the switchover in flight: Promote for a failover,
// Switchover otherwise, and only while promoting its target makes no second writer.
func continueSwitchover(in Input, progress Progress) Decision {
	sw := progress.Switchover
	to, ok := find(in.Members, sw.To)
	if !ok || !to.Exists || !to.Reachable {
		return wait(progress, ReasonSwitchoverWaiting, fmt.Sprintf("Waiting for %s to answer, to make it the primary.", sw.To))
	}
	if sw.Reason == SwitchFailover {
		return continueFailover(in, progress)
	}
	if blocking := mayWrite(in.Members, sw.To, sw.From); len(blocking) > 0 {
		return wait(progress, ReasonSwitchoverWaiting, fmt.Sprintf("Waiting for %s, which may still write, before promoting %s.",
			strings.Join(blocking, ", "), sw.To))
	}
	if ahead := aheadOf(in.Members, to, sw.From); len(ahead) > 0 {
		return wait(progress, ReasonSwitchoverWaiting, fmt.Sprintf("Waiting for %s to catch up with %s before promoting it.",
			sw.To, strings.Join(ahead, ", ")))
	}
	return act(progress, Action{Kind: ActionSwitchover, Member: sw.From, Target: sw.To, Reason: ReasonSwitchoverInProgress,
		Message: fmt.Sprintf("Switching the primary over from %s to %s (%s).", sw.From, sw.To, sw.Reason)})
}

// continueFailover repeats the promotion of a failover in flight. Until it is seen, its target
// is chosen again on every pass (the current one on a tie), so that a replica that fell behind
// or stopped being healthy since is never promoted.
func continueFailover(in Input, progress Progress) Decision {
	sw := progress.Switchover
	target, ok := mostAdvanced(in.Members, sw.To, anyMember)
	if !ok {
		return wait(progress, ReasonSwitchoverWaiting, fmt.Sprintf("Waiting for a healthy replica to promote in place of %s.", sw.From))
	}
	if blocking := mayWrite(in.Members, target.Name, ""); len(blocking) > 0 {
		if d, ok := fenceBlocking(in, progress, sw.From, target.Name, blocking); ok {
			return d
		}
		return degraded(waitForFence(progress, blocking), DegradedFailoverWaitingForFence)
	}
	sw.To = target.Name
	return act(progress, Action{Kind: ActionPromote, Member: sw.To, Reason: ReasonFailoverInProgress,
		Message: fmt.Sprintf("Promoting %s in place of %s.", sw.To, sw.From)})
}

// waitForFence is the decision to wait until the members blocking may no longer write.
func waitForFence(progress Progress, blocking []string) Decision {
	return wait(progress, DegradedFailoverWaitingForFence, fmt.Sprintf(
		"Not promoting while %s may still write: its agent does not answer and it is not fenced.", strings.Join(blocking, ", ")))
}

// timedOut is rule 2 past the timeout. With a primary, the switchover is given up. Without one,
// the cluster must not stay without a writer: the most advanced healthy replica (From on a
// tie) is promoted, as a failover, once no other member may write.
func timedOut(in Input, progress Progress, primaries []Member) Decision {
	sw := *progress.Switchover
	msg := fmt.Sprintf("The switchover from %s to %s (%s) did not complete within %s", sw.From, sw.To, sw.Reason, in.Policy.SwitchoverTimeout)
	if len(primaries) == 1 {
		progress.Switchover = nil
		return degraded(wait(progress, DegradedSwitchoverTimedOut, msg+fmt.Sprintf("; %s stays the primary.", primaries[0].Name)),
			DegradedSwitchoverTimedOut)
	}
	target, ok := mostAdvanced(in.Members, sw.From, anyMember)
	if !ok {
		return degraded(wait(progress, DegradedSwitchoverTimedOut, msg+"; no member is healthy enough to be promoted."),
			DegradedSwitchoverTimedOut)
	}
	if blocking := mayWrite(in.Members, target.Name, ""); len(blocking) > 0 {
		if d, ok := fenceBlocking(in, progress, sw.From, target.Name, blocking); ok {
			return degraded(d, DegradedSwitchoverTimedOut)
		}
		return degraded(wait(progress, DegradedSwitchoverTimedOut, msg+fmt.Sprintf("; not promoting %s while %s may still write.",
			target.Name, strings.Join(blocking, ", "))), DegradedSwitchoverTimedOut)
	}
	progress.Switchover = &Switchover{From: sw.From, To: target.Name, Reason: SwitchFailover, Started: in.Now}
	return degraded(act(progress, Action{Kind: ActionPromote, Member: target.Name, Reason: ReasonPromotingAfterTimeout,
		Message: msg + fmt.Sprintf("; promoting %s, the most advanced member.", target.Name)}), DegradedSwitchoverTimedOut)
}

// primaryLost is rule 3: no member serves as primary (none reports it, or the one that does is
// not Ready). With failover on and the last primary unavailable for FailoverAfter, it is fenced
// if it may still write, then the most advanced healthy replica is promoted.
func primaryLost(in Input, progress Progress) Decision {
	last, ok := find(in.Members, progress.CurrentPrimary)
	if !ok {
		return degraded(wait(progress, DegradedPrimaryUnavailable, "No member is the primary, and the last primary is not known."),
			DegradedPrimaryUnavailable)
	}
	if !in.Policy.Failover {
		return degraded(wait(progress, DegradedPrimaryUnavailable, fmt.Sprintf("The primary %s is unavailable and failover is off.", last.Name)),
			DegradedPrimaryUnavailable)
	}
	if !failoverDue(last, in) {
		return degraded(wait(progress, ReasonWaitingForFailover, fmt.Sprintf("The primary %s is unavailable; failing over after %s.",
			last.Name, in.Policy.FailoverAfter)), DegradedPrimaryUnavailable)
	}
	// A primary that stepped down answers as a replica: it cannot write.
	fenced := last.Fenced || (last.Reachable && last.Role == RoleReplica)
	if !fenced && last.Reachable {
		return degraded(act(progress, Action{Kind: ActionFence, Member: last.Name, Reason: ReasonFencingPrimary,
			Message: fmt.Sprintf("Fencing the unavailable primary %s before failing over.", last.Name)}), DegradedPrimaryUnavailable)
	}
	return failover(in, progress, last.Name)
}

// failoverDue tells whether the last primary has been unavailable for FailoverAfter. One that is
// Ready and reachable but no longer reports primary has been demoted: it will not come back as
// the primary by itself, and waiting longer would not help.
func failoverDue(last Member, in Input) bool {
	if up(last) {
		return true
	}
	return !last.UnavailableSince.IsZero() && unavailableFor(last, in.Now) >= in.Policy.FailoverAfter
}

// failover promotes the most advanced healthy replica in place of the primary from, once no
// other member may write (from included: fenced, or fenced by deletion first).
func failover(in Input, progress Progress, from string) Decision {
	target, ok := mostAdvanced(in.Members, "", anyMember)
	if !ok {
		return degraded(wait(progress, DegradedNoFailoverCandidate, fmt.Sprintf("The primary %s is lost and no replica is healthy.", from)),
			DegradedNoFailoverCandidate)
	}
	if blocking := mayWrite(in.Members, target.Name, ""); len(blocking) > 0 {
		if d, ok := fenceBlocking(in, progress, from, target.Name, blocking); ok {
			return d
		}
		return degraded(waitForFence(progress, blocking), DegradedFailoverWaitingForFence)
	}
	progress.Switchover = &Switchover{From: from, To: target.Name, Reason: SwitchFailover, Started: in.Now}
	return degraded(act(progress, Action{Kind: ActionPromote, Member: target.Name, Reason: ReasonFailingOver,
		Message: fmt.Sprintf("Failing over from %s to %s, the most advanced healthy replica.", from, target.Name)}), DegradedPrimaryUnavailable)
}

// deletable tells whether m, a member that may still write, can be fenced by deleting its pod:
// the policy allows it (failover on, and the engine), the pod exists and is not terminating,
// m is neither Ready nor reachable (a member that is either is never touched), and its pod is not
// a replacement made since the failover began (it starts as a replica: deleting it again would
// only churn).
func deletable(m Member, p Policy) bool {
	return p.Failover && p.FenceByDeletion && m.Exists && !m.Ready && !m.Reachable && !m.Replacement
}

// fenceBlocking is the way past the members that may still write (blocking) when a failover
// from from to target is due, in flight or recovering a timed-out switchover, for an engine
// whose recreated member starts as it is announced (Policy.FenceByDeletion): when each of them
// is deletable, the failover is recorded first, if it is not in flight yet, so that a pod that
// replaces theirs is announced a replica of target, and the pod of the first is deleted. The
// target is promoted only once no member may write: the old pods gone (the kubelet stopped
// their containers, or their node is confirmed gone) or replaced by pods that start as
// replicas; a pod that stays terminating keeps the failover waiting.
func fenceBlocking(in Input, progress Progress, from, target string, blocking []string) (Decision, bool) {
	for _, name := range blocking {
		if m, ok := find(in.Members, name); !ok || !deletable(m, in.Policy) {
			return Decision{}, false
		}
	}
	if sw := progress.Switchover; sw == nil || sw.Reason != SwitchFailover {
		progress.Switchover = &Switchover{From: from, To: target, Reason: SwitchFailover, Started: in.Now}
	}
	message := fmt.Sprintf("Deleting the pod of %s, which does not answer, to fence it: %s is promoted in place of %s once no member may write.",
		blocking[0], progress.Switchover.To, progress.Switchover.From)
	if blocking[0] == from {
		message = fmt.Sprintf("Deleting the pod of the unavailable primary %s, whose agent does not answer, to fence it: %s is promoted once no member may write.",
			from, progress.Switchover.To)
	}
	return degraded(act(progress, Action{Kind: ActionDeletePod, Member: blocking[0], Reason: ReasonFencingByDeletion, Message: message}),
		DegradedPrimaryUnavailable), true
}

// requested is rule 5: a requested switchover, with every member up, to the replica it names
// or else to the most advanced healthy one.
func requested(in Input, progress Progress, primary Member) Decision {
	to := in.Request.To
	if to == primary.Name {
		d := wait(progress, ReasonSwitchoverNotNeeded, fmt.Sprintf("%s is already the primary.", to))
		d.Done = &Switchover{From: to, To: to, Reason: SwitchRequested, Started: in.Now}
		return d
	}
	target, ok := mostAdvanced(in.Members, "", anyMember)
	if to != "" {
		target, ok = find(in.Members, to)
		ok = ok && healthyReplica(target)
	}
	if !ok {
		return degraded(wait(progress, DegradedSwitchoverTargetNotHealthy, fmt.Sprintf("No healthy replica %q to switch over to.", to)),
			DegradedSwitchoverTargetNotHealthy)
	}
	return startSwitchover(in, progress, primary, target, SwitchRequested)
}

// update is rule 4: one pod down at a time, the replicas first (highest ordinal first), then
// the primary, by a switchover to an updated replica unless the method is restart or there is
// no replica.
func update(in Input, progress Progress, primary Member) Decision {
	if r, ok := outdatedReplica(in.Members, primary.Name); ok {
		return act(progress, Action{Kind: ActionDeletePod, Member: r.Name, Reason: ReasonUpdatingReplica,
			Message: fmt.Sprintf("Deleting the outdated replica %s.", r.Name)})
	}
	if primary.UpToDate {
		return wait(progress, ReasonStable, fmt.Sprintf("%s is the primary and every member is up to date.", primary.Name))
	}
	if in.Policy.UpdateMethod == UpdateSwitchover {
		if target, ok := mostAdvanced(in.Members, "", func(m Member) bool { return m.UpToDate }); ok {
			return startSwitchover(in, progress, primary, target, SwitchUpdate)
		}
	}
	return act(progress, Action{Kind: ActionDeletePod, Member: primary.Name, Reason: ReasonUpdatingPrimary,
		Message: fmt.Sprintf("Deleting the outdated primary %s.", primary.Name)})
}

// startSwitchover records a switchover from primary to target and asks for its first step;
// when that step would have to wait, the switchover is not started at all.
func startSwitchover(in Input, progress Progress, primary, target Member, reason SwitchReason) Decision {
	started := progress
	started.Switchover = &Switchover{From: primary.Name, To: target.Name, Reason: reason, Started: in.Now}
	d := continueSwitchover(in, started)
	if d.Action.Kind != ActionSwitchover {
		return wait(progress, d.Action.Reason, d.Message)
	}
	d.Action.Reason = ReasonSwitchoverStarted
	return d
}
