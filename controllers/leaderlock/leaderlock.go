// Package leaderlock is the operator's leader-election lock: client-go's Lease lock, in whose Get
// a follower waits on a watch of the Lease, instead of between polls, while the replica it has
// seen leading keeps renewing.
//
// client-go's elector asks the lock for the Lease once per retry period (jittered), so a
// follower takes up to a retry period to take over a Lease that its leader released on shutdown,
// and up to a retry period more than the lease duration after a crash. With this lock a follower's Get
// returns as soon as the Lease changes hands or is released, or once the watch has seen no
// renewal for a lease duration: then it returns the Lease as released (no holder), which is what
// it is, and the elector takes it over at once. (The elector judges expiry by the time it called
// Get, so a Get that waited cannot report an expired holder as such.) Every write is still the
// elector's own Create or Update, on the Lease as last read, so the API server's optimistic
// concurrency keeps the election safe whatever Get returns: a holder that renewed meanwhile makes
// that Update fail. A follower also reads the Lease once per hand-off instead of once per retry
// period.
package leaderlock

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Lock wraps a Lease lock (rl.Interface; its Get leaves the Lease it read for the next Update).
type Lock struct {
	rl.Interface
	// Leases watches the Lease; its client must not time out requests (a watch is long).
	Leases    coordinationv1client.LeasesGetter
	Namespace string
	Name      string
	// LeaseDuration is the elector's: no renewal seen for this long means the holder is gone.
	LeaseDuration time.Duration

	mu sync.Mutex
	// held says whether a Create or Update of ours succeeded since Get last returned another
	// holder: this replica may lead, so its Gets never wait.
	held bool
	// waiting counts the Gets waiting on the watch (0 or 1: the elector calls one at a time).
	waiting atomic.Int32
}

// outcome says why a wait ended.
type outcome int

const (
	// changed: the Lease changed hands, was released or deleted, or the watch ended.
	changed outcome = iota
	// expired: the holder renewed nothing for a lease duration.
	expired
)

// Get returns the Lease's record. While another replica holds the Lease and keeps renewing it,
// it waits: see the package comment.
func (l *Lock) Get(ctx context.Context) (*rl.LeaderElectionRecord, []byte, error) {
	for {
		rec, raw, err := l.Interface.Get(ctx)
		if err != nil || !l.following(rec) {
			return l.returning(rec, raw, err)
		}
		why, lastRenew := l.wait(ctx, rec.HolderIdentity)
		// Read the Lease again: it may have moved, and the elector's Update needs it current.
		latest, latestRaw, err := l.Interface.Get(ctx)
		if err != nil || why == changed || latest.HolderIdentity != rec.HolderIdentity {
			return l.returning(latest, latestRaw, err)
		}
		if latest.RenewTime.Time.Equal(lastRenew) {
			return l.released(latest)
		}
		// Renewed after all (an event the watch had not delivered yet): wait again.
	}
}

// Create creates the Lease and records that this replica may hold it.
func (l *Lock) Create(ctx context.Context, ler rl.LeaderElectionRecord) error {
	return l.wrote(l.Interface.Create(ctx, ler))
}

// Update updates the Lease and records that this replica may hold it.
func (l *Lock) Update(ctx context.Context, ler rl.LeaderElectionRecord) error {
	return l.wrote(l.Interface.Update(ctx, ler))
}

func (l *Lock) wrote(err error) error {
	if err == nil {
		l.mu.Lock()
		l.held = true
		l.mu.Unlock()
	}
	return err
}

// following says whether Get should wait on rec's holder: another replica, while this one
// holds nothing.
func (l *Lock) following(rec *rl.LeaderElectionRecord) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.held && rec.HolderIdentity != "" && rec.HolderIdentity != l.Identity()
}

// returning records whether rec leaves this replica holding the Lease.
func (l *Lock) returning(rec *rl.LeaderElectionRecord, raw []byte, err error) (*rl.LeaderElectionRecord, []byte, error) {
	if err == nil {
		l.mu.Lock()
		l.held = rec.HolderIdentity == l.Identity()
		l.mu.Unlock()
	}
	return rec, raw, err
}

// released returns rec, whose holder has renewed nothing for a lease duration, as a released
// Lease: no holder.
func (l *Lock) released(rec *rl.LeaderElectionRecord) (*rl.LeaderElectionRecord, []byte, error) {
	free := *rec
	free.HolderIdentity = ""
	raw, err := json.Marshal(free)
	if err != nil {
		return nil, nil, err
	}
	return l.returning(&free, raw, nil)
}

// wait watches the Lease until it is no longer held by holder (changed) or holder has renewed
// nothing for LeaseDuration (expired), and returns the last renewal time it saw. A watch that
// cannot start or ends early is changed: the elector then reads and polls as it would without
// this lock.
func (l *Lock) wait(ctx context.Context, holder string) (outcome, time.Time) {
	l.waiting.Add(1)
	defer l.waiting.Add(-1)
	w, err := l.Leases.Leases(l.Namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", l.Name).String(),
	})
	if err != nil {
		return changed, time.Time{}
	}
	defer w.Stop()
	timer := time.NewTimer(l.LeaseDuration)
	defer timer.Stop()
	var lastRenew time.Time
	for {
		select {
		case <-ctx.Done():
			return changed, lastRenew
		case <-timer.C:
			return expired, lastRenew
		case ev, ok := <-w.ResultChan():
			if !ok {
				return changed, lastRenew
			}
			lease, isLease := ev.Object.(*coordinationv1.Lease)
			if !isLease || ev.Type == watch.Deleted || holderOf(lease) != holder {
				return changed, lastRenew
			}
			// The first event is the Lease as it is; a later renewal restarts the count.
			renew := renewTime(lease)
			if !lastRenew.IsZero() && !renew.Equal(lastRenew) {
				timer.Reset(l.LeaseDuration)
			}
			lastRenew = renew
		}
	}
}

func renewTime(lease *coordinationv1.Lease) time.Time {
	if lease.Spec.RenewTime == nil {
		return time.Time{}
	}
	return lease.Spec.RenewTime.Time
}

func holderOf(lease *coordinationv1.Lease) string {
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}
