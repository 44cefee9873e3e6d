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
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"
)

// start is the fixed time of the tests' clock.
var start = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// testRecorder is a Recorder on a fake clientset with a clock the test moves.
type testRecorder struct {
	*Recorder
	clientset *fake.Clientset
	clock     time.Time
}

func newTestRecorder() *testRecorder {
	clientset := fake.NewClientset()
	t := &testRecorder{clientset: clientset, clock: start}
	t.Recorder = New(clientgoscheme.Scheme, clientset.EventsV1(), "database-operator")
	t.instance = "database-operator-host"
	t.now = func() time.Time { return t.clock }
	t.retryDelay = time.Millisecond
	return t
}

// send records what Eventf queued, as a sender would.
func (t *testRecorder) send(tb testing.TB) {
	tb.Helper()
	select {
	case ev := <-t.queue:
		t.record(context.Background(), ev)
	default:
		tb.Fatal("no event queued")
	}
}

// writes are the verbs and resources of the clientset's actions since the last call.
func (t *testRecorder) writes() []string {
	var out []string
	for _, a := range t.clientset.Actions() {
		out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
	}
	t.clientset.ClearActions()
	return out
}

// events are the Events the fake API server holds in namespace ns (read from its tracker, so
// not counted among the writes), without what the server adds: type meta and managedFields.
func (t *testRecorder) events(tb testing.TB) []eventsv1.Event {
	tb.Helper()
	gvr := eventsv1.SchemeGroupVersion.WithResource("events")
	obj, err := t.clientset.Tracker().List(gvr, eventsv1.SchemeGroupVersion.WithKind("Event"), "ns")
	if err != nil {
		tb.Fatal(err)
	}
	items := obj.(*eventsv1.EventList).Items
	for i := range items {
		items[i].TypeMeta, items[i].ManagedFields = metav1.TypeMeta{}, nil
	}
	return items
}

func cluster(resourceVersion string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", UID: "u-1", ResourceVersion: resourceVersion},
	}
}

// TestEventAsClientGoWritesIt: the Event carries exactly the fields client-go's recorder gives it.
func TestEventAsClientGoWritesIt(t *testing.T) {
	r := newTestRecorder()
	related := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db-0", UID: "p-1"}}
	r.AnnotatedEventf(cluster("7"), related, map[string]string{"a": "b"}, corev1.EventTypeWarning, "Stuck", "Reconcile", "member %d is %s", 0, "stuck")
	r.send(t)
	if got := r.writes(); !reflect.DeepEqual(got, []string{"create events"}) {
		t.Fatalf("writes = %v, want one create", got)
	}
	want := eventsv1.Event{
		// As client-go names it: the regarding object's name and the time in hex.
		ObjectMeta:          metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("db.%x", start.UnixNano()), Annotations: map[string]string{"a": "b"}},
		EventTime:           metav1.MicroTime{Time: start},
		ReportingController: "database-operator",
		ReportingInstance:   "database-operator-host",
		Action:              "Reconcile",
		Reason:              "Stuck",
		Regarding:           corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "db", UID: "u-1", ResourceVersion: "7"},
		Related:             &corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: "db-0", UID: "p-1"},
		Note:                "member 0 is stuck",
		Type:                corev1.EventTypeWarning,
	}
	got := r.events(t)
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("events =\n%+v\nwant\n%+v", got, want)
	}
}

// TestSeries: an isomorphic event within the window starts a series on the first Event (count
// 2); later ones are counted and written by the sweep, once; past the window the next one is
// a new Event.
func TestSeries(t *testing.T) {
	r := newTestRecorder()
	ctx := context.Background()
	occur := func() {
		r.Eventf(cluster("7"), nil, corev1.EventTypeNormal, "Created", "Reconcile", "created")
		r.send(t)
	}
	occur()
	r.writes()
	r.clock = start.Add(time.Minute)
	occur()
	if got := r.writes(); !reflect.DeepEqual(got, []string{"patch events"}) {
		t.Fatalf("second occurrence: writes = %v, want one patch", got)
	}
	wantSeries := func(count int32, last time.Time) {
		t.Helper()
		got := r.events(t)
		if len(got) != 1 || got[0].Series == nil || got[0].Series.Count != count || !got[0].Series.LastObservedTime.Equal(&metav1.MicroTime{Time: last}) {
			t.Fatalf("events = %+v, want one with series count %d last observed %s", got, count, last)
		}
	}
	wantSeries(2, start.Add(time.Minute))
	r.clock = start.Add(2 * time.Minute)
	occur()
	occur()
	if got := r.writes(); got != nil {
		t.Fatalf("later occurrences: writes = %v, want none before the sweep", got)
	}
	r.sweep(ctx)
	wantSeries(4, start.Add(2*time.Minute))
	r.writes()
	r.sweep(ctx)
	if got := r.writes(); got != nil {
		t.Fatalf("sweep with nothing new: writes = %v, want none", got)
	}
	r.clock = start.Add(2*time.Minute + SeriesWindow + time.Second)
	r.sweep(ctx)
	if len(r.series) != 0 {
		t.Fatalf("series kept past the window: %d", len(r.series))
	}
	occur()
	if got := r.writes(); !reflect.DeepEqual(got, []string{"create events"}) || len(r.events(t)) != 2 {
		t.Fatalf("after the window: writes = %v, events %d; want a new Event", got, len(r.events(t)))
	}
}

