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
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/seed1b407122/database-operator/api/conditions"
	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// actionUpdate is the action of the events about children brought to the spec.
const actionUpdate = "Update"

// EventNotRestricted is the warning that the pod template the operator just wrote breaks the
// restricted Pod Security profile, because of a user's container or volume: the user's choice,
// told rather than refused, so that a namespace that enforces the profile is not a silent
// mystery (its pods would be refused at creation).
const EventNotRestricted = "NotRestricted"

// changes collects what one reconcile did to the children, so that each kind of change is told
// in one event: a series of events with the same reason would be merged by the event recorder.
type changes struct {
	created  []string
	repaired []string
	removed  []string
	scaled   string
	updating string
	expanded []string
	replaced string
	restored string
	// notRestricted says what in the pod template just written breaks the restricted profile.
	notRestricted string
}

// ensured notes the result of one Ensure call.
func (c *changes) ensured(result child.Result, kind, name string) {
	switch result {
	case child.Created:
		c.created = append(c.created, kind+" "+name)
	case child.Patched:
		c.repaired = append(c.repaired, kind+" "+name)
	}
}

// merge appends what other noted of children to c: the spec-only children are written at once,
// each noting in a record of its own.
func (c *changes) merge(other *changes) {
	c.created = append(c.created, other.created...)
	c.repaired = append(c.repaired, other.repaired...)
	c.removed = append(c.removed, other.removed...)
}

// statefulSet notes a StatefulSet write: a creation, a scale, a rolling update of the pod
// template, or a repair of a hand edit; drift is what the write changed. A write of the
// operator's own records alone is not told.
func (c *changes) statefulSet(dc *databasev1alpha1.DatabaseCluster, result child.Result, before, desired *appsv1.StatefulSet, drift specs.Drift) {
	if result != child.Patched {
		c.ensured(result, "StatefulSet", desired.Name)
		if result == child.Created {
			c.restricted(desired)
		}
		return
	}
	if drift.RecordOnly() {
		return
	}
	if drift.Scaled() {
		c.scaled = fmt.Sprintf("Scaled StatefulSet %s from %d to %d replicas",
			desired.Name, ptr.Deref(before.Spec.Replicas, 0), *desired.Spec.Replicas)
	}
	if drift.TemplateChanged() {
		c.updating = fmt.Sprintf("Rolling out a new pod template to StatefulSet %s (image %s)", desired.Name, dc.Spec.Image)
		c.restricted(desired)
	} else if !drift.Scaled() {
		c.ensured(result, "StatefulSet", desired.Name)
	}
}

// restricted notes what in the pod template of sts breaks the restricted profile.
func (c *changes) restricted(sts *appsv1.StatefulSet) {
	if broken := specs.NotRestricted(&sts.Spec.Template); broken != "" {
		c.notRestricted = fmt.Sprintf("The pods of StatefulSet %s do not meet the restricted Pod Security profile: %s", sts.Name, broken)
	}
}

// record emits the events of the changes.
func (c *changes) record(r recorder.EventRecorder, dc *databasev1alpha1.DatabaseCluster) {
	if c.notRestricted != "" {
		r.Eventf(dc, nil, corev1.EventTypeWarning, EventNotRestricted, actionUpdate, "%s", c.notRestricted)
	}
	for _, e := range []struct{ reason, action, note string }{
		{EventCreated, "Create", joinNote("Created ", c.created)},
		{EventRepaired, actionUpdate, joinNote("Put back to the spec: ", c.repaired)},
		{EventRemoved, "Delete", joinNote("Deleted ", c.removed)},
		{EventScaled, "Scale", c.scaled},
		{EventUpdating, actionUpdate, c.updating},
		{EventExpanding, actionUpdate, joinNote("Expanding claims to spec.storage.size: ", c.expanded)},
		{EventReplacing, "Delete", c.replaced},
		{EventRestored, "Restore", restoredNote(c.restored)},
	} {
		if e.note != "" {
			r.Eventf(dc, nil, corev1.EventTypeNormal, e.reason, e.action, "%s", e.note)
		}
	}
}

func restoredNote(backup string) string {
	if backup == "" {
		return ""
	}
	return "Restored the member claims from the snapshots of DatabaseBackup " + backup
}

