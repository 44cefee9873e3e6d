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
	"fmt"
	"slices"
	"strings"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"

	"github.com/seed1b407122/database-operator/api/conditions"
	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/roles"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// observation is what one reconcile saw of a cluster's children.
type observation struct {
	// statefulSet is the StatefulSet as the server holds it, nil when it does not exist.
	statefulSet *cachecfg.StatefulSetView
	// claims are the data claims of the cluster.
	claims []corev1.PersistentVolumeClaim
	// scaleUpWaits are the condemned claims a scale-up waits for (scaleUpTarget).
	scaleUpWaits []string
	// err is the error that stopped the reconcile of the children, if any.
	err error
	// stuck is a pod that has not been Ready for longer than the bound, if any.
	stuck *stuckPod
	// rollout is the stuck member of the update revision, if any, and the one replaced (rollout.go).
	rollout rolloutObservation
	// lost are the members lost with their nodes, and the one replaced (lostmember.go).
	lost lostObservation
	// autoGrow is what auto-grow measured and grew (autogrow_phase.go).
	autoGrow autoGrowObservation
	// roles is what the roles phase read and published (roles_phase.go).
	roles rolesObservation
	// createFailure is why the StatefulSet controller could not create a missing pod, if it said.
	createFailure string
	// recheckAfter is when a pod that is not Ready yet reaches the bound (0: none is waiting).
	recheckAfter time.Duration
	// podMonitor is what the reconcile found of the PodMonitor of spec.monitoring.
	podMonitor podMonitorState
	// monitoringRecheck is how soon the API server is asked again for PodMonitors, while they
	// are not served.
	monitoringRecheck time.Duration
	// tls is the serving certificate the inputs phase found (nil without spec.tls, or when the
	// phases stopped before it).
	tls *servingCertificate
	// statefulSetCreated says that this reconcile created the StatefulSet (and restored no
	// claims): see statusDeferred.
	statefulSetCreated bool
}

// statusDeferred reports whether the status this reconcile observed is left for the next one
// to write. That is so when the reconcile created the StatefulSet and nothing failed: all the
// status could tell is that no controller has observed the new StatefulSet yet, and the
// StatefulSet's create event brings the cluster back to the queue at once, so the next
// reconcile writes what is known then. On a busy cluster that is usually the pod the
// StatefulSet controller has made in the meantime, and one status patch of every new cluster
// is saved (at 1,000 new clusters, 1,000 writes the API server need not take while it is
// scheduling their pods); on an idle one the next reconcile follows within milliseconds.
// An error is never deferred: Degraded says it now.
func statusDeferred(obs observation) bool {
	return obs.statefulSetCreated && obs.err == nil
}

// computeStatus returns the status of dc as observed. It starts from the current status only
// to keep the lastTransitionTime of conditions that did not change.
func computeStatus(dc *databasev1alpha1.DatabaseCluster, obs observation) databasev1alpha1.DatabaseClusterStatus {
	status := databasev1alpha1.DatabaseClusterStatus{
		ObservedGeneration: dc.Generation,
		Selector:           podSelector(dc),
		RestoredFromBackup: dc.Status.RestoredFromBackup,
		Conditions:         append([]metav1.Condition(nil), dc.Status.Conditions...),
	}
	if sts := obs.statefulSet; sts != nil {
		status.Replicas = sts.Status.Replicas
		status.ReadyReplicas = sts.Status.ReadyReplicas
		status.UpdatedReplicas = sts.Status.UpdatedReplicas
		status.CurrentImage = sts.Image(specs.ContainerName)
	}
	status.CertificateNotAfter = certificateNotAfter(dc, obs)
	status.Storage = storageStatus(dc, obs.autoGrow)
	status.CurrentPrimary, status.Members = rolesStatus(dc, obs.roles)
	status.Switchover, status.TargetPrimary = switchoverProgress(dc, obs.roles)
	setAvailableCondition(&status.Conditions, dc, obs.statefulSet)
	setProgressingCondition(&status.Conditions, dc, obs.statefulSet, obs.scaleUpWaits, obs.rollout)
	setDegradedCondition(&status.Conditions, dc, obs)
	setPausedCondition(&status.Conditions, dc)
	setResizingCondition(&status.Conditions, dc, obs.statefulSet, obs.claims)
	setHibernatedCondition(&status.Conditions, dc, obs.statefulSet)
	setMonitoringReadyCondition(&status.Conditions, dc, obs)
	setMemberLostCondition(&status.Conditions, dc, obs.lost)
	setStorageAutoGrowCondition(&status.Conditions, dc, obs.autoGrow)
	return status
}

