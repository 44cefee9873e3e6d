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
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/roles"
	"github.com/seed1b407122/database-operator/controllers/internal/patch"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
)

// Events of the roles phase.
const (
	// EventSwitchover tells that a switchover or failover started, or was carried a step on.
	EventSwitchover = "Switchover"
	// EventSwitchoverDone tells that the new primary was observed as the only one.
	EventSwitchoverDone = "SwitchoverDone"
	// EventMemberUpdated tells that the operator deleted a member's pod for an update.
	EventMemberUpdated = "MemberUpdated"
	// EventFenced tells that the operator fenced a member.
	EventFenced = "Fenced"
	// EventPromoted tells that the operator promoted a member.
	EventPromoted = "Promoted"
	// EventSwitchoverRefused is the warning that a requested switchover cannot be made.
	EventSwitchoverRefused = databasev1alpha1.ReasonSwitchoverRefused
)

// actionSwitchover is the action of the events about roles.
const actionSwitchover = "Switchover"

// roleActionTimeout bounds one action through an agent (a promotion waits for the database).
const roleActionTimeout = 30 * time.Second

// rolesDecision is what the planner decided on a pass, and what came of it.
type rolesDecision struct {
	// ran says that the planner ran.
	ran bool
	// decision is the planner's.
	decision roles.Decision
	// deferred says that the action waits for the status to record the progress it starts
	// (the next pass carries it out).
	deferred bool
}

// decideRoles runs the planner on the pass's facts and carries out its action, unless the
// action starts a progress the status has not recorded yet: the status is written first (at the
// end of this pass), so that an operator restarted in between resumes the same switchover.
func (r *Reconciler) decideRoles(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, facts memberFacts) (rolesDecision, error) {
	in := roleInput(dc, facts, r.clock().Now())
	out := rolesDecision{ran: true, decision: roles.Plan(in)}
	d := out.decision
	if err := r.settleRequest(ctx, dc, in, d); err != nil {
		return out, err
	}
	if d.Done != nil {
		r.Recorder.Eventf(dc, nil, corev1.EventTypeNormal, EventSwitchoverDone, actionSwitchover, "%s is the only primary (from %s, %s)",
			d.Done.To, d.Done.From, d.Done.Reason)
	}
	if d.Action.Kind == roles.ActionWait {
		return out, nil
	}
	// A deletion that starts a switchover (a failover's fence) waits too; one that ends it does not.
	if !reflect.DeepEqual(d.Progress.Switchover, in.Progress.Switchover) && (d.Action.Kind != roles.ActionDeletePod || d.Progress.Switchover != nil) {
		out.deferred = true
		return out, nil
	}
	return out, r.carryOut(ctx, dc, facts, d.Action)
}

// settleRequest removes the switchover annotation once the planner has taken the request into
// a progress the status already records, found it done, or refused it; the removal changes the
// cluster's metadata, so it waits for the progress to be recorded (a pass that both recorded and
// removed could lose the request to a conflict).
func (r *Reconciler) settleRequest(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, in roles.Input, d roles.Decision) error {
	if in.Request == nil {
		return nil
	}
	recorded := in.Progress.Switchover != nil && in.Progress.Switchover.Reason == roles.SwitchRequested
	refused := d.Degraded == roles.DegradedSwitchoverTargetNotHealthy
	done := d.Done != nil && d.Done.Reason == roles.SwitchRequested
	// A request naming the member that is already the only primary needs nothing; "any" is
	// settled only by a switchover (or a refusal), so that one asked while a member is down
	// waits for it rather than vanishing.
	already := d.Progress.Switchover == nil && in.Request.To != "" && in.Request.To == d.Progress.CurrentPrimary &&
		d.Degraded == ""
	if !recorded && !refused && !done && !already {
		return nil
	}
	if refused {
		r.Recorder.Eventf(dc, nil, corev1.EventTypeWarning, EventSwitchoverRefused, actionSwitchover, "%s", d.Message)
	}
	patched := dc.DeepCopy()
	delete(patched.Annotations, databasev1alpha1.SwitchoverAnnotation)
	if err := r.Patch(ctx, patched, patch.LockedMergeFrom(dc)); err != nil {
		return fmt.Errorf("removing the annotation %s: %w", databasev1alpha1.SwitchoverAnnotation, err)
	}
	return nil
}

// carryOut does action through the API server (a pod deleted) or the members' agents.
func (r *Reconciler) carryOut(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, facts memberFacts, action roles.Action) error {
	ctx, cancel := context.WithTimeout(ctx, roleActionTimeout)
	defer cancel()
	member := podNamed(facts.pods, action.Member)
	switch action.Kind {
	case roles.ActionDeletePod:
		if action.Reason == roles.ReasonFencingByDeletion {
			return r.deletePod(ctx, dc, member, action, deletionToFence)
		}
		return r.deletePod(ctx, dc, member, action, deletionForUpdate)
	case roles.ActionFence:
		return r.fence(ctx, dc, member)
	case roles.ActionPromote:
		return r.promote(ctx, dc, member)
	case roles.ActionSwitchover:
		return r.switchover(ctx, dc, member, podNamed(facts.pods, action.Target), facts.reportsPrimary(action.Member))
	}
	return nil
}

