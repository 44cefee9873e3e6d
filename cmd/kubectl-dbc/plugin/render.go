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

package plugin

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// lastEvents is how many events "status" shows: the newest ones, oldest first.
const lastEvents = 5

// role is every member's role in a cluster without an engine: the operator knows no primary or
// replica there.
const role = "member"

// none stands for a value that does not exist (no pod, no claim, no time).
const none = "-"

// render writes the one-screen status of s, with ages relative to now.
func render(out io.Writer, s *clusterState, now time.Time) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	r := &renderer{w: w, now: now}
	r.header(s)
	r.members(s)
	r.backups(s.Backups)
	r.conditions(s.Cluster.Status.Conditions)
	r.events(s.Events)
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing the status: %w", err)
	}
	return r.err
}

// renderer writes lines to a tabwriter and keeps the first error.
type renderer struct {
	w   *tabwriter.Writer
	now time.Time
	err error
}

// line writes the cells as one tab-separated line.
func (r *renderer) line(cells ...string) {
	if r.err == nil {
		_, r.err = fmt.Fprintln(r.w, strings.Join(cells, "\t"))
	}
}

// section ends the table above (a tab-less line flushes the tabwriter's column block) and
// writes a section title, then "(none)" when the section has no rows; it says whether it has.
func (r *renderer) section(title string, rows int) bool {
	r.line("")
	r.line(title)
	if rows == 0 {
		r.line("(none)")
	}
	return rows > 0
}

// age is the time since t as kubectl prints ages, or "-" for a zero time.
func (r *renderer) age(t time.Time) string {
	if t.IsZero() {
		return none
	}
	return duration.HumanDuration(r.now.Sub(t))
}

// ago is age followed by " ago", or "-".
func (r *renderer) ago(t *metav1.Time) string {
	if t == nil || t.IsZero() {
		return none
	}
	return r.age(t.Time) + " ago"
}

// header writes what the cluster is and says about itself.
func (r *renderer) header(s *clusterState) {
	dc := &s.Cluster
	r.line("DatabaseCluster:", dc.Namespace+"/"+dc.Name)
	r.line("Age:", r.age(dc.CreationTimestamp.Time))
	if c := meta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionAvailable); c != nil {
		r.line("Available:", fmt.Sprintf("%s (%s) %s", c.Status, c.Reason, c.Message))
	} else {
		r.line("Available:", "Unknown (the operator has not written a status yet)")
	}
	wanted := none
	if dc.Spec.Replicas != nil {
		wanted = strconv.Itoa(int(*dc.Spec.Replicas))
	}
	r.line("Replicas:", fmt.Sprintf("%s wanted, %d running, %d ready, %d updated",
		wanted, dc.Status.Replicas, dc.Status.ReadyReplicas, dc.Status.UpdatedReplicas))
	image := dc.Spec.Image
	if dc.Status.CurrentImage != "" && dc.Status.CurrentImage != image {
		image += " (running: " + dc.Status.CurrentImage + ")"
	}
	r.line("Image:", image)
	r.line("Storage:", fmt.Sprintf("%s of class %s", dc.Spec.Storage.Size, dc.Spec.Storage.StorageClassName))
	r.line("Paused:", strconv.FormatBool(dc.Spec.Paused))
	r.line("Hibernated:", strconv.FormatBool(dc.Spec.Hibernated))
	if at, ok := dc.Annotations[databasev1alpha1.RestartedAtAnnotation]; ok {
		if t, err := time.Parse(time.RFC3339, at); err == nil {
			at += " (" + r.age(t) + " ago)"
		}
		r.line("Restarted at:", at)
	}
	if b := dc.OfflineBackup(); b != "" {
		r.line("Stopped by:", "Offline backup "+b)
	}
	if b := dc.Status.RestoredFromBackup; b != "" {
		r.line("Restored from:", "backup "+b)
	}
	if dc.HasEngine() {
		r.roles(dc)
	}
}

