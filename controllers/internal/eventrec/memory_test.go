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

package eventrec

import (
	"fmt"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed1b407122/database-operator/controllers/internal/heapsize"
)

// BenchmarkSeriesMemory reports the heap a Recorder keeps, within SeriesWindow, for the events of
// 1,000 clusters: two each, as the scale benchmark's clusters record them (docs/benchmarks.md),
// each sent once. The events are garbage once sent: what is counted is what the Recorder keeps of
// them.
func BenchmarkSeriesMemory(b *testing.B) {
	const clusters = 1000
	var held float64
	for b.Loop() {
		r := newTestRecorder()
		before := heapsize.AfterGC()
		for _, ev := range benchEvents(b, r, clusters) {
			if s, _ := r.remember(ev); s != nil {
				b.Fatalf("event %s folded into a series", ev.Name)
			}
		}
		held = float64(heapsize.AfterGC() - before)
		runtime.KeepAlive(r)
	}
	b.ReportMetric(held, "series-heap-bytes/1000-clusters")
}

// benchEvents are the Created and Available events of n clusters, as Eventf makes them.
func benchEvents(b *testing.B, r *testRecorder, n int) []*eventsv1.Event {
	var events []*eventsv1.Event
	for i := range n {
		obj := &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("bench-%02d", i%20), Name: fmt.Sprintf("db-%05d", i),
				UID: types.UID(fmt.Sprintf("0b0e3f2a-5b1c-4f5e-9d3c-%012d", i)), ResourceVersion: fmt.Sprint(1000 + i)},
		}
		for _, reason := range []string{"Created", "Available"} {
			ev, err := r.makeEvent(obj, nil, nil, corev1.EventTypeNormal, reason, "Create",
				fmt.Sprintf("Created Service %s-headless, Service %s, StatefulSet %s", obj.Name, obj.Name, obj.Name))
			if err != nil {
				b.Fatal(err)
			}
			events = append(events, ev)
		}
	}
	return events
}