// podNamed is the pod of pods named name, nil when there is none.
func podNamed(pods []corev1.Pod, name string) *corev1.Pod {
	for i := range pods {
		if pods[i].Name == name {
			return &pods[i]
		}
	}
	return nil
}

// errNoPod is an action on a member whose pod is not there: the next pass decides again.
var errNoPod = errors.New("the member has no pod")

// podDeletion is why the operator deletes a member's pod, and the event that says so.
type podDeletion struct {
	// purpose completes "deleting pod NAME ...": "for the update", "to fence it".
	purpose   string
	eventType string
	reason    string
	action    string
	// note is the event's note, with the pod's name and the planner's message.
	note string
}

// The deletions of the role planner's actions: for an update, the StatefulSet recreates the pod
// from the update revision; to fence a primary that does not answer, the kubelet stops its
// containers before the pod is gone, and the pod that replaces it starts as a replica of the
// failover's target.
var (
	deletionForUpdate = podDeletion{purpose: "for the update", eventType: corev1.EventTypeNormal, reason: EventMemberUpdated,
		action: actionUpdate, note: "Deleted pod %s to update it (%s)"}
	deletionToFence = podDeletion{purpose: "to fence it", eventType: corev1.EventTypeWarning, reason: EventFenced,
		action: actionSwitchover, note: "Deleted pod %s to fence it: %s"}
)

// deletePod deletes pod, exactly the one observed (a UID precondition), for why, and says so.
func (r *Reconciler) deletePod(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod, action roles.Action, why podDeletion) error {
	if pod == nil {
		return nil
	}
	if err := r.Delete(ctx, pod, client.Preconditions{UID: ptr.To(pod.UID)}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting pod %s %s: %w", pod.Name, why.purpose, err)
	}
	r.Recorder.Eventf(dc, pod, why.eventType, why.reason, why.action, why.note, pod.Name, action.Message)
	return nil
}

// fence makes pod's member refuse writes through its agent.
func (r *Reconciler) fence(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod) error {
	if pod == nil {
		return errNoPod
	}
	if _, err := r.Members.Fence(ctx, dc, pod); err != nil {
		return fmt.Errorf("fencing %s: %w", pod.Name, err)
	}
	r.Recorder.Eventf(dc, pod, corev1.EventTypeNormal, EventFenced, actionSwitchover, "Fenced %s: it takes no writes", pod.Name)
	return nil
}

// promote makes pod's member the primary through its agent.
func (r *Reconciler) promote(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod) error {
	if pod == nil {
		return errNoPod
	}
	if _, err := r.Members.Promote(ctx, dc, pod); err != nil {
		return fmt.Errorf("promoting %s: %w", pod.Name, err)
	}
	r.Recorder.Eventf(dc, pod, corev1.EventTypeNormal, EventPromoted, actionSwitchover, "Promoted %s", pod.Name)
	return nil
}

// switchover hands the primary role from from to to: by a leadership transfer where the engine
// has one (etcd; none once from no longer leads), otherwise by fencing from (again: it answers
// with its last position) and promoting to once it has replayed all from wrote. Each step is
// idempotent: a pass that finds from already fenced goes on with to.
func (r *Reconciler) switchover(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, from, to *corev1.Pod, fromLeads bool) error {
	if to == nil {
		return errNoPod
	}
	if dc.EngineName() == databasev1alpha1.EngineEtcd {
		if from == nil || !fromLeads {
			return nil // the leadership moved: the next read sees to lead
		}
		if _, err := r.Members.TransferLeadership(ctx, dc, from, to.Name); err != nil {
			return fmt.Errorf("moving the leadership from %s to %s: %w", from.Name, to.Name, err)
		}
		r.Recorder.Eventf(dc, from, corev1.EventTypeNormal, EventSwitchover, actionSwitchover, "Moved the leadership from %s to %s", from.Name, to.Name)
		return nil
	}
	var fenced memberagent.Observation
	if from != nil {
		var err error
		if fenced, err = r.Members.Fence(ctx, dc, from); err != nil {
			return fmt.Errorf("fencing %s for the switchover to %s: %w", from.Name, to.Name, err)
		}
	}
	target, err := r.Members.Observe(ctx, dc, to)
	if err != nil {
		return fmt.Errorf("reading %s for the switchover: %w", to.Name, err)
	}
	if target.Position < fenced.Position {
		return nil // to has not replayed all from wrote: the next pass looks again
	}
	return r.promote(ctx, dc, to)
}

// reportsPrimary says whether member reported itself the primary at the pass's read.
func (f memberFacts) reportsPrimary(member string) bool {
	for _, read := range f.reads {
		if read.pod == member {
			return reportsPrimary(read)
		}
	}
	return false
}
