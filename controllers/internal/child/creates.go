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
	"fmt"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// createWindow is how long Ensure remembers a child it created. The cache sees a new child
// within milliseconds, a few seconds under load; a child still unseen after that is created
// again (and AlreadyExists read back), as before.
const createWindow = 5 * time.Second

// recentCreates are the children this process created within createWindow, by createKey.
type recentCreates struct {
	mu    sync.Mutex
	m     map[string]time.Time
	swept time.Time // when add last dropped the old entries
}

// creates is shared by every controller of the process: keys name the type and the object.
var creates recentCreates

func createKey(obj client.Object) string {
	return fmt.Sprintf("%T %s", obj, client.ObjectKeyFromObject(obj))
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
