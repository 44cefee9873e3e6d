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

package leader

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// pollInterval is how often the Lease, the logs and the children are read while measuring.
const pollInterval = 20 * time.Millisecond

// LeaseKey is the manager's Lease.
var LeaseKey = client.ObjectKey{Namespace: LeaseNamespace, Name: LeaseName}

// GetLease reads the manager's Lease.
func GetLease(ctx context.Context, c client.Reader) (*coordinationv1.Lease, error) {
	lease := &coordinationv1.Lease{}
	if err := c.Get(ctx, LeaseKey, lease); err != nil {
		return nil, fmt.Errorf("reading Lease %s: %w", LeaseKey, err)
	}
	return lease, nil
}

// Holder is the Lease's holder identity; "" when nobody holds it (released, or not created yet).
func Holder(ctx context.Context, c client.Reader) (string, error) {
	lease, err := GetLease(ctx, c)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return ptr.Deref(lease.Spec.HolderIdentity, ""), nil
}

// FindLeader waits up to timeout until the Lease has a holder and exactly one of the running
// managers logged that it acquired it and started reconciling, and returns that manager and
// the holder identity. controller-runtime's identity is hostname_uuid, and the managers share
// the hostname, so the holder is told apart by the one process that logs the acquisition.
func FindLeader(ctx context.Context, c client.Reader, managers []*Manager, timeout time.Duration) (*Manager, string, error) {
	deadline := time.Now().Add(timeout)
	for {
		holder, err := Holder(ctx, c)
		if err != nil {
			return nil, "", err
		}
		var leaders []*Manager
		for _, m := range managers {
			if m.Running() && m.Logged(MsgAcquiredLease) {
				leaders = append(leaders, m)
			}
		}
		if holder != "" && len(leaders) == 1 && leaders[0].Reconciling() {
			return leaders[0], holder, nil
		}
		if len(leaders) > 1 {
			return nil, "", fmt.Errorf("%d running managers acquired the Lease", len(leaders))
		}
		if time.Now().After(deadline) {
			return nil, "", fmt.Errorf("no leader within %s (holder %q, %d managers logged the acquisition)", timeout, holder, len(leaders))
		}
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Change is an edit made while no manager leads, and the test that it reached the children.
type Change struct {
	// Make makes the change.
	Make func(context.Context) error
	// Applied reports whether the operator carried the change out.
	Applied func(context.Context) (bool, error)
}

// ScaleChange sets spec.replicas of a DatabaseCluster; it is applied once the cluster's
// StatefulSet asks for that many pods.
func ScaleChange(c client.Client, key client.ObjectKey, replicas int32) Change {
	return Change{
		Make: func(ctx context.Context) error {
			dc := &databasev1alpha1.DatabaseCluster{}
			if err := c.Get(ctx, key, dc); err != nil {
				return err
			}
			patch := client.MergeFrom(dc.DeepCopy())
			dc.Spec.Replicas = ptr.To(replicas)
			return c.Patch(ctx, dc, patch)
		},
		Applied: func(ctx context.Context) (bool, error) {
			n, err := StatefulSetReplicas(ctx, c, key)
			return n == replicas, err
		},
	}
}

// StatefulSetReplicas is spec.replicas of the StatefulSet of the DatabaseCluster key.
func StatefulSetReplicas(ctx context.Context, c client.Reader, key client.ObjectKey) (int32, error) {
	dc := &databasev1alpha1.DatabaseCluster{}
	dc.Name, dc.Namespace = key.Name, key.Namespace
	sts := &appsv1.StatefulSet{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.StatefulSetName()}, sts); err != nil {
		return 0, err
	}
	return ptr.Deref(sts.Spec.Replicas, 0), nil
}

// Stop is one fail-over to measure: the leader gets Signal, the followers compete for the Lease.
type Stop struct {
	Client    client.Client
	Leader    *Manager
	LeaderID  string // the Lease's holder identity while Leader leads
	Followers []*Manager
	Signal    syscall.Signal
	// Change is made as soon as no manager leads any more: once the leader released the Lease
	// or exited. It must not be applied before a follower reconciles.
	Change Change
	// Timeout bounds the whole measurement; default LeaseDuration + 30 s.
	Timeout time.Duration
}

// Failover is what Measure saw. The durations are counted from the signal.
type Failover struct {
	Signal string
	// Total: another process holds the Lease and the change made in the gap is applied, i.e.
	// the new leader really reconciles.
	Total time.Duration
	// LeaseMoved: the Lease names another holder.
	LeaseMoved time.Duration
	// Workers: the new leader logged "Starting workers" (databasecluster controller).
	Workers time.Duration
	// Changed: the change was accepted by the API server.
	Changed time.Duration
	// Applied: the change reached the children.
	Applied time.Duration
	// ChangedInGap: the change was made before the new leader reconciled.
	ChangedInGap bool
	// AppliedEarly: the change reached the children before a follower started reconciling, so
	// something other than the new leader applied it (the measurement is then meaningless).
	AppliedEarly bool
	NewHolder    string
	// NewLeader is the follower that took over.
	NewLeader *Manager
}

func (f Failover) String() string {
	return fmt.Sprintf("%s (Lease moved after %s, workers started after %s; change made after %s, applied after %s)",
		f.Total.Round(time.Millisecond), f.LeaseMoved.Round(time.Millisecond), f.Workers.Round(time.Millisecond),
		f.Changed.Round(time.Millisecond), f.Applied.Round(time.Millisecond))
}

// Measure sends the signal to the leader and polls (every 20 ms) the Lease, the followers' logs
// and the children until another process holds the Lease, has started its workers and has
// applied the change. It fails when no follower is left running, or on a timeout. It does not
// wait for the old leader to exit.
func Measure(ctx context.Context, s Stop) (Failover, error) {
	if s.Timeout == 0 {
		s.Timeout = LeaseDuration + 30*time.Second
	}
	m := &measurement{Stop: s, f: Failover{Signal: sigName(s.Signal)}, began: time.Now()}
	if err := s.Leader.Signal(s.Signal); err != nil {
		return m.f, fmt.Errorf("signalling manager %s: %w", s.Leader.Name, err)
	}
	deadline := m.began.Add(s.Timeout)
	for m.f.LeaseMoved == 0 || m.f.Workers == 0 || m.f.Applied == 0 {
		if time.Now().After(deadline) {
			return m.f, fmt.Errorf("no new leader reconciling %s after the %s: %s", s.Timeout, m.f.Signal, m.f)
		}
		if err := m.poll(ctx); err != nil {
			return m.f, err
		}
		select {
		case <-ctx.Done():
			return m.f, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
	m.f.Total = max(m.f.LeaseMoved, m.f.Applied)
	if !m.f.NewLeader.Logged(MsgAcquiredLease) {
		return m.f, fmt.Errorf("manager %s reconciles but did not log %q", m.f.NewLeader.Name, MsgAcquiredLease)
	}
	return m.f, nil
}

// measurement is the state of one Measure.
type measurement struct {
	Stop
	f     Failover
	began time.Time
}

// poll reads everything once and records what happened since the last time.
func (m *measurement) poll(ctx context.Context) error {
	if !anyRunning(m.Followers) {
		return fmt.Errorf("every follower exited (%s): %s", exitErrors(m.Followers), m.f)
	}
	holder, err := Holder(ctx, m.Client)
	if err != nil {
		return err
	}
	if err := m.changeOnceNobodyLeads(ctx, holder); err != nil {
		return err
	}
	if m.f.LeaseMoved == 0 && holder != "" && holder != m.LeaderID {
		m.f.LeaseMoved, m.f.NewHolder = time.Since(m.began), holder
	}
	// Read the children before the logs: the workers start before anything is applied, so a
	// change seen applied while no follower had logged its workers was applied by someone else.
	applied := false
	if m.f.Changed != 0 && m.f.Applied == 0 {
		if applied, err = m.Change.Applied(ctx); err != nil {
			return fmt.Errorf("reading whether the change is applied: %w", err)
		}
	}
	if m.f.Workers == 0 {
		if l := reconciling(m.Followers); l != nil {
			m.f.Workers, m.f.NewLeader = time.Since(m.began), l
		}
	}
	if applied {
		m.f.Applied = time.Since(m.began)
		m.f.AppliedEarly = m.f.Workers == 0
	}
	return nil
}

// changeOnceNobodyLeads makes the change, once, as soon as the leader released the Lease or
// exited.
func (m *measurement) changeOnceNobodyLeads(ctx context.Context, holder string) error {
	if m.f.Changed != 0 || (holder == m.LeaderID && m.Leader.Running()) {
		return nil
	}
	if err := m.Change.Make(ctx); err != nil {
		return fmt.Errorf("making the change: %w", err)
	}
	m.f.Changed = time.Since(m.began)
	m.f.ChangedInGap = reconciling(m.Followers) == nil
	return nil
}

func anyRunning(managers []*Manager) bool {
	for _, m := range managers {
		if m.Running() {
			return true
		}
	}
	return false
}

func exitErrors(managers []*Manager) string {
	var out []string
	for _, m := range managers {
		out = append(out, fmt.Sprintf("%s: %v, see %s", m.Name, m.ExitErr(), m.LogPath))
	}
	return strings.Join(out, "; ")
}

// reconciling returns the first running manager that started its workers, or nil.
func reconciling(managers []*Manager) *Manager {
	for _, m := range managers {
		if m.Running() && m.Reconciling() {
			return m
		}
	}
	return nil
}

func sigName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	default:
		return sig.String()
	}
}
