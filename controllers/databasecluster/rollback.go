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
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

// While spec.rollout.autoRollback holds the StatefulSet at an earlier revision, its annotations
// specs.RolledBackFromAnnotation and specs.RolledBackToAnnotation are the memory of the rollback,
// on the object it changed: the status is computed from them, and a restarted operator holds the
// same revision. Once the spec asks for another template they are removed.

// EventRolledBack tells that the operator returned the StatefulSet to its previous revision.
const EventRolledBack = databasev1alpha1.ReasonRolledBack

// rollbackStep is what phase 5 does about a rollback, given what it observed.
type rollbackStep int

const (
	// applySpec: write the spec's template, as without autoRollback.
	applySpec rollbackStep = iota
	// rollBack: the rollout of the spec's template is stuck; return to the current revision.
	rollBack
	// holdRollback: rolled back before for this very template; keep the StatefulSet's template.
	holdRollback
	// releaseRollback: rolled back before, but the spec asks for another template (or no
	// rollback any more): write it, and clear the annotations.
	releaseRollback
)

// decideRollback chooses the step for live, the StatefulSet as the cache has it, given the hash
// of the template the spec asks for (desiredHash) and the stuck member of live's update
// revision (nil when none). It rolls back only when
//   - autoRollback is set and live was not rolled back before for this template (once per
//     template: no loop when the old revision gets stuck too),
//   - the StatefulSet controller has observed live's generation and is rolling from
//     CurrentRevision (the last revision every member reached) to another UpdateRevision,
//   - the stuck member is of that update revision, and the update revision is the spec's
//     template: live's template hash is desiredHash (a spec changed since is applied instead).
func decideRollback(autoRollback bool, live *cachecfg.StatefulSetView, desiredHash string, stuck *stuckMember) rollbackStep {
	if live == nil {
		return applySpec
	}
	if from := live.Annotations[specs.RolledBackFromAnnotation]; from != "" {
		if autoRollback && from == desiredHash {
			return holdRollback
		}
		return releaseRollback
	}
	status := live.Status
	if !autoRollback || stuck == nil || live.DeletionTimestamp != nil || status.ObservedGeneration < live.Generation ||
		status.CurrentRevision == "" || status.CurrentRevision == status.UpdateRevision ||
		stuck.revision != status.UpdateRevision || live.Annotations[specs.TemplateHashAnnotation] != desiredHash {
		return applySpec
	}
	return rollBack
}

// rollback is what phase 5 did or keeps about a rollback: the step, for rollBack the member
// that was stuck, and the builder's input (nil: the spec's template, without the annotations).
type rollback struct {
	step  rollbackStep
	stuck *stuckMember
	// to is the revision returned to (rollBack).
	to string
	// input is what the StatefulSet is built from for rollBack and holdRollback.
	input *specs.Rollback
}

// planRollback reads what decideRollback needs (the live StatefulSet and, when a rollback is
// possible, the pods) and says what the StatefulSet is built from: for rollBack the template of
// the current revision's ControllerRevision, for holdRollback live's template, for
// releaseRollback and applySpec the spec's (whose StatefulSet, spec, has no rollback
// annotation: the write removes them). Nothing is read beyond the cached StatefulSet unless
// autoRollback is set or live carries a rollback.
func (r *Reconciler) planRollback(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, spec *appsv1.StatefulSet) (rollback, error) {
	live, err := r.cachedStatefulSet(ctx, dc)
	if err != nil || live == nil {
		return rollback{}, err
	}
	if !dc.AutoRollback() && live.Annotations[specs.RolledBackFromAnnotation] == "" {
		return rollback{}, nil
	}
	var stuck *stuckMember
	if dc.AutoRollback() && live.Annotations[specs.RolledBackFromAnnotation] == "" {
		pods, err := r.listPods(ctx, dc)
		if err != nil {
			return rollback{}, err
		}
		stuck, _ = findStuckRollout(live, pods, r.clock().Now(), dc.ProgressDeadline())
	}
	specHash := spec.Annotations[specs.TemplateHashAnnotation]
	plan := rollback{step: decideRollback(dc.AutoRollback(), live, specHash, stuck), stuck: stuck}
	if plan.step == rollBack {
		// The cache may not show yet a rollback this operator has just written: decide again on
		// the StatefulSet as the API server has it, so that a rollback is made and told once.
		whole := &appsv1.StatefulSet{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(spec), whole); err != nil {
			return rollback{}, client.IgnoreNotFound(err)
		}
		live = cachecfg.ViewStatefulSet(whole)
		plan.step = decideRollback(dc.AutoRollback(), live, specHash, stuck)
	}
	switch plan.step {
	case rollBack:
		template, err := r.revisionTemplate(ctx, live, live.Status.CurrentRevision)
		if err != nil {
			return rollback{}, err
		}
		plan.to = live.Status.CurrentRevision
		plan.input = &specs.Rollback{Template: template, From: specHash, To: plan.to}
	case holdRollback:
		template, err := r.liveTemplate(ctx, live)
		if err != nil {
			return rollback{}, err
		}
		plan.input = &specs.Rollback{Template: template, TemplateHash: live.Annotations[specs.TemplateHashAnnotation],
			From: live.Annotations[specs.RolledBackFromAnnotation], To: live.Annotations[specs.RolledBackToAnnotation]}
	}
	return plan, nil
}

