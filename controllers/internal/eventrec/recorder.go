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

// Package eventrec records the operator's events (events.k8s.io/v1) as client-go's events
// broadcaster does — the same Event, sent in the background, isomorphic events folded into a
// series, transport errors retried — without keeping a copy of every Event it sent.
//
// client-go's broadcaster (k8s.io/client-go/tools/events) keeps each Event it sent, twice
// copied, for 6 to 12 minutes to detect series, and starts two goroutines per Event: heap that
// grows with the number of clusters converging at once. Here an event sent once is kept as two
// hashes of its key, its name and two times, for SeriesWindow; only an event that occurs again
// keeps its latest occurrence, to write the series (BenchmarkSeriesMemory).
package eventrec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	eventsclient "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/tools/record/util"
	"k8s.io/client-go/tools/reference"
	ctrl "sigs.k8s.io/controller-runtime"
)

// The limits of client-go's events broadcaster, kept.
const (
	// QueueSize is how many events may wait to be sent; more are dropped (logged), so that
	// recording never blocks a reconcile.
	QueueSize = 1000
	// SeriesWindow is how long after its last occurrence an event still starts a series when
	// it occurs again.
	SeriesWindow = 6 * time.Minute
	// maxTries and retryDelay bound the attempts to write one event when the API server cannot
	// be reached.
	maxTries   = 12
	retryDelay = 10 * time.Second
)

// Senders is how many events are written at once.
const Senders = 8

// sweepEvery is how often the series are written and forgotten (sweep).
const sweepEvery = time.Minute

// Recorder is an events.EventRecorder (and AnnotatedEventRecorder) for one reporting
// controller. It is a manager Runnable: Start sends the queued events until the manager stops.
type Recorder struct {
	scheme     *runtime.Scheme
	client     eventsclient.EventsGetter
	controller string
	instance   string
	now        func() time.Time
	queue      chan *eventsv1.Event
	retryDelay time.Duration

	mu sync.Mutex
	// series holds the events sent within SeriesWindow by the hash of their key (keyOf) with
	// seeds[0]; seeds[1] makes the series' check.
	seeds  [2]maphash.Seed
	series map[uint64]*series
}

// seriesKey is what makes two events isomorphic, as client-go decides it (its reporting
// controller and instance are the Recorder's). It is hashed, not kept: its two references
// alone are 224 bytes.
type seriesKey struct {
	eventType, action, reason string
	regarding, related        corev1.ObjectReference
}

// series is what a Recorder keeps of an event it sent: enough to fold later occurrences into it,
// and, once it occurred again, that occurrence, to write the Event again if the API server no
// longer has it.
type series struct {
	// check is the hash of the key with the other seed: an event that shares only the map's
	// hash with this one (a chance of 1 in 2^64 per pair) is another event and replaces it,
	// never folded into it.
	check uint64
	// name and eventTime are the first occurrence's, which the Event carries.
	name      string
	eventTime metav1.MicroTime
	// count is how many times the event occurred; written is the count the API server was
	// last given (1: the Event was created without a series).
	count, written int32
	last           time.Time
	// latest is the last occurrence, under the first's name and event time; nil while count
	// is 1.
	latest *eventsv1.Event
}

// New returns a Recorder that writes Events through client with controller as the reporting
// controller and controller-hostname as the reporting instance, as client-go names them.
func New(scheme *runtime.Scheme, client eventsclient.EventsGetter, controller string) *Recorder {
	hostname, _ := os.Hostname()
	return &Recorder{
		scheme: scheme, client: client, controller: controller, instance: controller + "-" + hostname,
		now: time.Now, queue: make(chan *eventsv1.Event, QueueSize), retryDelay: retryDelay,
		seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, series: map[uint64]*series{},
	}
}

// Eventf records an event about regarding (and related, which may be nil).
func (r *Recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.AnnotatedEventf(regarding, related, nil, eventtype, reason, action, note, args...)
}

// AnnotatedEventf is Eventf with annotations on the Event.
func (r *Recorder) AnnotatedEventf(regarding, related runtime.Object, annotations map[string]string,
	eventtype, reason, action, note string, args ...any,
) {
	log := ctrl.Log.WithName("events")
	message := fmt.Sprintf(note, args...)
	ev, err := r.makeEvent(regarding, related, annotations, eventtype, reason, action, message)
	if err != nil {
		log.Error(err, "Not recording the event", "reason", reason, "message", message)
		return
	}
	select {
	case r.queue <- ev:
	default:
		log.Error(nil, "Too many events queued, dropping one", "reason", reason, "message", message)
	}
}

// makeEvent builds the Event as client-go's recorder does.
func (r *Recorder) makeEvent(regarding, related runtime.Object, annotations map[string]string,
	eventtype, reason, action, message string,
) (*eventsv1.Event, error) {
	if !util.ValidateEventType(eventtype) {
		return nil, fmt.Errorf("unsupported event type %q", eventtype)
	}
	refRegarding, err := reference.GetReference(r.scheme, regarding)
	if err != nil {
		return nil, fmt.Errorf("referring to the object: %w", err)
	}
	var refRelated *corev1.ObjectReference
	if related != nil {
		if refRelated, err = reference.GetReference(r.scheme, related); err != nil {
			refRelated = nil // as client-go: the event is still recorded, without it
		}
	}
	now := r.now()
	namespace := refRegarding.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:        util.GenerateEventName(refRegarding.Name, now.UnixNano()),
			Namespace:   namespace,
			Annotations: annotations,
		},
		EventTime:           metav1.MicroTime{Time: now},
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *refRegarding,
		Related:             refRelated,
		Note:                message,
		Type:                eventtype,
	}, nil
}

