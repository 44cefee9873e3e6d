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

package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Condition types of a VoteConfig.
const (
	// ConditionReady is True when the ConfigMap holds the current options.
	ConditionReady = "Ready"
	// ConditionTargetFound is True when spec.targetDeployment names an existing Deployment.
	ConditionTargetFound = "TargetFound"
)

// Condition reasons of a VoteConfig.
const (
	ReasonConfigMapSynced    = "ConfigMapSynced"
	ReasonDeploymentFound    = "DeploymentFound"
	ReasonDeploymentNotFound = "DeploymentNotFound"
	ReasonNoTarget           = "NoTargetDeployment"
	// ReasonSyncFailed: the ConfigMap could not be written for a reason that may pass (retried).
	ReasonSyncFailed = "SyncFailed"
)

// Finalizer guards the cleanup of a VoteConfig's ConfigMap and target annotation.
const Finalizer = "voting.seed1b407122.io/finalizer"

// ConfigHashAnnotation is set on the target Deployment's pod template so the app rolls on change.
const ConfigHashAnnotation = "voting.seed1b407122.io/config-hash"

// GetConditions returns the conditions of the VoteConfig's status.
func (v *VoteConfig) GetConditions() []metav1.Condition { return v.Status.Conditions }