// roles writes the engine of a cluster that has one, its primary, and the switchover in
// progress or, before the operator has taken it, the one asked for by the annotation.
func (r *renderer) roles(dc *databasev1alpha1.DatabaseCluster) {
	r.line("Engine:", string(dc.EngineName()))
	primary := dc.Status.CurrentPrimary
	if primary == "" {
		primary = none
	}
	r.line("Primary:", primary)
	if sw := dc.Status.Switchover; sw != nil {
		r.line("Switchover:", fmt.Sprintf("%s -> %s (%s, started %s)", sw.From, sw.To, sw.Reason, r.ago(&sw.StartedAt)))
	} else if to, ok := dc.Annotations[databasev1alpha1.SwitchoverAnnotation]; ok {
		if to == databasev1alpha1.SwitchoverToAny {
			to = "the most advanced healthy replica"
		}
		r.line("Switchover:", "requested to "+to+", not started yet")
	}
}

// members writes the members table.
func (r *renderer) members(s *clusterState) {
	members := s.members()
	if !r.section("MEMBERS", len(members)) {
		return
	}
	engine := s.Cluster.HasEngine()
	observed := map[string]databasev1alpha1.MemberStatus{}
	for _, ms := range s.Cluster.Status.Members {
		observed[ms.Name] = ms
	}
	// With an engine, POSITION follows ROLE; without one the table is 0.4's.
	withPosition := func(cells []string, position string) []string {
		if !engine {
			return cells
		}
		return slices.Insert(cells, 2, position)
	}
	r.line(withPosition([]string{"POD", "ROLE", "READY", "STATUS", "RESTARTS", "NODE", "CLAIM", "REQUESTED", "CAPACITY", "AGE"}, "POSITION")...)
	for _, m := range members {
		name := s.Cluster.StatefulSetName() + "-" + strconv.Itoa(int(m.ordinal))
		roleText, position := role, none
		if engine {
			roleText, position = memberRole(observed, name, m.pod)
		}
		ready, status, restarts, node, age := none, "absent", none, none, none
		if p := m.pod; p != nil {
			ready, status = podReady(p), podStatus(p)
			restarts = strconv.Itoa(int(podRestarts(p)))
			if p.Spec.NodeName != "" {
				node = p.Spec.NodeName
			}
			age = r.age(p.CreationTimestamp.Time)
		}
		claim, requested, capacity := none, none, none
		if c := m.claim; c != nil {
			claim = c.Name
			if q, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
				requested = q.String()
			}
			if q, ok := c.Status.Capacity[corev1.ResourceStorage]; ok {
				capacity = q.String()
			}
			if c.Status.Phase != corev1.ClaimBound {
				capacity += " (" + string(c.Status.Phase) + ")"
			}
		}
		r.line(withPosition([]string{name, roleText, ready, status, restarts, node, claim, requested, capacity, age}, position)...)
	}
}

// memberRole is the role and replication position of the member name of a cluster with an
// engine, as the operator last observed them (status.members), "-" for a member it has not
// reported. When the member's pod carries a role label other than that role, the label is shown
// too: the Services NAME-rw and NAME-ro route by the label, and during a split brain or after a
// missed read the two differ on purpose.
func memberRole(observed map[string]databasev1alpha1.MemberStatus, name string, pod *corev1.Pod) (string, string) {
	text, position := none, none
	ms, ok := observed[name]
	if ok {
		text = string(ms.Role)
		if ms.Position != "" {
			position = ms.Position
		}
	}
	if pod == nil {
		return text, position
	}
	label, labelled := pod.Labels[databasev1alpha1.RoleLabel]
	switch {
	case labelled && label != text:
		text += " (label " + label + ")"
	case !labelled && ok:
		text += " (no label)"
	}
	return text, position
}

// podReady is "ready containers/containers".
func podReady(p *corev1.Pod) string {
	ready := 0
	for _, c := range p.Status.ContainerStatuses {
		if c.Ready {
			ready++
		}
	}
	return fmt.Sprintf("%d/%d", ready, len(p.Spec.Containers))
}

// podStatus is what kubectl get shows as STATUS, in short: Terminating, a container's waiting or
// terminated reason (CrashLoopBackOff, ImagePullBackOff, Error, ...), else the pod's phase.
func podStatus(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "Terminating"
	}
	for _, c := range p.Status.ContainerStatuses {
		switch {
		case c.State.Waiting != nil && c.State.Waiting.Reason != "":
			return c.State.Waiting.Reason
		case c.State.Terminated != nil && c.State.Terminated.Reason != "":
			return c.State.Terminated.Reason
		}
	}
	if p.Status.Phase == "" {
		return string(corev1.PodPending)
	}
	return string(p.Status.Phase)
}

