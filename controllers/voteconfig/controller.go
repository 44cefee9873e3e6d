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

// Package voteconfig reconciles VoteConfigs: each keeps a ConfigMap with its options for a voting
// app, and rolls the app's Deployment when the options change.
package voteconfig

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
	"github.com/seed1b407122/database-operator/controllers/internal/opmetrics"
	"github.com/seed1b407122/database-operator/controllers/internal/patch"
)

// kind names VoteConfigs in owner references and in the operator's metrics.
const kind = "VoteConfig"

// targetDeploymentIndex indexes VoteConfigs by spec.targetDeployment, to find those a Deployment
// event concerns.
const targetDeploymentIndex = "spec.targetDeployment"

// Reconciler keeps the ConfigMap of each VoteConfig and the config-hash of its target Deployment.
type Reconciler struct {
	client.Client
	// APIReader reads from the API server directly: the target Deployments, which are not
	// cached, and children the cache cannot see.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	// MaxConcurrentReconciles is how many VoteConfigs are reconciled at once.
	MaxConcurrentReconciles int
}

// Deployments are listed and watched as metadata only (see SetupWithManager), read one by one and
// patched only in their pod template's config-hash annotation.
// +kubebuilder:rbac:groups=voting.seed1b407122.io,resources=voteconfigs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=voting.seed1b407122.io,resources=voteconfigs/status,verbs=patch
// +kubebuilder:rbac:groups=voting.seed1b407122.io,resources=voteconfigs/finalizers,verbs=update
// +kubebuilder:rbac:groups=core,resources=configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile keeps the ConfigMap of one VoteConfig and the annotation of its target Deployment,
// and writes the status it observed: get → deletion → finalizer → ConfigMap → target → status
// (once, only if changed).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	vc := &votingv1alpha1.VoteConfig{}
	if err := r.Get(ctx, req.NamespacedName, vc); err != nil {
		if apierrors.IsNotFound(err) {
			opmetrics.Forget(kind, req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !vc.DeletionTimestamp.IsZero() {
		opmetrics.Forget(kind, req.Namespace, req.Name)
		return ctrl.Result{}, r.reconcileDelete(ctx, vc)
	}
	if err := patch.AddFinalizer(ctx, r.Client, vc, votingv1alpha1.Finalizer); err != nil {
		return ctrl.Result{}, err
	}
	original := vc.DeepCopy()
	obs := r.reconcileChildren(ctx, vc)
	defer func() {
		status := computeStatus(vc, obs, metav1.Now())
		opmetrics.RecordConditions(kind, vc.Namespace, vc.Name, status.Conditions)
		err = errors.Join(err, r.patchStatus(ctx, original, status))
	}()
	return ctrl.Result{}, errors.Join(obs.configMapErr, obs.targetErr)
}

// reconcileChildren keeps the ConfigMap, then the annotation of the target Deployment, which
// carries the hash of the content the ConfigMap now holds.
func (r *Reconciler) reconcileChildren(ctx context.Context, vc *votingv1alpha1.VoteConfig) observation {
	desired, err := BuildConfigMap(vc)
	if err != nil {
		return observation{configMapErr: err}
	}
	_, result, err := child.Ensure(ctx, r.Client, r.APIReader, desired, &corev1.ConfigMap{}, configMapSpec)
	if err != nil {
		return observation{configMapErr: err}
	}
	r.recordConfigMap(vc, result)
	obs := observation{changed: result != child.Unchanged}
	obs.target, obs.targetErr = r.reconcileTarget(ctx, vc, ConfigHash(desired.Data))
	return obs
}

// patchStatus writes status, and only when it changed. It also emits the events of the
// condition transitions, so that each is told exactly once.
func (r *Reconciler) patchStatus(ctx context.Context, original *votingv1alpha1.VoteConfig, status votingv1alpha1.VoteConfigStatus) error {
	updated := original.DeepCopy()
	updated.Status = status
	if written, err := patch.Status(ctx, r.Client, original, updated); !written {
		return err
	}
	r.recordTransitions(original, updated)
	logf.FromContext(ctx).V(1).Info("Patched the status", "configMap", status.ConfigMapName)
	return nil
}

// SetupWithManager registers the controller, its watches and the index of VoteConfigs by target.
//
// Target Deployments belong to the user and carry none of the operator's labels, so the
// label-selected cache cannot hold them, and caching every Deployment of the cluster in full to
// follow a few would cost far more memory than the operator's own objects. Instead Deployments
// are watched as metadata only (name, labels, generation): enough to reconcile the VoteConfigs
// that name a Deployment when it is created, deleted or its spec changes (so a removed
// annotation is put back). The Deployment itself is read from the API server when needed.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	// The context only bounds the index registration, which does not block.
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &votingv1alpha1.VoteConfig{},
		targetDeploymentIndex, indexTargetDeployment); err != nil {
		return fmt.Errorf("indexing VoteConfigs by target Deployment: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&votingv1alpha1.VoteConfig{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// ConfigMaps have no generation: every change of one is a possible hand edit to revert.
		Owns(&corev1.ConfigMap{}).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(r.voteConfigsOf),
			builder.OnlyMetadata, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Named("voteconfig").
		Complete(r)
}

// indexTargetDeployment is the index function of targetDeploymentIndex.
func indexTargetDeployment(obj client.Object) []string {
	vc, ok := obj.(*votingv1alpha1.VoteConfig)
	if !ok || vc.Spec.TargetDeployment == "" {
		return nil
	}
	return []string{vc.Spec.TargetDeployment}
}

// voteConfigsOf maps a Deployment to the VoteConfigs of its namespace that target it.
func (r *Reconciler) voteConfigsOf(ctx context.Context, dep client.Object) []reconcile.Request {
	var list votingv1alpha1.VoteConfigList
	if err := r.List(ctx, &list, client.InNamespace(dep.GetNamespace()),
		client.MatchingFields{targetDeploymentIndex: dep.GetName()}); err != nil {
		// A map function cannot return an error; the next event of the Deployment retries.
		logf.FromContext(ctx).Error(err, "Listing the VoteConfigs of a Deployment failed", "deployment", klog.KObj(dep))
		return nil
	}
	requests := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return requests
}