func joinNote(prefix string, items []string) string {
	if len(items) == 0 {
		return ""
	}
	return prefix + strings.Join(items, ", ")
}

// transitions are the condition changes that are told as events.
var transitions = []struct {
	condition string
	status    metav1.ConditionStatus
	reason    string
	eventType string
}{
	{databasev1alpha1.ConditionAvailable, metav1.ConditionTrue, EventAvailable, corev1.EventTypeNormal},
	{databasev1alpha1.ConditionAvailable, metav1.ConditionFalse, EventUnavailable, corev1.EventTypeWarning},
	{databasev1alpha1.ConditionPaused, metav1.ConditionTrue, EventPaused, corev1.EventTypeNormal},
	{databasev1alpha1.ConditionPaused, metav1.ConditionFalse, EventResumed, corev1.EventTypeNormal},
	// Degraded is told with the condition's own reason: ReconcileFailed or PodNotReady.
	{conditions.Degraded, metav1.ConditionTrue, "", corev1.EventTypeWarning},
	{databasev1alpha1.ConditionResizing, metav1.ConditionFalse, EventResized, corev1.EventTypeNormal},
}

// warnings are the condition reasons told as a warning, with the reason as the event's, when a
// condition turns to one of them (reasonBegan): once per stuck rollout, size limit or lost member,
// not with each change of the message.
var warnings = []struct {
	condition string
	reasons   []string
	// capitalize: the note is the message with a capital first letter (the auto-grow warnings'
	// have always been told so); the others are told as the condition says them.
	capitalize bool
}{
	{databasev1alpha1.ConditionProgressing, []string{databasev1alpha1.ReasonRolloutStuck}, false},
	{databasev1alpha1.ConditionStorageAutoGrow, []string{databasev1alpha1.ReasonAtMaxSize, databasev1alpha1.ReasonExpansionNotAllowed}, true},
	{databasev1alpha1.ConditionMemberLost, []string{databasev1alpha1.ReasonMemberLost}, false},
}

// reasonBegan returns the condition conditionType of after when its reason is one of reasons
// and differs from that of before (or before had none); nil otherwise.
func reasonBegan(before, after []metav1.Condition, conditionType string, reasons ...string) *metav1.Condition {
	now := meta.FindStatusCondition(after, conditionType)
	if now == nil || !slices.Contains(reasons, now.Reason) {
		return nil
	}
	if was := meta.FindStatusCondition(before, conditionType); was != nil && was.Reason == now.Reason {
		return nil
	}
	return now
}

// StatusWritten tells what a status write changed: a log line, and one event per condition that
// changed status between before and after. A condition seen for the first time is only told when
// it is True: a new cluster is not "Unavailable", it is being created.
func (r *Reconciler) StatusWritten(ctx context.Context, before, after *databasev1alpha1.DatabaseCluster) {
	logf.FromContext(ctx).V(1).Info("Patched the status", "ready", after.Status.ReadyReplicas, "replicas", after.Status.Replicas)
	for _, t := range transitions {
		was := meta.FindStatusCondition(before.Status.Conditions, t.condition)
		now := meta.FindStatusCondition(after.Status.Conditions, t.condition)
		if now == nil || now.Status != t.status {
			continue
		}
		if (was == nil && t.status != metav1.ConditionTrue) || (was != nil && was.Status == now.Status) {
			continue
		}
		reason := t.reason
		if reason == "" {
			reason = now.Reason
		}
		r.Recorder.Eventf(after, nil, t.eventType, reason, "Reconcile", "%s", now.Message)
	}
	for _, w := range warnings {
		if now := reasonBegan(before.Status.Conditions, after.Status.Conditions, w.condition, w.reasons...); now != nil {
			message := now.Message
			if w.capitalize {
				message = capitalize(message)
			}
			r.Recorder.Eventf(after, nil, corev1.EventTypeWarning, now.Reason, "Reconcile", "%s", message)
		}
	}
	// Told even for a new cluster: it asked for monitoring it cannot have yet.
	if now := conditions.Changed(before.Status.Conditions, after.Status.Conditions, databasev1alpha1.ConditionMonitoringReady); now != nil &&
		now.Reason == databasev1alpha1.ReasonPodMonitorCRDMissing {
		r.Recorder.Eventf(after, nil, corev1.EventTypeWarning, now.Reason, "Reconcile", "%s", now.Message)
	}
}