// TestNotIsomorphic: another resourceVersion of the object, another reason or another type is
// another Event, as client-go keys them.
func TestNotIsomorphic(t *testing.T) {
	r := newTestRecorder()
	for _, ev := range []struct{ resourceVersion, eventType, reason string }{
		{"7", corev1.EventTypeNormal, "Created"},
		{"8", corev1.EventTypeNormal, "Created"},
		{"8", corev1.EventTypeNormal, "Available"},
		{"8", corev1.EventTypeWarning, "Available"},
	} {
		r.clock = r.clock.Add(time.Millisecond) // distinct names
		r.Eventf(cluster(ev.resourceVersion), nil, ev.eventType, ev.reason, "Reconcile", "created")
		r.send(t)
	}
	if got := r.writes(); len(got) != 4 || len(r.events(t)) != 4 {
		t.Fatalf("writes = %v, events %d; want 4 creates and 4 Events", got, len(r.events(t)))
	}
}

// TestSeriesOfAnExpiredEvent: when the API server no longer has the Event a series starts on,
// the Event is written again, with its series.
func TestSeriesOfAnExpiredEvent(t *testing.T) {
	r := newTestRecorder()
	r.Eventf(cluster("7"), nil, corev1.EventTypeNormal, "Created", "Reconcile", "created")
	r.send(t)
	first := r.events(t)[0]
	if err := r.clientset.EventsV1().Events("ns").Delete(context.Background(), first.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r.writes()
	r.Eventf(cluster("7"), nil, corev1.EventTypeNormal, "Created", "Reconcile", "created")
	r.send(t)
	if got := r.writes(); !reflect.DeepEqual(got, []string{"patch events", "create events"}) {
		t.Fatalf("writes = %v, want a patch refused as not found, then a create", got)
	}
	got := r.events(t)
	want := first.DeepCopy()
	want.Series = &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.MicroTime{Time: start}}
	if len(got) != 1 || !reflect.DeepEqual(got[0], *want) {
		t.Fatalf("events =\n%+v\nwant\n%+v", got, *want)
	}
}

// TestRetries: an API server that cannot be reached is tried again; one that refuses the event
// is not; an unknown event type or a full queue drops the event without blocking.
func TestRetries(t *testing.T) {
	r := newTestRecorder()
	failures := 2
	r.clientset.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		if failures > 0 {
			failures--
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil
	})
	r.Eventf(cluster("7"), nil, corev1.EventTypeNormal, "Created", "Reconcile", "created")
	r.send(t)
	if got := r.writes(); len(got) != 3 || len(r.events(t)) != 1 {
		t.Fatalf("unreachable twice: writes = %v, events %d; want 3 creates and the Event", got, len(r.events(t)))
	}

	r = newTestRecorder()
	r.clientset.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "events.k8s.io", Kind: "Event"}, "db.1", nil)
	})
	r.Eventf(cluster("7"), nil, corev1.EventTypeNormal, "Created", "Reconcile", "created")
	r.send(t)
	if got := r.writes(); len(got) != 1 {
		t.Fatalf("refused: writes = %v, want 1 create", got)
	}

	r.Eventf(cluster("7"), nil, "Fatal", "Created", "Reconcile", "created")
	if len(r.queue) != 0 {
		t.Fatal("an event of an unknown type was queued")
	}
	for range QueueSize + 1 {
		r.Eventf(cluster("7"), nil, corev1.EventTypeNormal, "Created", "Reconcile", "created")
	}
	if len(r.queue) != QueueSize {
		t.Fatalf("queued %d, want %d (the rest dropped)", len(r.queue), QueueSize)
	}
}

// TestStart: the senders write what is queued until the context ends, and Start returns then.
func TestStart(t *testing.T) {
	r := newTestRecorder()
	r.now = time.Now
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Start(ctx) }()
	for i := range 20 {
		r.Eventf(cluster(string(rune('a'+i))), nil, corev1.EventTypeNormal, "Created", "Reconcile", "created")
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(r.events(t)) < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 20 events written", len(r.events(t)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return after the context ended")
	}
	if r.NeedLeaderElection() {
		t.Fatal("the recorder waits for leadership")
	}
}

// TestSharedHashIsAnotherEvent: an event whose key shares the series map's hash with a recorded
// one, but not its check, is a new Event, never counted in the other's series.
func TestSharedHashIsAnotherEvent(t *testing.T) {
	r := newTestRecorder()
	r.Eventf(cluster("7"), nil, corev1.EventTypeNormal, "Created", "Reconcile", "created")
	ev := <-r.queue
	key, check := r.hashes(ev)
	r.series[key] = &series{check: check + 1, name: "other.1", count: 1, written: 1, last: r.clock}
	r.record(context.Background(), ev)
	if got := r.writes(); !reflect.DeepEqual(got, []string{"create events"}) {
		t.Fatalf("writes = %v, want one create", got)
	}
	if s := r.series[key]; s.check != check || s.name != ev.Name || s.count != 1 {
		t.Fatalf("series = %+v, want the new event's, count 1", s)
	}
}