// certificateNotAfter is the serving certificate's expiry: as found now, or as last known while
// the phases stopped before the certificate (the status keeps it until it is known again).
func certificateNotAfter(dc *databasev1alpha1.DatabaseCluster, obs observation) *metav1.Time {
	switch {
	case dc.Spec.TLS == nil:
		return nil
	case obs.tls == nil:
		return dc.Status.CertificateNotAfter
	}
	return &metav1.Time{Time: obs.tls.notAfter}
}

// podSelector is the label selector of dc's pods in its string form, which the scale
// subresource reports to autoscalers (status.selector).
func podSelector(dc *databasev1alpha1.DatabaseCluster) string {
	return k8slabels.SelectorFromSet(dc.SelectorLabels()).String()
}

// setAvailableCondition: True when the StatefulSet reports as many Ready pods as spec.replicas;
// a stopped cluster (hibernated, or held for an Offline backup) is not available, and the reason
// says it was stopped on purpose.
func setAvailableCondition(list *[]metav1.Condition, dc *databasev1alpha1.DatabaseCluster, sts *cachecfg.StatefulSetView) {
	want := *dc.Spec.Replicas
	var ready int32
	if sts != nil {
		ready = sts.Status.ReadyReplicas
	}
	cond := metav1.Condition{
		Type:               databasev1alpha1.ConditionAvailable,
		Status:             metav1.ConditionFalse,
		Reason:             databasev1alpha1.ReasonReplicasNotReady,
		Message:            fmt.Sprintf("%d/%d replicas are ready", ready, want),
		ObservedGeneration: dc.Generation,
	}
	switch {
	case dc.Stopped():
		cond.Reason = databasev1alpha1.ReasonHibernated
		cond.Message = fmt.Sprintf("%s: the cluster is stopped (%d ready pods left); its claims are kept", stoppedBy(dc), ready)
	case sts != nil && ready >= want:
		cond.Status = metav1.ConditionTrue
		cond.Reason = databasev1alpha1.ReasonAllReplicasReady
	}
	meta.SetStatusCondition(list, cond)
}

// setProgressingCondition: True while the StatefulSet is created, scaled or rolled out; the
// reason names the step (Creating until a new StatefulSet has its first pod), and a scale-up that waits for condemned claims (waits) names them.
// False with reason RolloutStuck while a member of the update revision is stuck (rollout), and
// with reason RolledBack while spec.rollout.autoRollback holds sts at an earlier revision.
func setProgressingCondition(list *[]metav1.Condition, dc *databasev1alpha1.DatabaseCluster, sts *cachecfg.StatefulSetView,
	waits []string, rollout rolloutObservation,
) {
	want := dc.DesiredReplicas()
	cond := metav1.Condition{
		Type:               databasev1alpha1.ConditionProgressing,
		Status:             metav1.ConditionTrue,
		ObservedGeneration: dc.Generation,
	}
	switch {
	case sts == nil:
		cond.Reason = databasev1alpha1.ReasonCreating
		cond.Message = "the StatefulSet does not exist yet"
	case newWithoutPods(sts, want, waits):
		cond.Reason = databasev1alpha1.ReasonCreating
		cond.Message = fmt.Sprintf("the new StatefulSet has no pod yet; %d to create", want)
	case sts.Status.ObservedGeneration < sts.Generation:
		cond.Reason = databasev1alpha1.ReasonRollingUpdate
		cond.Message = fmt.Sprintf("waiting for the StatefulSet controller to observe generation %d", sts.Generation)
	case progressingOfRollout(&cond, rollout):
	case progressingOfRollback(&cond, sts):
	case sts.Status.Replicas != want:
		cond.Reason = databasev1alpha1.ReasonScaling
		cond.Message = fmt.Sprintf("scaling from %d to %d pods", sts.Status.Replicas, want)
		if len(waits) > 0 {
			named := slices.DeleteFunc(slices.Clone(waits), func(name string) bool { return name == "" })
			cond.Message += withDetail("; waiting for the claims of removed members to be deleted first", ": ",
				strings.Join(named, ", "), "")
		}
	case sts.Status.UpdatedReplicas < want || sts.Status.CurrentRevision != sts.Status.UpdateRevision:
		cond.Reason = databasev1alpha1.ReasonRollingUpdate
		cond.Message = fmt.Sprintf("%d/%d pods run the current revision", sts.Status.UpdatedReplicas, want)
	default:
		cond.Status = metav1.ConditionFalse
		cond.Reason = databasev1alpha1.ReasonRolloutComplete
		cond.Message = fmt.Sprintf("all %d pods run the current revision", want)
	}
	meta.SetStatusCondition(list, cond)
}