// NeedLeaderElection is false: a follower's events (its controllers warm up while it does
// not lead) are sent too.
func (r *Recorder) NeedLeaderElection() bool { return false }

// Start sends the queued events with Senders at once and writes the series every minute,
// until ctx ends.
func (r *Recorder) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for range Senders {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case ev := <-r.queue:
					r.record(ctx, ev)
				}
			}
		})
	}
	ticker := time.NewTicker(sweepEvery)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case <-ticker.C:
			r.sweep(ctx)
		}
	}
}

// keyOf is the series key of ev.
func keyOf(ev *eventsv1.Event) seriesKey {
	key := seriesKey{eventType: ev.Type, action: ev.Action, reason: ev.Reason, regarding: ev.Regarding}
	if ev.Related != nil {
		key.related = *ev.Related
	}
	return key
}

// hashes are the hashes of ev's key: the series map's, and the series' check.
func (r *Recorder) hashes(ev *eventsv1.Event) (key, check uint64) {
	k := keyOf(ev)
	return maphash.Comparable(r.seeds[0], k), maphash.Comparable(r.seeds[1], k)
}

// record writes ev: a new Event, or, when an isomorphic event occurred within SeriesWindow,
// the start of a series on that Event (count 2). Later occurrences are only counted here; sweep
// writes them.
func (r *Recorder) record(ctx context.Context, ev *eventsv1.Event) {
	s, starts := r.remember(ev)
	switch {
	case s == nil:
		r.write(ctx, func() error {
			_, err := r.client.Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil // the start of its series got there first (writeSeries)
			}
			return err
		})
	case starts:
		r.writeSeries(ctx, s)
	}
}

// remember folds ev into the series of an isomorphic event that occurred within SeriesWindow
// and returns that series, and whether ev starts it (it is the second occurrence); it returns
// nil, and keeps ev's series, when ev is new.
func (r *Recorder) remember(ev *eventsv1.Event) (*series, bool) {
	key, check := r.hashes(ev)
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.series[key]
	if !ok || s.check != check || r.now().Sub(s.last) > SeriesWindow {
		r.series[key] = &series{check: check, name: ev.Name, eventTime: ev.EventTime, count: 1, written: 1, last: r.now()}
		return nil, false
	}
	ev.Name, ev.EventTime = s.name, s.eventTime
	s.latest = ev
	s.count++
	s.last = r.now()
	return s, s.written == 1
}

// sweep writes the count of every series that grew since it was last written and forgets the
// events that did not occur within SeriesWindow.
func (r *Recorder) sweep(ctx context.Context) {
	var grown []*series
	r.mu.Lock()
	for key, s := range r.series {
		if s.count > s.written {
			grown = append(grown, s)
		}
		if r.now().Sub(s.last) > SeriesWindow {
			delete(r.series, key)
		}
	}
	r.mu.Unlock()
	for _, s := range grown {
		r.writeSeries(ctx, s)
	}
}

// writeSeries patches the series of s onto its Event, or creates the Event with it when the
// API server no longer has it (Events expire after an hour) from its latest occurrence: the
// first's name, event time and key, the latest's note and annotations.
func (r *Recorder) writeSeries(ctx context.Context, s *series) {
	r.mu.Lock()
	count, last := s.count, metav1.MicroTime{Time: s.last}
	s.written = count
	ev := *s.latest // never changed once kept: a shallow copy is the series' own
	r.mu.Unlock()
	ev.Series = &eventsv1.EventSeries{Count: count, LastObservedTime: last}
	patch, err := json.Marshal(map[string]any{"series": ev.Series})
	if err != nil {
		ctrl.Log.WithName("events").Error(err, "Not writing the event series", "event", ev.Name)
		return
	}
	r.write(ctx, func() error {
		_, err := r.client.Events(ev.Namespace).Patch(ctx, ev.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		if apierrors.IsNotFound(err) {
			_, err = r.client.Events(ev.Namespace).Create(ctx, &ev, metav1.CreateOptions{})
		}
		return err
	})
}

// write calls send until it succeeds, the API server refuses it (it would refuse it again), or
// maxTries attempts failed to reach it, as client-go's broadcaster does.
func (r *Recorder) write(ctx context.Context, send func() error) {
	for try := 1; ; try++ {
		err := send()
		if err == nil {
			return
		}
		var status apierrors.APIStatus
		if errors.As(err, &status) || try == maxTries {
			ctrl.Log.WithName("events").Error(err, "Not writing an event", "tries", try)
			return
		}
		jitter := time.Duration(rand.Int64N(int64(r.retryDelay)/4 + 1))
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.retryDelay + jitter):
		}
	}
}
