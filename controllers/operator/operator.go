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

// Package operator is what main.go builds the operator from: the manager with the operator's
// runtime policy (NewManager: client, cache, metrics, leader election; SetGCPercent) and what
// every controller is given (ReconcilerBase). It is not internal so that main.go can use it,
// and it holds the policy so that main.go is flags and wiring only and the policy has unit tests;
// controllers/internal/skeleton holds the reconcile the controllers share.
package operator

import (
	"fmt"

	eventsclient "k8s.io/client-go/kubernetes/typed/events/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/seed1b407122/database-operator/controllers/internal/child"
	"github.com/seed1b407122/database-operator/controllers/internal/eventrec"
	"github.com/seed1b407122/database-operator/controllers/internal/skeleton"
)

// EventSource is the name the operator records its events under.
const EventSource = "database-operator"

// ReconcilerBase is what every Reconciler is given, embedded in it: the manager's cached
// client, a reader of the API server itself (for what the cache does not hold, or not yet), the
// event recorder, how many resources of the kind are reconciled at once, and the memory of the
// manager's own writes that its cache has not seen yet.
type ReconcilerBase struct {
	// Client reads from the manager's cache, except a child it created moments ago and the cache
	// does not show yet, which it reads from the API server (child.ReadsOwnCreates).
	client.Client
	// APIReader reads from the API server directly; what each kind reads with it is said at its
	// Reconciler.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	// MaxConcurrentReconciles is how many resources of the kind are reconciled at once.
	MaxConcurrentReconciles int
	// OwnWrites remembers the resourceVersions the reconciles' own writes replaced, so that a
	// reconcile that reads one of them from the cache waits for it (skeleton.Reconcile).
	OwnWrites *skeleton.OwnWrites
}

// NewReconcilerBase returns the ReconcilerBase of the controllers of mgr, each reconciling
// workers resources at once. Their events go through one recorder (eventrec), which it adds to
// mgr, and the memories of the cache's lag behind their own writes are one per call; call it
// once per manager.
func NewReconcilerBase(mgr ctrl.Manager, workers int) (ReconcilerBase, error) {
	// A client of its own, as controller-runtime's recorder has: events do not wait behind
	// the controllers' writes in the client's rate limiter.
	events, err := eventsclient.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return ReconcilerBase{}, fmt.Errorf("creating the events client: %w", err)
	}
	rec := eventrec.New(mgr.GetScheme(), events, EventSource)
	if err := mgr.Add(rec); err != nil {
		return ReconcilerBase{}, fmt.Errorf("adding the event recorder: %w", err)
	}
	return ReconcilerBase{
		Client:                  child.ReadsOwnCreates(mgr.GetClient(), mgr.GetAPIReader()),
		APIReader:               mgr.GetAPIReader(),
		Recorder:                rec,
		MaxConcurrentReconciles: workers,
		OwnWrites:               &skeleton.OwnWrites{},
	}, nil
}