// newWithoutPods reports whether sts is a StatefulSet as created (generation 1) that has no pod
// yet and is to have want. Whether or not the StatefulSet controller has observed it then, the
// cluster is at the same step, and one message for both saves every new cluster a status patch
// (the StatefulSet controller's first status update, before its first pod, changes nothing the
// cluster's status says).
func newWithoutPods(sts *cachecfg.StatefulSetView, want int32, waits []string) bool {
	return sts.Generation == 1 && sts.Status.Replicas == 0 && want > 0 && len(waits) == 0
}

// setDegradedCondition: True when the children could not be brought to the desired state, the
// StatefulSet controller cannot create a pod (e.g. a quota, an admission policy), or a pod has
// not been Ready for longer than the bound (e.g. an image that never starts).
func setDegradedCondition(list *[]metav1.Condition, dc *databasev1alpha1.DatabaseCluster, obs observation) {
	err, stuck := obs.err, obs.stuck
	cond := metav1.Condition{
		Type:               conditions.Degraded,
		Status:             metav1.ConditionFalse,
		Reason:             conditions.ReasonAsExpected,
		Message:            "every child is as specified",
		ObservedGeneration: dc.Generation,
	}
	if err != nil {
		cond.Status = metav1.ConditionTrue
		cond.Reason = databasev1alpha1.ReasonReconcileFailed
		switch {
		case child.IsConflict(err):
			cond.Reason = conditions.ReasonChildConflict
		case IsRestoreRefused(err):
			cond.Reason = databasev1alpha1.ReasonRestoreRefused
		case isInputMissing(err):
			cond.Reason = databasev1alpha1.ReasonInputMissing
		}
		cond.Message = errorMessage(err, "the children could not be brought to the spec, and the error does not say why")
	} else if primaries := obs.roles.published.primaries; len(primaries) > 1 {
		cond.Status = metav1.ConditionTrue
		cond.Reason = databasev1alpha1.ReasonSplitBrain
		cond.Message = fmt.Sprintf("%s each report themselves primary: no member is routed to for writes (%s) until one of them steps down",
			strings.Join(primaries, " and "), dc.ReadWriteServiceName())
	} else if d := obs.roles.plan.decision; reportedDegraded[d.Degraded] {
		cond.Status = metav1.ConditionTrue
		cond.Reason = d.Degraded
		cond.Message = d.Message
	} else if obs.createFailure != "" {
		cond.Status = metav1.ConditionTrue
		cond.Reason = databasev1alpha1.ReasonPodCreateFailed
		cond.Message = withDetail("the StatefulSet cannot create every pod", ": ", obs.createFailure, "")
	} else if stuck != nil {
		cond.Status = metav1.ConditionTrue
		cond.Reason = databasev1alpha1.ReasonPodNotReady
		cond.Message = stuck.message()
	}
	meta.SetStatusCondition(list, cond)
}

// reportedDegraded are the planner's reasons that make the cluster Degraded: what needs a
// person, or waits on one. PrimaryUnavailable is not among them: a primary being replaced (its
// pod deleted, a leader re-elected) is unavailable for seconds, and Available tells of it.
var reportedDegraded = map[string]bool{
	roles.DegradedSwitchoverTimedOut:         true,
	roles.DegradedFailoverWaitingForFence:    true,
	roles.DegradedNoFailoverCandidate:        true,
	roles.DegradedSwitchoverTargetNotHealthy: true,
}

