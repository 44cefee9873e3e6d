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

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestRetryLimiter(t *testing.T) {
	limiter := RetryLimiter()
	failing := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "db"}}
	other := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "other"}}
	want := []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}
	for i, w := range want {
		if got := limiter.When(failing); got != w {
			t.Fatalf("failure %d: retry after %s, want %s", i+1, got, w)
		}
	}
	// The outage of the fault tier made ~20 failures in a row; the default limiter then waits
	// 1,000 s. However many failures, the wait stays at MaxRetryDelay.
	for range 100 {
		limiter.When(failing)
	}
	if got := limiter.When(failing); got != MaxRetryDelay {
		t.Fatalf("after 105 failures: retry after %s, want %s", got, MaxRetryDelay)
	}
	if got := limiter.When(other); got != FirstRetryDelay {
		t.Fatalf("another resource's first failure: retry after %s, want %s", got, FirstRetryDelay)
	}
	limiter.Forget(failing)
	if got := limiter.When(failing); got != FirstRetryDelay {
		t.Fatalf("after Forget (a success): retry after %s, want %s", got, FirstRetryDelay)
	}
}
