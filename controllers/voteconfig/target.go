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

package voteconfig

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
)

// targetState is what a reconcile found of spec.targetDeployment.
type targetState int

const (
	// targetUnknown: the Deployment could not be read; the TargetFound condition stays as it was.
	targetUnknown targetState = iota
	// targetNone: spec.targetDeployment is empty.
	targetNone
	// targetFound: the Deployment exists.
	targetFound
	// targetMissing: no Deployment has that name in the namespace.
	targetMissing
)

// reconcileTarget sets the config-hash annotation on the pod template of the target Deployment
// when it differs from hash, so that the Deployment rolls its pods onto the new options.
// Deployments are not in the operator's cache (only their metadata is, to trigger reconciles):
// the Deployment is read from the API server, once per reconcile of a VoteConfig that names one.
func (r *Reconciler) reconcileTarget(ctx context.Context, vc *votingv1alpha1.VoteConfig, hash string) (targetState, error) {
	if vc.Spec.TargetDeployment == "" {
		return targetNone, nil
	}
	dep, err := r.readTarget(ctx, vc)
	if err != nil || dep == nil {
		return stateOfRead(err), err
	}
	if dep.Spec.Template.Annotations[votingv1alpha1.ConfigHashAnnotation] == hash {
		return targetFound, nil
	}
	patched := dep.DeepCopy()
	if patched.Spec.Template.Annotations == nil {
		patched.Spec.Template.Annotations = map[string]string{}
	}
	patched.Spec.Template.Annotations[votingv1alpha1.ConfigHashAnnotation] = hash
	if err := r.Patch(ctx, patched, client.MergeFrom(dep)); err != nil {
		if apierrors.IsNotFound(err) {
			return targetMissing, nil
		}
		return targetFound, fmt.Errorf("annotating Deployment %s: %w", dep.Name, err)
	}
	r.Recorder.Eventf(vc, patched, corev1.EventTypeNormal, EventRolloutTriggered, "Update",
		"Set %s=%s on the pod template of Deployment %s", votingv1alpha1.ConfigHashAnnotation, hash, dep.Name)
	return targetFound, nil
}

// readTarget reads the target Deployment of vc from the API server; nil when it does not exist.
func (r *Reconciler) readTarget(ctx context.Context, vc *votingv1alpha1.VoteConfig) (*appsv1.Deployment, error) {
	dep := &appsv1.Deployment{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: vc.Namespace, Name: vc.Spec.TargetDeployment}, dep)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Deployment %s: %w", vc.Spec.TargetDeployment, err)
	}
	return dep, nil
}

// stateOfRead is the target state after a read that found no Deployment.
func stateOfRead(err error) targetState {
	if err != nil {
		return targetUnknown
	}
	return targetMissing
}

// removeTargetAnnotation removes the config-hash annotation from the target Deployment, if both
// exist. A Deployment that is gone, or goes while this runs, has nothing left to clean.
func (r *Reconciler) removeTargetAnnotation(ctx context.Context, vc *votingv1alpha1.VoteConfig) error {
	if vc.Spec.TargetDeployment == "" {
		return nil
	}
	dep, err := r.readTarget(ctx, vc)
	if err != nil || dep == nil {
		return err
	}
	if _, ok := dep.Spec.Template.Annotations[votingv1alpha1.ConfigHashAnnotation]; !ok {
		return nil
	}
	patched := dep.DeepCopy()
	delete(patched.Spec.Template.Annotations, votingv1alpha1.ConfigHashAnnotation)
	if err := r.Patch(ctx, patched, client.MergeFrom(dep)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing %s from Deployment %s: %w", votingv1alpha1.ConfigHashAnnotation, dep.Name, err)
	}
	return nil
}
