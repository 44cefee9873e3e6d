package main

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed1b407122/database-operator/controllers/databasecluster"
)

// TestPollingReads reads 2 clusters of 3 agents served in this process through AgentMembers, as
// the polling case does: every read answers (the certificates name what AgentMembers verifies),
// the CA Secret GETs counted are AgentMembers' own (a cluster's first reads, then none within the
// CA recheck), a paced case hands out every round, and with the clock past the recheck the
// limiter holds back AgentMembers' GETs.
func TestPollingReads(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clusters, specs, reader, err := pollingClusters(2, 3)
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := startAgents(ctx, specs)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]string{}
	for i, s := range specs {
		byName[s.Name] = addrs[i]
		if s.caKey != nil {
			t.Errorf("agent %s would be handed its CA's key", s.Name)
		}
	}
	clk := &aheadClock{}
	poll := &poller{clusters: clusters, workers: 2, reader: reader, members: &databasecluster.AgentMembers{
		APIReader: reader, Address: func(pod *corev1.Pod) string { return byName[pod.Name] }, Clock: clk}}
	c := poll.measure(ctx, 0, 0, 1)
	// A cluster's members are read at once: each read that finds no client yet reads the CA.
	if c.MemberReads != 6 || c.ReadErrors != 0 || c.SecretGets < 2 || c.SecretGets > 6 {
		t.Fatalf("first sweep: %d reads, %d errors (%s), %d Secret GETs; want 6, 0, 2 to 6", c.MemberReads, c.ReadErrors, c.FirstError, c.SecretGets)
	}
	c = poll.measure(ctx, 0, 100*time.Millisecond, 3)
	if c.MemberReads != 18 || c.ReadErrors != 0 || c.SecretGets != 0 || c.WallSec < 0.2 {
		t.Fatalf("paced: %d reads, %d errors (%s), %d Secret GETs in %.2f s; want 18, 0, 0 (within the CA recheck), at least 0.2 s",
			c.MemberReads, c.ReadErrors, c.FirstError, c.SecretGets, c.WallSec)
	}
	clk.advance(pollingCARecheck)
	reader.limit(0.25, 1) // one GET, then one every 4 s: the other cluster's CA read waits past the 2 s bound
	c = poll.measure(ctx, 0, 0, 1)
	if c.SecretGets < 1 || c.ReadErrors == 0 {
		t.Errorf("CA due, limited to 0.25 QPS: %d Secret GETs, %d errors; want the CA read again and the reads past the 2 s bound failed",
			c.SecretGets, c.ReadErrors)
	}
}

// TestPollingTable renders the figures a case's JSON gives: per read, per member and minute,
// and as a share of one core.
func TestPollingTable(t *testing.T) {
	f := resultFile{Name: "docs/bench/20260101T000000Z-polling.json", Link: "20260101T000000Z-polling.json", Rep: report{
		Polling: &pollingResult{Clusters: 1000, MembersPerCluster: 3, Cases: []pollingCase{
			{Name: "every 10s", IntervalSec: 10, Rounds: 6, WallSec: 60, MemberReads: 18000, SecretGets: 18000,
				ClientCPUSec: 18, AgentCPUSec: 9, ClusterReadP50Sec: 0.002, ClusterReadP99Sec: 0.1},
			{Name: "sweep, every CA due", Rounds: 1, WallSec: 4, MemberReads: 3000, SecretGets: 3000, ClientCPUSec: 3, AgentCPUSec: 1.5,
				APIQPS: 50, APIBurst: 100, ClockAheadSec: 61},
		}}}}
	got := pollingTable([]resultFile{f}).String()
	for _, want := range []string{
		"| [20260101T000000Z](20260101T000000Z-polling.json) | every 10s ×6 | 1000 × 3 | 10 | 60.0 | 300 | 300 | 0 | 1000 | 6.0 | 0.30 | 500 | 2.0 / 100.0 |",
		"| sweep, every CA due ×1, 50 QPS / 100 burst | 1000 × 3 | — | 4.0 | 750 | 750 | 0 | 1000 | — | 0.75 | 500 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table\n%s\nlacks %q", got, want)
		}
	}
}
