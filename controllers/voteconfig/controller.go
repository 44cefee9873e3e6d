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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
	"github.com/seed1b407122/database-operator/controllers/internal/skeleton"
	"github.com/seed1b407122/database-operator/controllers/operator"
)

// kind names VoteConfigs in owner references and in the operator's metrics.
const kind = "VoteConfig"

// targetDeploymentIndex indexes VoteConfigs by spec.targetDeployment, to find those a Deployment
// event concerns.
const targetDeploymentIndex = "spec.targetDeployment"

// Reconciler keeps the ConfigMap of each VoteConfig and the config-hash of its target Deployment.
// Its APIReader reads the target Deployments, which are not cached, and children the cache
// cannot see.
type Reconciler struct {
	operator.ReconcilerBase
}

// The skeleton finds a Kind's finalizer path by type assertion: this makes a misspelt method a
// compile error rather than a finalizer silently never run.
var _ skeleton.Finalizing[*votingv1alpha1.VoteConfig] = (*Reconciler)(nil)

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
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return skeleton.Reconcile(ctx, r.Client, r.OwnWrites, req, &votingv1alpha1.VoteConfig{}, r)
}

// Phases keeps the children of vc and sets its status to what they observed, at the time of
// this reconcile.
func (r *Reconciler) Phases(ctx context.Context, vc *votingv1alpha1.VoteConfig) (ctrl.Result, error) {
	obs := r.reconcileChildren(ctx, vc)
	vc.Status = computeStatus(vc, obs, metav1.Now())
	return ctrl.Result{}, errors.Join(obs.configMapErr, obs.targetErr)
}

// Finalizer guards the config-hash annotation on the target Deployment (see Finalize).
func (r *Reconciler) Finalizer() string { return votingv1alpha1.Finalizer }

// reconcileChildren keeps the ConfigMap, then the annotation of the target Deployment, which
// carries the hash of the content the ConfigMap now holds.
func (r *Reconciler) reconcileChildren(ctx context.Context, vc *votingv1alpha1.VoteConfig) observation {
	desired, err := BuildConfigMap(vc)
	if err != nil {
		return observation{configMapErr: err}
	}
	_, result, err := child.Ensure(ctx, r.Client, r.APIReader, desired, &corev1.ConfigMap{}, child.ConfigMapData)
	if err != nil {
		return observation{configMapErr: err}
	}
	r.recordConfigMap(vc, result)
	obs := observation{changed: result != child.Unchanged}
	obs.target, obs.targetErr = r.reconcileTarget(ctx, vc, ConfigHash(desired.Data))
	return obs
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
	return skeleton.NewController(mgr, "voteconfig", r.MaxConcurrentReconciles, &votingv1alpha1.VoteConfig{},
		predicate.GenerationChangedPredicate{}).
		// ConfigMaps have no generation: every change of one is a possible hand edit to revert.
		Watches(&corev1.ConfigMap{}, skeleton.OwnedBy(mgr, &votingv1alpha1.VoteConfig{})).
		Watches(&appsv1.Deployment{}, skeleton.Behind(handler.EnqueueRequestsFromMapFunc(r.voteConfigsOf)),
			builder.OnlyMetadata, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
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