// liveTemplate is the pod template of sts, read from the API server: the cache holds none
// (cachecfg.StatefulSetView). That is one read a pass while a rollback is held, until the spec
// asks for another template.
func (r *Reconciler) liveTemplate(ctx context.Context, sts *cachecfg.StatefulSetView) (corev1.PodTemplateSpec, error) {
	whole := &appsv1.StatefulSet{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: sts.Namespace, Name: sts.Name}, whole); err != nil {
		return corev1.PodTemplateSpec{}, fmt.Errorf("reading the pod template StatefulSet %s was rolled back to: %w", sts.Name, err)
	}
	return whole.Spec.Template, nil
}

// revisionTemplate returns the pod template of sts's ControllerRevision named revision, read
// from the API server (ControllerRevisions are not cached: one read per rollback), and refuses
// one that sts does not control.
func (r *Reconciler) revisionTemplate(ctx context.Context, sts *cachecfg.StatefulSetView, revision string) (corev1.PodTemplateSpec, error) {
	rev := &appsv1.ControllerRevision{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: sts.Namespace, Name: revision}, rev); err != nil {
		return corev1.PodTemplateSpec{}, fmt.Errorf("reading revision %s to roll back to: %w", revision, err)
	}
	if !metav1.IsControlledBy(rev, sts) {
		return corev1.PodTemplateSpec{}, fmt.Errorf("revision %s is not StatefulSet %s's: not rolling back to it", revision, sts.Name)
	}
	return revisionPodTemplate(rev)
}

// revisionPodTemplate decodes the pod template a StatefulSet's ControllerRevision records: its
// data is the patch {"spec":{"template":{...}}} the StatefulSet controller applies to roll back.
func revisionPodTemplate(rev *appsv1.ControllerRevision) (corev1.PodTemplateSpec, error) {
	var patch struct {
		Spec struct {
			Template *corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(rev.Data.Raw, &patch); err != nil {
		return corev1.PodTemplateSpec{}, fmt.Errorf("revision %s: %w", rev.Name, err)
	}
	if patch.Spec.Template == nil {
		return corev1.PodTemplateSpec{}, fmt.Errorf("revision %s records no pod template", rev.Name)
	}
	return *patch.Spec.Template, nil
}

// tellRollback records, after phase 5 wrote the StatefulSet, the rollback it made.
func (r *Reconciler) tellRollback(dc *databasev1alpha1.DatabaseCluster, sts *cachecfg.StatefulSetView, plan rollback) {
	if plan.step != rollBack {
		return
	}
	r.Recorder.Eventf(dc, nil, corev1.EventTypeWarning, EventRolledBack, "RollBack",
		"Returned StatefulSet %s to revision %s, the last every member ran Ready: %s of revision %s; "+
			"the spec still asks for that template: change it to roll forward",
		sts.Name, plan.to, plan.stuck.message(), plan.stuck.revision)
}

// progressingOfRollback is the Progressing condition while sts is held at an earlier revision.
func progressingOfRollback(cond *metav1.Condition, sts *cachecfg.StatefulSetView) bool {
	to := sts.Annotations[specs.RolledBackToAnnotation]
	if sts.Annotations[specs.RolledBackFromAnnotation] == "" || to == "" {
		return false
	}
	cond.Status = metav1.ConditionFalse
	cond.Reason = databasev1alpha1.ReasonRolledBack
	cond.Message = fmt.Sprintf("spec.rollout.autoRollback returned StatefulSet %s to revision %s after the rollout of "+
		"the spec's template got stuck; change the spec to roll forward", sts.Name, to)
	return true
}