// podRestarts is the sum of the restart counts of the pod's containers.
func podRestarts(p *corev1.Pod) int32 {
	var n int32
	for _, c := range p.Status.ContainerStatuses {
		n += c.RestartCount
	}
	return n
}

// backups writes the newest backup of the cluster and, when that one is not Completed, the
// newest Completed one, each with the schedule that made it.
func (r *renderer) backups(backups []databasev1alpha1.DatabaseBackup) {
	if !r.section("BACKUPS", len(backups)) {
		return
	}
	sorted := byTime(backups, func(b *databasev1alpha1.DatabaseBackup) (time.Time, string) {
		return b.CreationTimestamp.Time, b.Name
	})
	slices.Reverse(sorted)
	shown := []databasev1alpha1.DatabaseBackup{sorted[0]}
	if sorted[0].Status.Phase != databasev1alpha1.BackupCompleted {
		for _, b := range sorted[1:] {
			if b.Status.Phase == databasev1alpha1.BackupCompleted {
				shown = append(shown, b)
				break
			}
		}
	}
	r.line("NAME", "SCHEDULE", "METHOD", "PHASE", "STARTED", "COMPLETED")
	for _, b := range shown {
		phase := string(b.Status.Phase)
		if phase == "" {
			phase = string(databasev1alpha1.BackupPending)
		}
		if c := meta.FindStatusCondition(b.Status.Conditions, databasev1alpha1.ConditionFailed); c != nil && c.Status == metav1.ConditionTrue {
			phase += " (" + c.Reason + ")"
		}
		r.line(b.Name, scheduleOf(&b), string(b.BackupMethod()), phase, r.ago(b.Status.StartTime), r.ago(b.Status.CompletionTime))
	}
}

// scheduleOf is the name of the ScheduledDatabaseBackup that made b, as b's metadata says
// (DatabaseBackup.MadeBySchedule), or none for a backup made otherwise (by hand, by "kubectl dbc
// backup"). A backup outlives its schedule unless the schedule said backupOwnerReference
// schedule, so the schedule named may be gone.
func scheduleOf(b *databasev1alpha1.DatabaseBackup) string {
	if name, _, ok := b.MadeBySchedule(); ok && name != "" {
		return name
	}
	return none
}

// byTime is a copy of items, the oldest first by the time key gives; a tie goes by the name key
// gives, so that the order is the same on every call.
func byTime[T any](items []T, key func(*T) (time.Time, string)) []T {
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b T) int {
		ta, na := key(&a)
		tb, nb := key(&b)
		if c := ta.Compare(tb); c != 0 {
			return c
		}
		return strings.Compare(na, nb)
	})
	return sorted
}

// conditions writes the cluster's conditions in the order the API server holds them.
func (r *renderer) conditions(conditions []metav1.Condition) {
	if !r.section("CONDITIONS", len(conditions)) {
		return
	}
	r.line("TYPE", "STATUS", "REASON", "AGE", "MESSAGE")
	for _, c := range conditions {
		r.line(c.Type, string(c.Status), c.Reason, r.age(c.LastTransitionTime.Time), c.Message)
	}
}

// eventTime is when an event was last seen: its series' last observation, its time, or (for an
// event written through the core API) its deprecated timestamps.
func eventTime(ev *eventsv1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	case !ev.DeprecatedLastTimestamp.IsZero():
		return ev.DeprecatedLastTimestamp.Time
	}
	return ev.CreationTimestamp.Time
}

// events writes the last lastEvents events, oldest first, as kubectl describe does.
func (r *renderer) events(events []eventsv1.Event) {
	if !r.section("EVENTS", len(events)) {
		return
	}
	sorted := byTime(events, func(ev *eventsv1.Event) (time.Time, string) { return eventTime(ev), ev.Name })
	if len(sorted) > lastEvents {
		sorted = sorted[len(sorted)-lastEvents:]
	}
	r.line("LAST SEEN", "TYPE", "REASON", "COUNT", "MESSAGE")
	for i := range sorted {
		ev := &sorted[i]
		count := int32(1)
		if ev.Series != nil && ev.Series.Count > 1 {
			count = ev.Series.Count
		} else if ev.DeprecatedCount > 1 {
			count = ev.DeprecatedCount
		}
		r.line(r.age(eventTime(ev)), ev.Type, ev.Reason, strconv.Itoa(int(count)), ev.Note)
	}
}
