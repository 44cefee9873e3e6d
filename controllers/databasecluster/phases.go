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
	"strconv"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// reconcileSpecChildren keeps the children that are built from the spec alone in place: the
// headless and the client Service, the PodDisruptionBudget, and with an engine the Services
// NAME-rw and NAME-ro. They depend on nothing but the
// spec and not on each other, so they are written at once: a new cluster's first pass waits one
// API round trip for the three instead of three in a row. Each notes its changes in a record of
// its own; the records are merged in this fixed order, so the events read the same whatever
// finished first. Their errors are joined: one child's failure does not keep the others from
// being written.
func (r *Reconciler) reconcileSpecChildren(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, noted *changes) error {
	steps := []func(*changes) error{
		func(l *changes) error {
			return ensureChild(ctx, r, "Service", specs.BuildHeadlessService(dc), &corev1.Service{}, serviceSpec, l)
		},
		func(l *changes) error {
			return ensureChild(ctx, r, "Service", specs.BuildClientService(dc), &corev1.Service{}, serviceSpec, l)
		},
		func(l *changes) error { return r.reconcilePodDisruptionBudget(ctx, dc, l) },
	}
	for _, svc := range specs.BuildRoleServices(dc) {
		steps = append(steps, func(l *changes) error {
			return ensureChild(ctx, r, "Service", svc, &corev1.Service{}, serviceSpec, l)
		})
	}
	records := make([]changes, len(steps))
	errs := make([]error, len(steps))
	var wg sync.WaitGroup
	for i, step := range steps {
		wg.Go(func() { errs[i] = step(&records[i]) })
	}
	wg.Wait()
	for i := range records {
		noted.merge(&records[i])
	}
	return errors.Join(errs...)
}

// reconcilePodDisruptionBudget keeps the PodDisruptionBudget while it is wanted (enabled and more
// than one replica) and deletes it otherwise.
func (r *Reconciler) reconcilePodDisruptionBudget(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, noted *changes) error {
	if !dc.PDBEnabled() {
		return r.deletePodDisruptionBudget(ctx, dc, noted)
	}
	return ensureChild(ctx, r, "PodDisruptionBudget", specs.BuildPodDisruptionBudget(dc), &policyv1.PodDisruptionBudget{}, pdbSpec, noted)
}

// ensureChild keeps one child that is built from the spec alone (a Service, the
// PodDisruptionBudget) in place and notes what it did; childKind names it in the events.
func ensureChild[T client.Object](ctx context.Context, r *Reconciler, childKind string, desired, observed T,
	spec child.Spec[T], noted *changes,
) error {
	_, result, err := child.Ensure(ctx, r.Client, r.APIReader, desired, observed, spec)
	if err != nil {
		return terminalIfInvalid(err)
	}
	noted.ensured(result, childKind, desired.GetName())
	return nil
}

// deletePodDisruptionBudget deletes the PodDisruptionBudget of dc if it exists and dc controls it.
func (r *Reconciler) deletePodDisruptionBudget(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, noted *changes) error {
	return r.deleteChild(ctx, dc, "PodDisruptionBudget", dc.PodDisruptionBudgetName(), &policyv1.PodDisruptionBudget{}, noted)
}

// deleteChild deletes the child name of dc, read into obj, if it exists and dc controls it (a
// child no longer wanted: the PodDisruptionBudget, the PodMonitor); childKind names it in the
// events.
func (r *Reconciler) deleteChild(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, childKind, name string,
	obj client.Object, noted *changes,
) error {
	err := r.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: name}, obj)
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(obj, dc) {
		return nil
	}
	if err := r.Delete(ctx, obj, client.Preconditions{UID: ptr.To(obj.GetUID())}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting %s %s: %w", childKind, name, err)
	}
	noted.removed = append(noted.removed, childKind+" "+name)
	return nil
}