// errorMessage is err as a condition message tells it: its first line (the API server may append
// a diff of the object on further lines; the first says what was refused and why), without the
// "terminal error: " prefix (the user needs only what was refused) and without the separator an
// empty part left at its end ("reading ConfigMap db-config: " of an error with no text), or
// otherwise when nothing is left.
func errorMessage(err error, otherwise string) string {
	first, _, _ := strings.Cut(err.Error(), "\n")
	if msg := strings.TrimRight(strings.TrimPrefix(first, "terminal error: "), messageSeparators); msg != "" {
		return msg
	}
	return otherwise
}

// setPausedCondition: True while spec.paused holds every child as it is.
func setPausedCondition(list *[]metav1.Condition, dc *databasev1alpha1.DatabaseCluster) {
	conditions.SetSwitch(list, dc.Generation, databasev1alpha1.ConditionPaused, dc.Spec.Paused,
		conditions.Text{Reason: databasev1alpha1.ReasonPausedByUser, Message: "spec.paused is true: no child is changed until it is false"},
		conditions.Text{Reason: databasev1alpha1.ReasonNotPaused, Message: "changes to the spec are applied"})
}

// stoppedBy says why a stopped cluster is stopped: spec.hibernated, or the Offline backup that
// holds it.
func stoppedBy(dc *databasev1alpha1.DatabaseCluster) string {
	if dc.Spec.Hibernated {
		return "spec.hibernated is true"
	}
	return "stopped for offline backup " + dc.OfflineBackup()
}

// setHibernatedCondition: True while the cluster is stopped, by spec.hibernated or for an
// Offline backup (the message names it); the reason says whether pods are still running.
func setHibernatedCondition(list *[]metav1.Condition, dc *databasev1alpha1.DatabaseCluster, sts *cachecfg.StatefulSetView) {
	cond := metav1.Condition{
		Type:               databasev1alpha1.ConditionHibernated,
		Status:             metav1.ConditionFalse,
		Reason:             databasev1alpha1.ReasonNotHibernated,
		Message:            fmt.Sprintf("the cluster runs spec.replicas (%d) pods", *dc.Spec.Replicas),
		ObservedGeneration: dc.Generation,
	}
	if !dc.Stopped() {
		meta.SetStatusCondition(list, cond)
		return
	}
	var running int32
	if sts != nil {
		running = sts.Status.Replicas
	}
	why := stoppedBy(dc)
	cond.Status = metav1.ConditionTrue
	cond.Reason = databasev1alpha1.ReasonHibernated
	cond.Message = why + ": no pod runs; claims, Services and status are kept"
	if running > 0 {
		cond.Reason = databasev1alpha1.ReasonHibernating
		cond.Message = fmt.Sprintf("%s: stopping %d pods; claims, Services and status are kept", why, running)
	}
	meta.SetStatusCondition(list, cond)
}

// setResizingCondition: True while the StatefulSet's claim template or the reported capacity
// of any bound claim is smaller than spec.storage.size, or than the claim's own request (a
// growth past spec.storage.size by spec.storage.autoGrow, so that one that never finishes
// feeds the same alert). Claims not bound yet have no capacity and are being provisioned, not
// resized.
func setResizingCondition(list *[]metav1.Condition, dc *databasev1alpha1.DatabaseCluster,
	sts *cachecfg.StatefulSetView, claims []corev1.PersistentVolumeClaim,
) {
	size, err := resource.ParseQuantity(dc.Spec.Storage.Size)
	if err != nil {
		return // Degraded already says why.
	}
	bound, grown := 0, 0
	for _, claim := range claims {
		capacity, ok := claim.Status.Capacity[corev1.ResourceStorage]
		if !ok {
			continue
		}
		bound++
		if capacity.Cmp(size) >= 0 {
			grown++
		}
	}
	// Not resizing, the message names no count: a claim being bound is not news of a resize,
	// and a status that changed with each binding would cost a write per member.
	cond := metav1.Condition{
		Type:               databasev1alpha1.ConditionResizing,
		Status:             metav1.ConditionFalse,
		Reason:             databasev1alpha1.ReasonStorageAsRequested,
		Message:            "every bound claim has at least " + size.String(),
		ObservedGeneration: dc.Generation,
	}
	templateSmall := false
	if sts != nil {
		template, ok := sts.ClaimSize(databasev1alpha1.DataVolumeName)
		templateSmall = ok && template.Cmp(size) < 0
	}
	if grown < bound || templateSmall {
		cond.Status = metav1.ConditionTrue
		cond.Reason = databasev1alpha1.ReasonStorageExpanding
		cond.Message = fmt.Sprintf("%d/%d bound claims have %s", grown, bound, size.String())
	} else if expanding := expandingClaim(claims); expanding != "" {
		cond.Status = metav1.ConditionTrue
		cond.Reason = databasev1alpha1.ReasonStorageExpanding
		cond.Message = expanding
	}
	meta.SetStatusCondition(list, cond)
}

