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

// Package scheme builds the one runtime.Scheme of the operator: the built-in kinds of client-go,
// CustomResourceDefinitions, and every kind of the operator's API groups. The manager, the
// envtest harness and the test commands use it, so that all know the same kinds.
package scheme

import (
	"fmt"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
)

// New returns a new scheme with the built-in kinds, CustomResourceDefinitions, the kinds of
// database/v1alpha1, echo/v1alpha1 and voting/v1alpha1, and the CSI snapshot kinds
// (snapshot.storage.k8s.io/v1) that DatabaseBackups create.
func New() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	builder := runtime.NewSchemeBuilder(
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		databasev1alpha1.AddToScheme,
		echov1alpha1.AddToScheme,
		votingv1alpha1.AddToScheme,
		snapshotv1.AddToScheme,
		monitoringv1.AddToScheme,
	)
	if err := builder.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("registering the kinds of the scheme: %w", err)
	}
	return s, nil
}

// Must is New for callers that cannot go on without a scheme: registering these kinds fails
// only on a programming error (two types under one kind), so it panics.
func Must() *runtime.Scheme {
	s, err := New()
	if err != nil {
		panic(err)
	}
	return s
}
