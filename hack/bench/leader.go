package main

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/test/harness/controlplane"
	"github.com/seed1b407122/database-operator/test/harness/leader"
)

// leaderManagers is how many managers compete for the Lease, as the Deployment's 2 replicas.
const leaderManagers = 2

// leaderResult is what the leader case measured: how long leadership takes to move when the
// leader stops gracefully (SIGTERM: the Lease is released on cancel) and when it crashes
// (SIGKILL: the Lease expires), from the signal until another manager holds the Lease and has
// applied a change made after the stop.
type leaderResult struct {
	Managers int `json:"managers"`
	// The Lease's timings as the managers wrote it, and the manager's defaults behind them.
	LeaseDurationSec float64    `json:"leaseDurationSeconds"`
	RenewDeadlineSec float64    `json:"renewDeadlineSeconds"`
	RetryPeriodSec   float64    `json:"retryPeriodSeconds"`
	ReleaseOnCancel  bool       `json:"releaseOnCancel"`
	Repeat           int        `json:"repeat"`
	ClusterStartSec  float64    `json:"clusterStartSeconds"`
	HandOff          leaderMode `json:"handOff"`
	Takeover         leaderMode `json:"takeover"`
	Error            string     `json:"error,omitempty"`
}

// leaderMode is one way of stopping the leader, measured Repeat times, with the spread of each
// time over the runs: Total (signal → another manager leads and has applied the change),
// LeaseMoved (→ the Lease names another holder), Workers (→ the new leader started its
// databasecluster workers).
type leaderMode struct {
	Signal     string         `json:"signal"`
	Runs       []failoverRun  `json:"runs"`
	Total      leader.Summary `json:"total"`
	LeaseMoved leader.Summary `json:"leaseMoved"`
	Workers    leader.Summary `json:"workers"`
}

// failoverRun is one leader.Failover in seconds.
type failoverRun struct {
	TotalSec      float64 `json:"totalSeconds"`
	LeaseMovedSec float64 `json:"leaseMovedSeconds"`
	WorkersSec    float64 `json:"workersSeconds"`
	ChangedSec    float64 `json:"changedSeconds"`
	AppliedSec    float64 `json:"appliedSeconds"`
	ChangedInGap  bool    `json:"changedInGap"`
}

func (m *leaderMode) add(f leader.Failover) {
	m.Runs = append(m.Runs, failoverRun{
		TotalSec: f.Total.Seconds(), LeaseMovedSec: f.LeaseMoved.Seconds(), WorkersSec: f.Workers.Seconds(),
		ChangedSec: f.Changed.Seconds(), AppliedSec: f.Applied.Seconds(), ChangedInGap: f.ChangedInGap,
	})
	var total, moved, workers []time.Duration
	for _, r := range m.Runs {
		total = append(total, time.Duration(r.TotalSec*float64(time.Second)))
		moved = append(moved, time.Duration(r.LeaseMovedSec*float64(time.Second)))
		workers = append(workers, time.Duration(r.WorkersSec*float64(time.Second)))
	}
	m.Total, m.LeaseMoved, m.Workers = leader.Summarize(total), leader.Summarize(moved), leader.Summarize(workers)
}

// leaderRun is the state of the leader case while it runs.
type leaderRun struct {
	s        settings
	cluster  *controlplane.Cluster
	c        client.Client
	key      client.ObjectKey
	replicas int32
	managers []*leader.Manager
	lead     *leader.Manager
	leadID   string
	follower *leader.Manager
}

// runLeaderCase starts a fresh cluster and 2 managers with the default lease timings and
// release on cancel, then repeat times stops the leader with SIGTERM and, once another leads,
// with SIGKILL, starting a new follower after each stop.
func runLeaderCase(ctx context.Context, s settings, repeat int) (res leaderResult, err error) {
	res = leaderResult{Managers: leaderManagers, Repeat: repeat, ReleaseOnCancel: true,
		RenewDeadlineSec: leader.RenewDeadline.Seconds(), RetryPeriodSec: leader.RetryPeriod.Seconds(),
		HandOff: leaderMode{Signal: "SIGTERM"}, Takeover: leaderMode{Signal: "SIGKILL"}}
	r := &leaderRun{s: s}
	began := time.Now()
	r.cluster, err = controlplane.Start(ctx, controlplane.Options{Nodes: 3, CRDDirectoryPaths: []string{crdDir}})
	if err != nil {
		return res, fmt.Errorf("starting the local cluster: %w", err)
	}
	defer func() { err = errors.Join(err, r.cluster.Stop()) }()
	res.ClusterStartSec = time.Since(began).Seconds()
	defer func() {
		for _, m := range r.managers {
			if err != nil { // the cluster's directory, with the logs, is removed
				logf("leader: manager %s (%s), last 3 KiB:\n%s", m.Name, m.LogPath, m.LogTail(3072))
			}
			m.Kill()
		}
	}()
	if err := r.setUp(ctx, &res); err != nil {
		return res, err
	}
	for i := 1; i <= repeat; i++ {
		for _, stop := range []struct {
			mode *leaderMode
			sig  syscall.Signal
		}{{&res.HandOff, syscall.SIGTERM}, {&res.Takeover, syscall.SIGKILL}} {
			f, err := r.failover(ctx, stop.sig, i < repeat || stop.sig == syscall.SIGTERM)
			if err != nil {
				return res, fmt.Errorf("%s, run %d: %w", stop.mode.Signal, i, err)
			}
			stop.mode.add(f)
			logf("leader: %s %d/%d: %s", stop.mode.Signal, i, repeat, f)
		}
	}
	return res, nil
}