// expandingClaim says which bound claim, if any, reports less capacity than it requests, e.g.
// "claim data-db-0 is being expanded from 10Gi to 12Gi".
func expandingClaim(claims []corev1.PersistentVolumeClaim) string {
	for _, claim := range claims {
		capacity, bound := claim.Status.Capacity[corev1.ResourceStorage]
		request := claim.Spec.Resources.Requests[corev1.ResourceStorage]
		if bound && capacity.Cmp(request) < 0 {
			return fmt.Sprintf("claim %s is being expanded from %s to %s", claim.Name, capacity.String(), request.String())
		}
	}
	return ""
}

// setMonitoringReadyCondition: present only while spec.monitoring is set. True when the
// PodMonitor is in place; False when the Prometheus Operator's CRD is missing (the message says
// to install it) or the PodMonitor could not be written. Kept as it was when the phase did not
// run.
func setMonitoringReadyCondition(conditions *[]metav1.Condition, dc *databasev1alpha1.DatabaseCluster, obs observation) {
	if dc.Spec.Monitoring == nil {
		meta.RemoveStatusCondition(conditions, databasev1alpha1.ConditionMonitoringReady)
		return
	}
	cond := metav1.Condition{
		Type:               databasev1alpha1.ConditionMonitoringReady,
		Status:             metav1.ConditionFalse,
		ObservedGeneration: dc.Generation,
	}
	switch obs.podMonitor {
	case podMonitorNotReached:
		return
	case podMonitorReady:
		cond.Status = metav1.ConditionTrue
		cond.Reason = databasev1alpha1.ReasonPodMonitorReady
		cond.Message = fmt.Sprintf("PodMonitor %s scrapes port %s (%d) at %s on every pod",
			dc.PodMonitorName(), databasev1alpha1.MetricsPortName, dc.Spec.Monitoring.Port, dc.MetricsPath())
	case podMonitorCRDMissing:
		cond.Reason = databasev1alpha1.ReasonPodMonitorCRDMissing
		cond.Message = fmt.Sprintf("the API server does not serve %s/%s PodMonitors: install the Prometheus Operator (its PodMonitor CRD) "+
			"and PodMonitor %s is created within %s; the pods name the metrics port %s (%d) meanwhile",
			podMonitorGroupKind.Group, monitoringv1.SchemeGroupVersion.Version, dc.PodMonitorName(), obs.monitoringRecheck,
			databasev1alpha1.MetricsPortName, dc.Spec.Monitoring.Port)
	case podMonitorFailed:
		cond.Reason = databasev1alpha1.ReasonPodMonitorFailed
		cond.Message = fmt.Sprintf("PodMonitor %s could not be written", dc.PodMonitorName())
		if obs.err != nil {
			cond.Message = errorMessage(obs.err, cond.Message)
		}
	}
	meta.SetStatusCondition(conditions, cond)
}

// setMemberLostCondition: True with reason MemberLost while a member is lost (the message names
// each, its node and why, and why the operator does not replace it), True with reason
// LostMemberReplaced in the pass that replaced one, False otherwise.
func setMemberLostCondition(conditions *[]metav1.Condition, dc *databasev1alpha1.DatabaseCluster, lost lostObservation) {
	cond := metav1.Condition{
		Type:               databasev1alpha1.ConditionMemberLost,
		Status:             metav1.ConditionFalse,
		Reason:             databasev1alpha1.ReasonNoMemberLost,
		Message:            "no member is lost with its node",
		ObservedGeneration: dc.Generation,
	}
	switch {
	case lost.replaced != nil:
		cond.Status = metav1.ConditionTrue
		cond.Reason = databasev1alpha1.ReasonLostMemberReplaced
		cond.Message = "deleted " + lost.replaced.did(lost.statefulSet)
	case len(lost.members) > 0:
		cond.Status = metav1.ConditionTrue
		cond.Reason = databasev1alpha1.ReasonMemberLost
		cond.Message = lostMessage(lost)
	}
	meta.SetStatusCondition(conditions, cond)
}

