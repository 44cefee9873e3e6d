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

// Package operator holds what main.go gives every controller of the operator. It is not internal
// so that main.go can build it; controllers/internal/skeleton holds the reconcile they share.
package operator

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// EventSource is the name the operator records its events under.
const EventSource = "database-operator"

// Deps are what every Reconciler is given, embedded in it: the manager's cached client, a reader
// of the API server itself (for what the cache does not hold, or not yet), the event recorder,
// and how many resources of the kind are reconciled at once.
type Deps struct {
	client.Client
	// APIReader reads from the API server directly; what each kind reads with it is said at its
	// Reconciler.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	// MaxConcurrentReconciles is how many resources of the kind are reconciled at once.
	MaxConcurrentReconciles int
}

// DepsFrom returns the Deps of a controller of mgr that reconciles workers resources at once.
func DepsFrom(mgr ctrl.Manager, workers int) Deps {
	return Deps{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Recorder:                mgr.GetEventRecorder(EventSource),
		MaxConcurrentReconciles: workers,
	}
}
