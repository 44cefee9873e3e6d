//go:build linux && node

package nodee2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// A writer is a client of an etcd cluster that writes while the specs change the cluster, to
// tell what a client saw: every write is the key writer/<run>/<n> with the value n, n counting
// up from 0, sent through the client Service (as an application reaches the cluster) one at a
// time, with writeTimeout each. A write that fails is not retried: the next write takes the next
// n, so that a write that timed out but was applied anyway never stands for an acknowledged one.
// The longest time between two acknowledged writes is how long the cluster took no write.
const (
	// writeTimeout bounds one write: a write still unanswered then counts as failed.
	writeTimeout = 2 * time.Second
	// writeEvery is the least time from one write's start to the next: the resolution of the
	// longest gap, at about 20 writes a second, light enough for a loaded 2-core node.
	writeEvery = 50 * time.Millisecond
	// writerPrefix is the prefix of every writer's keys.
	writerPrefix = "writer/"
)

// writer writes to an etcd cluster from its own goroutine until stopped.
type writer struct {
	db   *etcdClient
	run  string
	done chan struct{}
	wg   sync.WaitGroup

	mu    sync.Mutex
	tally writeTally
}

// writeTally is what a writer saw.
type writeTally struct {
	// Run names the writer's keys: writer/<Run>/<n>.
	Run string
	// Acknowledged are the n of the writes etcd acknowledged, in order.
	Acknowledged []int
	// Failed counts the writes that failed or timed out; Errors holds the first few of them.
	Failed int
	Errors []string
	// LongestGap is the longest time between two acknowledged writes (from the start, or to
	// the stop, when no write was acknowledged before or after it), and GapFrom when it began,
	// since the writer started.
	LongestGap, GapFrom time.Duration
	// Duration is how long the writer ran.
	Duration time.Duration
}

// start runs the writer's goroutine: write(n) for n = 0, 1, ..., one at a time, at most one
// every writeEvery, each tallied, until the writer is stopped or ctx is done; what names an n in
// the errors kept ("key", "id"); finally, when set, runs as the goroutine ends.
func (w *writer) start(ctx context.Context, what string, write func(n int) error, finally func()) {
	began := time.Now()
	w.wg.Go(func() {
		defer GinkgoRecover()
		if finally != nil {
			defer finally()
		}
		last := began
		for n := 0; ; n++ {
			start := time.Now()
			err := write(n)
			w.mu.Lock()
			if err == nil {
				w.tally.Acknowledged = append(w.tally.Acknowledged, n)
				w.gap(last, time.Now(), began)
				last = time.Now()
			} else {
				w.tally.Failed++
				if len(w.tally.Errors) < maxWriteErrors {
					w.tally.Errors = append(w.tally.Errors, fmt.Sprintf("+%s %s %d: %v", time.Since(began).Round(time.Millisecond), what, n, err))
				}
			}
			w.mu.Unlock()
			select {
			case <-w.done:
				w.mu.Lock()
				w.gap(last, time.Now(), began)
				w.tally.Duration = time.Since(began)
				w.mu.Unlock()
				return
			case <-ctx.Done():
				return
			case <-time.After(writeEvery - time.Since(start)):
			}
		}
	})
}

// maxWriteErrors is how many failed writes' errors a tally keeps.
const maxWriteErrors = 5

// startWriter starts writing to db's cluster through its client Service, under the keys of run.
func startWriter(ctx context.Context, db *etcdClient, run string) *writer {
	GinkgoHelper()
	w := &writer{db: db, run: run, done: make(chan struct{}), tally: writeTally{Run: run}}
	// The client Service's address and name, read once: the writer makes no API call.
	service := db.targets(ctx)[0]
	w.start(ctx, "key", func(n int) error { return w.write(ctx, service, n) }, nil)
	return w
}

// write puts key n once, to target, within writeTimeout.
func (w *writer) write(ctx context.Context, target etcdTarget, n int) error {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	data, err := json.Marshal(map[string]string{"key": b64(w.key(n)), "value": b64(strconv.Itoa(n))})
	if err != nil {
		return err
	}
	var out map[string]any
	return w.db.try(ctx, target, "/v3/kv/put", data, &out)
}

// key is the key of write n.
func (w *writer) key(n int) string { return fmt.Sprintf("%s%s/%07d", writerPrefix, w.run, n) }

// gap records the time from one acknowledged write to the next; w.mu is held.
func (w *writer) gap(from, to, began time.Time) {
	if d := to.Sub(from); d > w.tally.LongestGap {
		w.tally.LongestGap, w.tally.GapFrom = d, from.Sub(began)
	}
}

// stop ends the writes (the one in flight completes) and returns the tally.
func (w *writer) stop() writeTally {
	close(w.done)
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	GinkgoWriter.Printf("Writer %s: %d writes acknowledged, %d failed in %s; the longest gap %s from +%s; errors %q\n",
		w.run, len(w.tally.Acknowledged), w.tally.Failed, w.tally.Duration.Round(time.Millisecond),
		w.tally.LongestGap.Round(time.Millisecond), w.tally.GapFrom.Round(time.Millisecond), w.tally.Errors)
	return w.tally
}

// lost reads the keys of a stopped writer back (one linearizable range read) and returns the
// acknowledged writes that the cluster does not hold with their value: each must be there.
func (w *writer) lost(ctx context.Context) []string {
	GinkgoHelper()
	w.mu.Lock()
	t := w.tally
	w.mu.Unlock()
	prefix := writerPrefix + t.Run + "/"
	var out struct {
		Kvs []struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"kvs"`
	}
	Eventually(func(g Gomega) {
		g.Expect(w.db.call(ctx, "/v3/kv/range", map[string]any{"key": b64(prefix), "range_end": b64(prefixEnd(prefix))}, &out)).To(Succeed())
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	held := map[string]string{}
	for _, kv := range out.Kvs {
		k, err := base64.StdEncoding.DecodeString(kv.Key)
		Expect(err).NotTo(HaveOccurred())
		v, err := base64.StdEncoding.DecodeString(kv.Value)
		Expect(err).NotTo(HaveOccurred())
		held[string(k)] = string(v)
	}
	var lost []string
	for _, n := range t.Acknowledged {
		if v, ok := held[w.key(n)]; !ok || v != strconv.Itoa(n) {
			lost = append(lost, fmt.Sprintf("%s=%q (held: %t)", w.key(n), v, ok))
		}
	}
	GinkgoWriter.Printf("Writer %s: %d keys held, %d acknowledged, %d of them lost\n", t.Run, len(held), len(t.Acknowledged), len(lost))
	return lost
}