// setStorageAutoGrowCondition: present only while spec.storage.autoGrow is set. False when a
// member over the threshold cannot grow (AtMaxSize, ExpansionNotAllowed) or a member's usage
// cannot be read (UsageUnknown); True with Growing while a claim grows or waits to, and with
// BelowThreshold otherwise. Left as it is while the phases stopped before auto-grow.
func setStorageAutoGrowCondition(conditions *[]metav1.Condition, dc *databasev1alpha1.DatabaseCluster, obs autoGrowObservation) {
	if !dc.AutoGrows() {
		meta.RemoveStatusCondition(conditions, databasev1alpha1.ConditionStorageAutoGrow)
		return
	}
	if !obs.ran {
		return
	}
	threshold := dc.Spec.Storage.AutoGrow.AutoGrowThreshold()
	cond := metav1.Condition{Type: databasev1alpha1.ConditionStorageAutoGrow, Status: metav1.ConditionFalse, ObservedGeneration: dc.Generation}
	switch {
	case obs.noImage:
		cond.Reason = databasev1alpha1.ReasonUsageUnknown
		cond.Message = "the operator has no storage agent image (RELATED_IMAGE_STORAGE_AGENT is not set on the manager): usage cannot be measured"
	case len(obs.plan.atMax) > 0:
		cond.Reason, cond.Message = databasev1alpha1.ReasonAtMaxSize, strings.Join(obs.plan.atMax, "; ")
	case len(obs.plan.notAllowed) > 0:
		cond.Reason, cond.Message = databasev1alpha1.ReasonExpansionNotAllowed, strings.Join(obs.plan.notAllowed, "; ")
	case len(obs.unknown) > 0:
		cond.Reason = databasev1alpha1.ReasonUsageUnknown
		cond.Message = "cannot read the storage agent of " + strings.Join(obs.unknown, "; ")
	case obs.grew != nil:
		cond.Status, cond.Reason = metav1.ConditionTrue, databasev1alpha1.ReasonStorageGrowing
		cond.Message = strings.Join(append([]string{obs.grew.note(threshold)}, obs.plan.waiting...), "; ")
	case len(obs.plan.waiting) > 0:
		cond.Status, cond.Reason = metav1.ConditionTrue, databasev1alpha1.ReasonStorageGrowing
		cond.Message = strings.Join(obs.plan.waiting, "; ")
	case len(obs.members) == 0:
		// No member runs the agent yet (being created, rolled, or stopped): nothing to grow.
		cond.Status, cond.Reason = metav1.ConditionTrue, databasev1alpha1.ReasonBelowThreshold
		cond.Message = "no member runs the storage agent yet: nothing is measured"
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, databasev1alpha1.ReasonBelowThreshold
		cond.Message = fmt.Sprintf("%d measured members are below %d%% full", len(obs.members), threshold)
	}
	meta.SetStatusCondition(conditions, cond)
}

// rolesStatus is the primary and the members as the roles phase published them; as last known
// while the phases stopped before it; none without an engine.
func rolesStatus(dc *databasev1alpha1.DatabaseCluster, roles rolesObservation) (string, []databasev1alpha1.MemberStatus) {
	switch {
	case !dc.HasEngine():
		return "", nil
	case !roles.ran:
		return dc.Status.CurrentPrimary, dc.Status.Members
	case roles.plan.ran:
		return roles.plan.decision.Progress.CurrentPrimary, roles.published.members
	}
	return roles.published.primary, roles.published.members
}

// switchoverProgress is the switchover in flight and its target, as the planner decided them
// (recorded before the operator acts on them); as last known while the phases stopped before it.
func switchoverProgress(dc *databasev1alpha1.DatabaseCluster, roles rolesObservation) (*databasev1alpha1.SwitchoverStatus, string) {
	switch {
	case !dc.HasEngine():
		return nil, ""
	case !roles.plan.ran:
		return dc.Status.Switchover, dc.Status.TargetPrimary
	}
	s := switchoverStatus(roles.plan.decision.Progress.Switchover)
	if s == nil {
		return nil, ""
	}
	return s, s.To
}
