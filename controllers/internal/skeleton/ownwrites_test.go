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
	"testing"
	"time"
)

func TestOwnWrites(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	var w OwnWrites
	if w.behind("DC/ns/a", "1", t0) {
		t.Fatal("a resource never written is behind")
	}
	w.written("DC/ns/a", "1", "2", t0)                  // the finalizer
	w.written("DC/ns/a", "2", "3", t0.Add(time.Second)) // then the status
	w.written("DC/ns/b", "7", "7", t0)                  // no change: nothing to remember
	w.written("DC/ns/c", "", "9", t0)                   // no version read: nothing to remember
	for _, tc := range []struct {
		key, seen string
		at        time.Duration
		want      bool
	}{
		{"DC/ns/a", "1", 2 * time.Second, true}, // both writes missing from the cache
		{"DC/ns/a", "2", 2 * time.Second, true}, // the status write missing
		{"DC/ns/b", "7", 0, false},
		{"DC/ns/c", "5", 0, false},
	} {
		if got := w.behind(tc.key, tc.seen, t0.Add(tc.at)); got != tc.want {
			t.Errorf("behind(%s, %s) = %v, want %v", tc.key, tc.seen, got, tc.want)
		}
	}
	// The cache caught up: the resource is forgotten, and an old version read later (another
	// cluster's numbers, a restore) is not mistaken for a lag.
	if w.behind("DC/ns/a", "3", t0.Add(2*time.Second)) || w.behind("DC/ns/a", "1", t0.Add(2*time.Second)) {
		t.Fatal("the resource is still behind after the cache showed the last write")
	}
	// Someone else's change in between: acted on at once.
	w.written("DC/ns/a", "3", "4", t0)
	if w.behind("DC/ns/a", "5", t0) {
		t.Fatal("a version the operator did not replace is behind")
	}
	// A cache that never catches up delays the resource by ownWriteWindow at most.
	w.written("DC/ns/a", "5", "6", t0)
	if !w.behind("DC/ns/a", "5", t0.Add(ownWriteWindow)) || w.behind("DC/ns/a", "5", t0.Add(ownWriteWindow+time.Millisecond)) {
		t.Fatal("the replaced version is not remembered for exactly ownWriteWindow")
	}
	// A write from a version the last one did not produce starts a new chain.
	w.written("DC/ns/a", "6", "7", t0)
	w.written("DC/ns/a", "10", "11", t0)
	if !w.behind("DC/ns/a", "10", t0) || w.behind("DC/ns/a", "6", t0) {
		t.Fatal("a broken chain kept the versions before it")
	}
	w.written("DC/ns/a", "10", "11", t0)
	w.forget("DC/ns/a")
	if w.behind("DC/ns/a", "10", t0) {
		t.Fatal("a forgotten resource is behind")
	}
}