// reconcileStatefulSet keeps the StatefulSet in place and returns it as the server holds it,
// with the condemned claims a scale-up waits for (scaleUpTarget). The StatefulSet is built once
// from the spec and every resolved input (or, with a rollback, from the revision held: built
// again with it), and written as built. A spec the builder cannot turn into a StatefulSet is a
// terminal error: retrying cannot help until the user changes it, and the Degraded condition
// says why.
func (r *Reconciler) reconcileStatefulSet(ctx context.Context, dc *databasev1alpha1.DatabaseCluster,
	claims []corev1.PersistentVolumeClaim, checksum string, noted *changes,
) (*cachecfg.StatefulSetView, child.Result, []string, error) {
	in := specs.Inputs{InputsChecksum: checksum, AgentImage: r.AgentImage}
	replicas, waits, err := r.holdScaleUp(ctx, dc, claims)
	if err == nil && replicas == nil {
		replicas, err = r.holdMembers(ctx, dc)
	}
	if err != nil {
		return nil, "", nil, err
	}
	in.Replicas = replicas
	desired, err := specs.BuildStatefulSet(dc, in)
	if err != nil {
		return nil, "", nil, reconcile.TerminalError(err)
	}
	rollback, err := r.planRollback(ctx, dc, desired)
	if err != nil {
		return nil, "", nil, err
	}
	if rollback.input != nil {
		in.Rollback = rollback.input
		if desired, err = specs.BuildStatefulSet(dc, in); err != nil {
			return nil, "", nil, reconcile.TerminalError(err)
		}
	}
	live, result, err := r.writeStatefulSet(ctx, dc, desired, noted)
	if err != nil {
		return nil, "", nil, err
	}
	view := cachecfg.ViewStatefulSet(live)
	r.tellRollback(dc, view, rollback)
	return view, result, waits, nil
}

// writeStatefulSet writes desired and notes what the write changed. A StatefulSet being replaced
// for a new claim size is left alone until it is gone: Ensure never patches a child that is
// being deleted. The patch is made under the resourceVersion of the copy read: when another
// write came between (the cache lags), it is made once more from the API server's copy.
func (r *Reconciler) writeStatefulSet(ctx context.Context, dc *databasev1alpha1.DatabaseCluster,
	desired *appsv1.StatefulSet, noted *changes,
) (*appsv1.StatefulSet, child.Result, error) {
	// The observed StatefulSet before the patch tells which change this reconcile applied.
	before := &appsv1.StatefulSet{}
	reader := templateReader{Client: r.Client, uncached: r.APIReader, desired: desired}
	live, result, err := child.Ensure(ctx, reader, r.APIReader, desired, before, statefulSetSpec)
	if apierrors.IsConflict(err) {
		before, reader.fresh = &appsv1.StatefulSet{}, true
		live, result, err = child.Ensure(ctx, reader, r.APIReader, desired, before, statefulSetSpec)
	}
	if err != nil {
		return nil, "", terminalIfInvalid(err)
	}
	if result != child.Patched {
		noted.statefulSet(dc, result, before, desired, specs.Drift{})
		return live, result, nil
	}
	// What the patch changed, for the events: compared only when there was a patch.
	noted.statefulSet(dc, result, before, desired, specs.DiffStatefulSet(desired, before))
	if err := r.recordTemplateGeneration(ctx, live); err != nil {
		return nil, "", err
	}
	return live, result, nil
}

// recordTemplateGeneration corrects the record of the template's generation after a patch that
// the API server found changed nothing of the spec (the generation stayed where it was, while
// specs.MergeStatefulSet recorded the next one): the template is then the one the patch sent,
// at live's generation. Without it, the next pass would read and patch the StatefulSet again.
func (r *Reconciler) recordTemplateGeneration(ctx context.Context, live *appsv1.StatefulSet) error {
	if specs.Recorded(live) {
		return nil
	}
	base := live.DeepCopy()
	live.Annotations[specs.TemplateGenerationAnnotation] = strconv.FormatInt(live.Generation, 10)
	if err := r.Patch(ctx, live, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("recording the template generation of StatefulSet %s: %w", live.Name, err)
	}
	return nil
}

// holdScaleUp is the replicas a scale-up is held at while dc's claims include a condemned one
// (nil: the spec's), and the claims it waits for; the StatefulSet is read (from the cache) only
// then.
func (r *Reconciler) holdScaleUp(ctx context.Context, dc *databasev1alpha1.DatabaseCluster,
	claims []corev1.PersistentVolumeClaim,
) (*int32, []string, error) {
	want := dc.DesiredReplicas()
	if _, waits := scaleUpTarget(dc, claims, 0, want); len(waits) == 0 {
		return nil, nil, nil
	}
	live, err := r.cachedStatefulSet(ctx, dc)
	if err != nil || live == nil {
		return nil, nil, err
	}
	target, waits := scaleUpTarget(dc, claims, ptr.Deref(live.Spec.Replicas, 0), want)
	return ptr.To(target), waits, nil
}

// terminalIfInvalid marks the API server's Invalid answer to a StatefulSet, Service or PDB write
// as terminal: those children are built from the spec alone, so the same spec is refused again
// and retrying would only repeat the write. Degraded says why; the next change of the spec (a new
// generation) is reconciled as usual. Claims are not built from the spec alone (an expansion may
// pass once the StorageClass allows it), so their errors stay retryable.
func terminalIfInvalid(err error) error {
	if apierrors.IsInvalid(err) {
		return reconcile.TerminalError(err)
	}
	return err
}