// setUp creates the namespaces and one DatabaseCluster, starts the managers and waits until one
// leads and has created the cluster's StatefulSet.
func (r *leaderRun) setUp(ctx context.Context, res *leaderResult) (err error) {
	if r.c, err = newClient(ctx, r.cluster.Config, leader.LeaseNamespace, benchNamespace); err != nil {
		return err
	}
	dc := newDatabaseCluster("leader")
	r.key, r.replicas = client.ObjectKeyFromObject(dc), ptr.Deref(dc.Spec.Replicas, 1)
	if err := r.c.Create(ctx, dc); err != nil {
		return fmt.Errorf("creating DatabaseCluster %s: %w", r.key, err)
	}
	for range leaderManagers {
		if _, err := r.startManager(ctx); err != nil {
			return err
		}
	}
	if r.lead, r.leadID, err = leader.FindLeader(ctx, r.c, r.managers, 2*time.Minute); err != nil {
		return err
	}
	r.follower = r.managers[0]
	if r.follower == r.lead {
		r.follower = r.managers[1]
	}
	if err := r.follower.WaitLogged(ctx, time.Minute, leader.MsgAttemptingLease); err != nil {
		return err
	}
	applied := func(ctx context.Context) (bool, error) {
		done, _ := leader.ScaleChange(r.c, r.key, r.replicas).Applied(ctx)
		return done, nil
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, applied); err != nil {
		return fmt.Errorf("the first leader did not create the StatefulSet: %w", err)
	}
	lease, err := leader.GetLease(ctx, r.c)
	if err != nil {
		return err
	}
	res.LeaseDurationSec = float64(ptr.Deref(lease.Spec.LeaseDurationSeconds, 0))
	logf("leader: manager %s leads (%s), manager %s follows", r.lead.Name, r.leadID, r.follower.Name)
	return nil
}

// failover stops the leader with sig and measures until the follower holds the Lease and has
// scaled the StatefulSet to the replicas set after the stop. With restart, a new manager then
// joins as the next follower.
func (r *leaderRun) failover(ctx context.Context, sig syscall.Signal, restart bool) (leader.Failover, error) {
	r.replicas = 3 - r.replicas // 1 ↔ 2: a change only a reconcile can apply
	f, err := leader.Measure(ctx, leader.Stop{
		Client: r.c, Leader: r.lead, LeaderID: r.leadID, Followers: []*leader.Manager{r.follower},
		Signal: sig, Change: leader.ScaleChange(r.c, r.key, r.replicas),
	})
	if err != nil {
		return f, err
	}
	if f.AppliedEarly {
		return f, fmt.Errorf("replicas %d reached the StatefulSet before the new leader reconciled: %s", r.replicas, f)
	}
	exitErr, err := r.lead.WaitExit(30 * time.Second)
	if err != nil {
		return f, err
	}
	if sig == syscall.SIGTERM && exitErr != nil {
		return f, fmt.Errorf("manager %s exited with %w on SIGTERM; see %s", r.lead.Name, exitErr, r.lead.LogPath)
	}
	r.lead, r.leadID = f.NewLeader, f.NewHolder
	if !restart {
		return f, nil
	}
	if r.follower, err = r.startManager(ctx); err != nil {
		return f, err
	}
	return f, r.follower.WaitLogged(ctx, time.Minute, leader.MsgAttemptingLease)
}

func (r *leaderRun) startManager(ctx context.Context) (*leader.Manager, error) {
	m, err := leader.Start(ctx, leader.Options{
		Binary: r.s.manager, Name: fmt.Sprintf("m%d", len(r.managers)+1),
		LogDir: r.cluster.WorkDir, Kubeconfig: r.cluster.KubeconfigPath,
	})
	if err != nil {
		return nil, err
	}
	r.managers = append(r.managers, m)
	return m, nil
}
