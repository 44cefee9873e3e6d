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

package child

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// createWindow is how long a client of ReadsOwnCreates remembers an object it created. The cache
// sees a new child within milliseconds, a few seconds under load; a child still unseen after that
// is created again (and AlreadyExists read back, see Ensure).
const createWindow = 5 * time.Second

// ReadsOwnCreates returns cached, a client that reads from the manager's cache, remembering what
// it creates: a Get that the cache answers NotFound, of an object this client created within
// createWindow, is read with uncached instead. The reconcile that follows a create at once
// (triggered by another child's event) often runs before the child's own watch event; without
// this, Ensure would create the child again and read back AlreadyExists. The manager owns one
// (operator.NewReconcilerBase), shared by its controllers: keys name the type and the object.
func ReadsOwnCreates(cached client.Client, uncached client.Reader) client.Client {
	return &createsReader{Client: cached, uncached: uncached}
}

// createsReader is the client of ReadsOwnCreates.
type createsReader struct {
	client.Client
	uncached client.Reader
	created  recentCreates
}

// Create creates obj and, unless it was a dry run, remembers it.
func (c *createsReader) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.Client.Create(ctx, obj, opts...); err != nil {
		return err
	}
	if len((&client.CreateOptions{}).ApplyOptions(opts).DryRun) == 0 {
		c.created.add(createKey(obj, client.ObjectKeyFromObject(obj)), time.Now())
	}
	return nil
}

// Get reads obj from the cache, or from the API server when the cache has not yet seen the object
// this client created.
func (c *createsReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.Client.Get(ctx, key, obj, opts...)
	if apierrors.IsNotFound(err) && c.created.recent(createKey(obj, key), time.Now()) {
		return c.uncached.Get(ctx, key, obj, opts...)
	}
	return err
}

// recentCreates are the objects created within createWindow, by createKey.
type recentCreates struct {
	mu    sync.Mutex
	m     map[string]time.Time
	swept time.Time // when add last dropped the old entries
}

// createKey names the object key of obj's type.
func createKey(obj client.Object, key client.ObjectKey) string {
	return fmt.Sprintf("%T %s", obj, key)
}

// add remembers a create; once per createWindow it forgets those older than that.
func (r *recentCreates) add(key string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]time.Time{}
	}
	if now.Sub(r.swept) > createWindow {
		for k, at := range r.m {
			if now.Sub(at) > createWindow {
				delete(r.m, k)
			}
		}
		r.swept = now
	}
	r.m[key] = now
}

// recent tells whether key was created within createWindow.
func (r *recentCreates) recent(key string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.m[key]
	return ok && now.Sub(at) <= createWindow
}
