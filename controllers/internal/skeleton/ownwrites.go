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

package skeleton

import (
	"slices"
	"sync"
	"time"
)

// The cache lags behind the operator's own writes. A reconcile that patched a resource (its
// finalizer, its status) is often followed at once by another, triggered by a child's event,
// that reads the resource from a cache which has not yet seen that patch. Its patches carry the
// resourceVersion read (patch.Status, patch.AddFinalizer), so they fail with a Conflict: a
// wasted write, a "Reconciler error" in the log and a retry, each a status patch sent again.
// So Reconcile remembers, per resource, the resourceVersions its own writes replaced; a reconcile that reads one of them from the cache waits for the cache
// (cacheCatchUp) instead of acting on it. Only a version the operator itself replaced counts
// as behind: any other change (the user's) is acted on at once. The memory of a resource ends
// as soon as the cache shows something else, and after ownWriteWindow at the latest, so a
// cache that never catches up delays a resource by that much, never for good.

// cacheCatchUp is how long a reconcile that found the cache behind waits before it tries again.
// The resource's own watch event would not bring it back: status and finalizer changes pass no
// predicate.
const cacheCatchUp = 200 * time.Millisecond

// ownWriteWindow bounds how long a replaced resourceVersion is remembered.
const ownWriteWindow = 10 * time.Second

// OwnWrites remembers, per resource, the resourceVersions the operator's writes replaced. The
// manager owns one (operator.ReconcilerBase) and gives it to every reconcile of its controllers: keys name
// the kind, so its controllers share it. The zero value is empty and ready.
type OwnWrites struct {
	mu sync.Mutex
	m  map[string]ownWrite
}

type ownWrite struct {
	replaced []string // versions the operator's writes replaced, oldest first
	latest   string   // the version its last write produced
	at       time.Time
}

// written records that a write of the resource key replaced version before with after.
// Writes in a row (the finalizer, then the status) add up; a write from a version the last one
// did not produce starts again.
func (w *OwnWrites) written(key, before, after string, now time.Time) {
	if before == "" || after == "" || before == after {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]ownWrite{}
	}
	e, ok := w.m[key]
	if !ok || e.latest != before || now.Sub(e.at) > ownWriteWindow {
		e = ownWrite{}
	}
	e.replaced = append(e.replaced, before)
	e.latest, e.at = after, now
	w.m[key] = e
}

// behind tells whether seen, the version of the resource key in the cache, is one the
// operator's own writes replaced (within ownWriteWindow). Otherwise the resource is forgotten.
func (w *OwnWrites) behind(key, seen string, now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.m[key]
	if !ok {
		return false
	}
	if now.Sub(e.at) <= ownWriteWindow && slices.Contains(e.replaced, seen) {
		return true
	}
	delete(w.m, key)
	return false
}

// forget drops what is remembered of the resource key (it is gone).
func (w *OwnWrites) forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, key)
}
