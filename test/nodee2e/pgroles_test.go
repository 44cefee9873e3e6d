//go:build linux && node

package nodee2e

import (
	"context"
	"crypto/x509"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/api/conditions"
	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
)

const (
	// pgMembers is the number of members of the story's cluster: a primary and two replicas.
	pgMembers = 3
	// pgReplicatedRows are written through NAME-rw and read back from each replica.
	pgReplicatedRows = 1000
	// pgStartBound is how long the 3 members may take to be Ready: initdb on the primary, then
	// each replica waits for it (NAME-rw has no endpoint until it is Ready) and clones it with
	// pg_basebackup, on a loaded 2-core node.
	pgStartBound = 6 * time.Minute
	// pgSwitchoverBound is how long a requested switchover may take to be reported done: the
	// operator records it, fences the primary, waits for the target to replay everything,
	// promotes it and sees it the only primary (reads every second during a switchover). The
	// operator itself reports one that takes more than a minute.
	pgSwitchoverBound = 90 * time.Second
	// pgRejoinBound is how long the old primary may take to be streaming from the new one once
	// the switchover is done: its pod replaced, pg_rewind (or a new clone), the start as a
	// standby.
	pgRejoinBound = 4 * time.Minute
	// pgProbeTimeout bounds each read of a member's state by the watch of the writable members.
	pgProbeTimeout = time.Second
	// pgSwitchoverRun and pgRollRun name the writers of the switchover and of the roll, and
	// their tables.
	pgSwitchoverRun = "switchover"
	// postgresReplicatedSampleFile is the sample the story applies as it is.
	postgresReplicatedSampleFile = "database_v1alpha1_databasecluster_postgres_replicated.yaml"
	pgRollRun                    = "roll"
)

// postgresRolesStory, one ordered story: the replicated PostgreSQL sample (spec.engine postgresql,
// three members), as it is. The operator announces each member's role to the project's image: ordinal 0
// is initialized as the primary, the two others are cloned from it (pg_basebackup) and stream
// from it. The operator reads the roles through its agents and publishes them (status, labels,
// NAME-rw, NAME-ro). Asked for a switchover under a writer, it has the primary step down,
// promotes the most advanced replica and reports it done; no acknowledged write is lost, two
// members are never writable at once, and every other member streams from the new primary.
// A new pod template then rolls the members under a writer: the replicas first, the primary's
// role handed over by a switchover, its pod last. Scaled 3 -> 4 -> 3, the new member is cloned
// and streams, and goes again; the primary stays. Last, the primary's faults (pgfaults_test.go).
func postgresRolesStory() {
	var (
		dc       *databasev1alpha1.DatabaseCluster
		username string
		password string
		roots    *x509.CertPool
	)

	// The members' own account when a spec fails: the entrypoint's and PostgreSQL's logs, the
	// agents', the announcements and the events.
	AfterEach(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() && dc != nil {
			describeMembers(ctx, dc)
		}
	}, NodeTimeout(time.Minute))

	It("runs the replicated PostgreSQL sample as it is (engine postgresql, 3 members): ordinal 0 the primary, the replicas cloned from it, published", func(ctx SpecContext) {
		ns := newNamespace(ctx, "postgres-roles")
		dc = sampleCluster(ns, postgresReplicatedSampleFile)
		Expect(dc.Spec.Replicas).To(HaveValue(BeEquivalentTo(pgMembers)))
		Expect(dc.Spec.Engine).To(Equal(databasev1alpha1.EnginePostgreSQL))
		// The story's own cleanup: the sample keeps its claims when it is deleted, as it should.
		Expect(dc.Spec.PVCRetentionPolicy).To(BeNil(), "the sample sets a claim retention policy now: say so here")
		dc.Spec.PVCRetentionPolicy = &databasev1alpha1.PVCRetentionPolicy{WhenDeleted: databasev1alpha1.DeletePVC}
		began := time.Now()
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			g.Expect(dc.Status.ReadyReplicas).To(BeEquivalentTo(pgMembers))
		}).WithContext(ctx).WithTimeout(pgStartBound).WithPolling(time.Second).Should(Succeed(),
			"the %d members were not Ready within %s", pgMembers, pgStartBound)
		report("PostgreSQL roles: create -> Available (engine postgresql, 3 members: initdb, 2 clones)", waitAvailable(ctx, dc, began))
		available := time.Now()
		var primary string
		Eventually(func(g Gomega) {
			primary = expectPostgresRolesPublished(ctx, g, dc)
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		report("PostgreSQL roles: Available -> roles published (status, labels, NAME-rw, NAME-ro)", time.Since(available))
		Expect(primary).To(Equal(dc.StatefulSetName()+"-0"), "ordinal 0 is the primary of a new cluster")
		GinkgoWriter.Printf("Published: primary %s, members %+v\n", primary, dc.Status.Members)

		username, password = postgresCredentials(ctx, dc, dc.GeneratedCredentialsName())
		roots = caPool(servingSecret(ctx, dc))
	}, NodeTimeout(10*time.Minute))

	It("streams to the replicas: rows written through NAME-rw are read on each replica, a copy of the primary in recovery", func(ctx SpecContext) {
		rw := readWriteTarget(ctx, dc)
		db := pgDialEventually(ctx, rw, username, password, roots)
		defer func() { _ = db.Close(ctx) }()
		var primaryID uint64
		Expect(db.QueryRow(ctx, "SELECT system_identifier FROM pg_control_system()").Scan(&primaryID)).To(Succeed())
		Expect(pgState(ctx, db).writable()).To(BeTrue(), "NAME-rw reaches a writable primary")

		began := time.Now()
		_, err := db.Exec(ctx, "CREATE TABLE items (id integer PRIMARY KEY, value text NOT NULL)")
		Expect(err).NotTo(HaveOccurred())
		rows := make([][]any, pgReplicatedRows)
		for i := range rows {
			rows[i] = []any{i, postgresValue(i)}
		}
		n, err := db.CopyFrom(ctx, pgx.Identifier{"items"}, []string{"id", "value"}, pgx.CopyFromRows(rows))
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeEquivalentTo(pgReplicatedRows))
		report(fmt.Sprintf("PostgreSQL roles: %d rows written through NAME-rw", pgReplicatedRows), time.Since(began))

		pods := podsOf(ctx, dc)
		for _, name := range replicaNames(dc) {
			replica := pgDialEventually(ctx, memberTarget(dc, pods[name]), username, password, roots)
			// Each replica is a copy of the primary's cluster (pg_basebackup), not a database
			// initialized on its own: the same system identifier.
			var id uint64
			Expect(replica.QueryRow(ctx, "SELECT system_identifier FROM pg_control_system()").Scan(&id)).To(Succeed())
			Expect(id).To(Equal(primaryID), "%s is not a copy of the primary", name)
			Expect(pgState(ctx, replica).inRecovery).To(BeTrue(), "%s is not in recovery", name)
			Eventually(func(g Gomega) {
				var count int
				g.Expect(replica.QueryRow(ctx, "SELECT count(*) FROM items").Scan(&count)).To(Succeed())
				g.Expect(count).To(Equal(pgReplicatedRows))
			}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed(), "the rows did not reach %s", name)
			report(fmt.Sprintf("PostgreSQL roles: rows written -> all %d read on %s", pgReplicatedRows, name), time.Since(began))
			expectRows(ctx, replica, pgReplicatedRows)
			_, err := replica.Exec(ctx, "INSERT INTO items (id, value) VALUES (-1, 'on a replica')")
			Expect(err).To(MatchError(ContainSubstring("read-only transaction")), "%s took a write", name)
			Expect(replica.Close(ctx)).To(Succeed())
		}
		Expect(streamingReplicas(ctx, Default, db)).To(HaveLen(pgMembers-1), "the replicas streaming from the primary (pg_stat_replication)")
	}, NodeTimeout(4*time.Minute))

	It("switches over on demand under a writer: the primary fenced, the most advanced replica promoted, never two writable, no acknowledged write lost, the old primary streaming again", func(ctx SpecContext) {
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		oldPrimary := dc.Status.CurrentPrimary
		Expect(oldPrimary).NotTo(BeEmpty())
		rw := readWriteTarget(ctx, dc)
		createWriterTable(ctx, rw, pgSwitchoverRun, username, password, roots)
		// Each stopped once, by the spec or, when it fails before, by the deferred calls.
		writable, stopWatches := watchRoles(ctx, dc, username, password, roots)
		defer stopWatches()
		w := startPostgresWriter(ctx, pgSwitchoverRun, rw, username, password, roots)
		stopWriter := sync.OnceValue(w.stop)
		defer stopWriter()
		// The writer's own pace before the change, so that a gap at the switchover is the cluster's.
		Expect(pause(ctx, 2*time.Second)).To(Succeed())

		began := time.Now()
		update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) {
			if dc.Annotations == nil {
				dc.Annotations = map[string]string{}
			}
			dc.Annotations[databasev1alpha1.SwitchoverAnnotation] = databasev1alpha1.SwitchoverToAny
		})
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			g.Expect(dc.Status.CurrentPrimary).NotTo(BeEmpty())
			g.Expect(dc.Status.CurrentPrimary).NotTo(Equal(oldPrimary), "status.currentPrimary")
			g.Expect(dc.Status.Switchover).To(BeNil(), "status.switchover")
			g.Expect(dc.Annotations).NotTo(HaveKey(databasev1alpha1.SwitchoverAnnotation))
			g.Expect(switchoverDone(ctx, g, dc, began)).To(ContainElement(ContainSubstring(dc.Status.CurrentPrimary + " is the only primary")))
		}).WithContext(ctx).WithTimeout(pgSwitchoverBound).WithPolling(rolesSampleEvery).Should(Succeed(),
			"the switchover was not reported done within %s", pgSwitchoverBound)
		switched := time.Since(began)
		newPrimary := dc.Status.CurrentPrimary
		ackedAtDone := w.acknowledged()
		report("PostgreSQL roles: switchover-to any -> currentPrimary changed, SwitchoverDone (with a writer)", switched)
		GinkgoWriter.Printf("Switched over from %s to %s in %s\n", oldPrimary, newPrimary, switched.Round(time.Millisecond))

		// A stretch of writes through NAME-rw to the new primary, then the writer stops: every
		// write it acknowledged is on the new primary, and two members were never writable at once.
		Expect(pause(ctx, 2*time.Second)).To(Succeed())
		tally := stopWriter()
		reportCount("PostgreSQL roles: writes acknowledged (switchover)", len(tally.Acknowledged))
		reportCount("PostgreSQL roles: writes failed (switchover)", tally.Failed)
		report("PostgreSQL roles: longest time between two acknowledged writes (switchover)", tally.LongestGap)
		Expect(len(tally.Acknowledged)).To(BeNumerically(">", ackedAtDone), "no write acknowledged after the switchover")
		primaryConn := pgDialEventually(ctx, memberTarget(dc, podsOf(ctx, dc)[newPrimary]), username, password, roots)
		lost := missingWrites(ctx, Default, primaryConn, pgSwitchoverRun, tally.Acknowledged)
		Expect(primaryConn.Close(ctx)).To(Succeed())
		reportCount("PostgreSQL roles: acknowledged writes lost in the switchover", len(lost))
		Expect(lost).To(BeEmpty(), "acknowledged writes the new primary %s does not hold", newPrimary)
		Expect(writable.current().twoWritable).To(BeEmpty(), "two members writable at once (out of recovery, not read-only)")

		// The old primary is back as a replica: in recovery, streaming from the new primary with
		// the other replica, and the publication agrees.
		Eventually(func(g Gomega) {
			pods := podsOf(ctx, dc)
			old, ok := pods[oldPrimary]
			g.Expect(ok).To(BeTrue(), "%s has no pod", oldPrimary)
			g.Expect(isReady(&old)).To(BeTrue(), "%s is not Ready", oldPrimary)
			g.Expect(memberState(ctx, g, dc, old, username, password, roots).inRecovery).To(BeTrue(), "%s is not in recovery", oldPrimary)
			primaryConn, err := pgDial(ctx, memberTarget(dc, pods[newPrimary]), username, password, roots)
			g.Expect(err).NotTo(HaveOccurred())
			defer func() { _ = primaryConn.Close(ctx) }()
			g.Expect(streamingReplicas(ctx, g, primaryConn)).To(HaveLen(pgMembers-1), "the replicas streaming from %s (pg_stat_replication)", newPrimary)
			g.Expect(expectPostgresRolesPublished(ctx, g, dc)).To(Equal(newPrimary))
		}).WithContext(ctx).WithTimeout(pgRejoinBound).WithPolling(time.Second).Should(Succeed(),
			"%s did not stream from %s within %s of the switchover", oldPrimary, newPrimary, pgRejoinBound)
		report("PostgreSQL roles: switchover-to any -> the old primary streaming from the new one, published", time.Since(began))

		watched, seen := stopWatches()
		GinkgoWriter.Printf("The operator's events:\n%s\nThe old primary's entrypoint:\n%s\n",
			strings.Join(rollEvents(ctx, dc, began), "\n"), strings.Join(logLines(ctx, dc, oldPrimary, " entrypoint: "), "\n"))
		for _, name := range slices.Sorted(maps.Keys(podsOf(ctx, dc))) {
			if name != newPrimary {
				GinkgoWriter.Printf("%s's replication:\n%s\n", name, strings.Join(logLines(ctx, dc, name, replicationWords...), "\n"))
			}
		}
		reportCount("PostgreSQL roles: samples of the members' states (every 200 ms, switchover and rejoin)", watched.samples)
		report("PostgreSQL roles: two members out of recovery (the old primary fenced read-only)", watched.fencedOverlap)
		// Through the switchover and the old primary's return: never two writable members, never
		// two pods labelled primary, nor two addresses in NAME-rw.
		Expect(watched.samples).To(BeNumerically(">", 10))
		Expect(watched.twoWritable).To(BeEmpty(), "two members writable at once (out of recovery, not read-only)")
		Expect(seen.twoLabelled).To(BeEmpty(), "two pods labelled primary at once")
		Expect(seen.twoReady).To(BeEmpty(), "two Ready addresses in NAME-rw's endpoints at once")

		// The old primary, now a replica, holds every acknowledged write too.
		oldConn := pgDialEventually(ctx, memberTarget(dc, podsOf(ctx, dc)[oldPrimary]), username, password, roots)
		defer func() { _ = oldConn.Close(ctx) }()
		Eventually(func(g Gomega) {
			g.Expect(missingWrites(ctx, g, oldConn, pgSwitchoverRun, tally.Acknowledged)).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(), "acknowledged writes the old primary %s does not hold", oldPrimary)
	}, NodeTimeout(10*time.Minute))

	It("rolls a new pod template under a writer: the replicas first, then the primary's role handed over, its pod last; never two writable, no acknowledged write lost", func(ctx SpecContext) {
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		oldPrimary := dc.Status.CurrentPrimary
		Expect(oldPrimary).NotTo(BeEmpty())
		before := podsOf(ctx, dc)
		revision := statefulSet(ctx, Default, dc).Status.UpdateRevision
		rw := readWriteTarget(ctx, dc)
		createWriterTable(ctx, rw, pgRollRun, username, password, roots)
		_, stopWatches := watchRoles(ctx, dc, username, password, roots)
		defer stopWatches()
		deletions := watchPodDeletions(ctx, dc)
		w := startPostgresWriter(ctx, pgRollRun, rw, username, password, roots)
		stopWriter := sync.OnceValue(w.stop)
		defer stopWriter()
		began, rolled := rollNewTemplate(ctx, dc, before, revision)
		var newPrimary string
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			g.Expect(dc.Status.Switchover).To(BeNil(), "status.switchover")
			newPrimary = expectPostgresRolesPublished(ctx, g, dc)
			primaryConn, err := pgDial(ctx, memberTarget(dc, podsOf(ctx, dc)[newPrimary]), username, password, roots)
			g.Expect(err).NotTo(HaveOccurred())
			defer func() { _ = primaryConn.Close(ctx) }()
			g.Expect(streamingReplicas(ctx, g, primaryConn)).To(HaveLen(pgMembers-1), "the replicas streaming from %s (pg_stat_replication)", newPrimary)
		}).WithContext(ctx).WithTimeout(pgRejoinBound).WithPolling(time.Second).Should(Succeed(),
			"the replicas did not all stream from the primary within %s of the roll", pgRejoinBound)
		Expect(pause(ctx, 2*time.Second)).To(Succeed())
		tally := stopWriter()
		watched, seen := stopWatches()
		deleted := deletions.stop()
		events := rollEvents(ctx, dc, began)
		GinkgoWriter.Printf("Pods deleted:\n%s\nThe operator's events:\n%s\n", strings.Join(deleted.lines(began), "\n"), strings.Join(events, "\n"))
		reportRoll("PostgreSQL roles", rolled, tally)

		// The replicas first, highest ordinal first, each pod once; the old primary last, after
		// its role moved to an updated replica.
		expectReplicasFirst(deletions, deleted, before, oldPrimary)
		Expect(newPrimary).NotTo(Equal(oldPrimary))
		Expect(events).To(ContainElement(ContainSubstring("SwitchoverDone: " + newPrimary + " is the only primary (from " + oldPrimary + ", Update)")))
		Expect(slices.DeleteFunc(slices.Clone(events), func(e string) bool { return !strings.Contains(e, " SwitchoverDone: ") })).To(HaveLen(1),
			"one switchover")

		Expect(tally.Acknowledged).NotTo(BeEmpty())
		primaryConn := pgDialEventually(ctx, memberTarget(dc, podsOf(ctx, dc)[newPrimary]), username, password, roots)
		defer func() { _ = primaryConn.Close(ctx) }()
		lost := missingWrites(ctx, Default, primaryConn, pgRollRun, tally.Acknowledged)
		reportCount("PostgreSQL roles: acknowledged writes lost in the roll", len(lost))
		Expect(lost).To(BeEmpty(), "acknowledged writes the primary %s does not hold", newPrimary)
		Expect(watched.samples).To(BeNumerically(">", 10))
		Expect(watched.twoWritable).To(BeEmpty(), "two members writable at once (out of recovery, not read-only)")
		Expect(seen.twoLabelled).To(BeEmpty(), "two pods labelled primary at once")
		Expect(seen.twoReady).To(BeEmpty(), "two Ready addresses in NAME-rw's endpoints at once")
	}, NodeTimeout(12*time.Minute))

	It("scales 3 -> 4 -> 3 through the scale subresource: a replica cloned from the primary and streaming, then removed; the primary stays", func(ctx SpecContext) {
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		primary := dc.Status.CurrentPrimary
		Expect(primary).NotTo(BeEmpty())
		added := dc.StatefulSetName() + "-" + strconv.Itoa(pgMembers)
		began := time.Now()
		scaleTo(ctx, dc, pgMembers+1)
		report("PostgreSQL roles: scale 3 -> 4 -> Available (a replica cloned from the primary)", waitAvailable(ctx, dc, began))
		var rows int
		Eventually(func(g Gomega) {
			g.Expect(expectPostgresRolesPublished(ctx, g, dc)).To(Equal(primary))
			pods := podsOf(ctx, dc)
			conn, err := pgDial(ctx, memberTarget(dc, pods[primary]), username, password, roots)
			g.Expect(err).NotTo(HaveOccurred())
			defer func() { _ = conn.Close(ctx) }()
			g.Expect(streamingReplicas(ctx, g, conn)).To(HaveLen(pgMembers), "the replicas streaming from %s (pg_stat_replication)", primary)
			g.Expect(conn.QueryRow(ctx, "SELECT count(*) FROM "+pgRollRun).Scan(&rows)).To(Succeed())
			g.Expect(memberState(ctx, g, dc, pods[added], username, password, roots).inRecovery).To(BeTrue(), "%s is not in recovery", added)
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		// The new member holds the rows written before it existed.
		newConn := pgDialEventually(ctx, memberTarget(dc, podsOf(ctx, dc)[added]), username, password, roots)
		var copied int
		Expect(newConn.QueryRow(ctx, "SELECT count(*) FROM "+pgRollRun).Scan(&copied)).To(Succeed())
		Expect(newConn.Close(ctx)).To(Succeed())
		Expect(copied).To(Equal(rows), "rows of the roll's writer on %s", added)

		shrunk := time.Now()
		scaleTo(ctx, dc, pgMembers)
		report("PostgreSQL roles: scale 4 -> 3 -> Available (the replica removed)", waitAvailable(ctx, dc, shrunk))
		Eventually(func(g Gomega) {
			g.Expect(podsOf(ctx, dc)).NotTo(HaveKey(added))
			g.Expect(expectPostgresRolesPublished(ctx, g, dc)).To(Equal(primary))
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
	}, NodeTimeout(6*time.Minute))

	postgresFaultSpecs(&dc, &username, &password, &roots)

	It("deletes the cluster with its claims", func(ctx SpecContext) {
		Expect(k8s.Delete(ctx, dc)).To(Succeed())
		waitClusterAndVolumesGone(ctx, dc)
	}, NodeTimeout(4*time.Minute))
}

// replicaNames are the members other than ordinal 0, the primary of a new cluster.
func replicaNames(dc *databasev1alpha1.DatabaseCluster) []string {
	var names []string
	for ordinal := 1; ordinal < pgMembers; ordinal++ {
		names = append(names, fmt.Sprintf("%s-%d", dc.StatefulSetName(), ordinal))
	}
	return names
}

// expectPostgresRolesPublished checks, asserting with g, that exactly one pod is labelled
// primary and the others replica, that status.currentPrimary and status.members (each with a WAL
// position) say the same, that NAME-rw routes to the primary alone and NAME-ro to the replicas,
// and that there is no split brain. It returns the primary's name.
func expectPostgresRolesPublished(ctx context.Context, g Gomega, dc *databasev1alpha1.DatabaseCluster) string {
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
	members := int(*dc.Spec.Replicas)
	pods := podsOf(ctx, dc)
	g.Expect(pods).To(HaveLen(members))
	var primaries, replicaIPs []string
	for name, p := range pods {
		switch p.Labels[databasev1alpha1.RoleLabel] {
		case string(databasev1alpha1.MemberRolePrimary):
			primaries = append(primaries, name)
		case string(databasev1alpha1.MemberRoleReplica):
			replicaIPs = append(replicaIPs, p.Status.PodIP)
		default:
			g.Expect(p.Labels).To(HaveKey(databasev1alpha1.RoleLabel), "%s has no role label", name)
		}
	}
	g.Expect(primaries).To(HaveLen(1), "pods labelled primary")
	primary := primaries[0]
	g.Expect(dc.Status.CurrentPrimary).To(Equal(primary), "status.currentPrimary")
	g.Expect(dc.Status.Members).To(HaveLen(members))
	for _, m := range dc.Status.Members {
		want := databasev1alpha1.MemberRoleReplica
		if m.Name == primary {
			want = databasev1alpha1.MemberRolePrimary
		}
		g.Expect(m.Role).To(Equal(want), "status.members: %s", m.Name)
		_, err := memberagent.ParseLSN(m.Position)
		g.Expect(err).NotTo(HaveOccurred(), "the position of %s is not a WAL location", m.Name)
	}
	g.Expect(readyEndpoints(ctx, g, dc.Namespace, dc.ReadWriteServiceName())).To(Equal([]string{pods[primary].Status.PodIP}), "NAME-rw")
	slices.Sort(replicaIPs)
	g.Expect(readyEndpoints(ctx, g, dc.Namespace, dc.ReadOnlyServiceName())).To(Equal(replicaIPs), "NAME-ro")
	if degraded := apimeta.FindStatusCondition(dc.Status.Conditions, conditions.Degraded); degraded != nil {
		g.Expect(degraded.Reason).NotTo(Equal(databasev1alpha1.ReasonSplitBrain), degraded.Message)
	}
	return primary
}

// pgTarget is where a client dials PostgreSQL and the name it verifies the server's certificate
// for (sslmode=verify-full).
type pgTarget struct {
	host, serverName string
}

// readWriteTarget is NAME-rw's ClusterIP, verified as NAME-rw.NS.svc when the cluster's serving
// certificate names it; otherwise as the member name of ordinal 0, which every member's
// certificate (the same one) names through the headless Service's wildcard.
func readWriteTarget(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) pgTarget {
	GinkgoHelper()
	svc := &corev1.Service{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.ReadWriteServiceName()}, svc)).To(Succeed())
	name := dc.ReadWriteServiceName() + "." + dc.Namespace + ".svc"
	leaf := leafCertificate(servingSecret(ctx, dc)[corev1.TLSCertKey])
	if !slices.Contains(leaf.DNSNames, name) {
		GinkgoWriter.Printf("The serving certificate does not name %s (%v): NAME-rw verified as ordinal 0's name\n", name, leaf.DNSNames)
		name = dc.StatefulSetName() + "-0." + dc.HeadlessServiceName() + "." + dc.Namespace + ".svc"
	}
	return pgTarget{host: svc.Spec.ClusterIP, serverName: name}
}

// memberTarget is the member of pod, dialled at its address, verified as its name in the
// headless Service.
func memberTarget(dc *databasev1alpha1.DatabaseCluster, pod corev1.Pod) pgTarget {
	return pgTarget{host: pod.Status.PodIP, serverName: pod.Name + "." + dc.HeadlessServiceName() + "." + dc.Namespace + ".svc"}
}

// pgDial connects to t over TLS, verifying the server against roots under t's name.
func pgDial(ctx context.Context, t pgTarget, user, password string, roots *x509.CertPool) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=5432 user=%s dbname=postgres connect_timeout=5 sslmode=verify-full", t.host, user))
	if err != nil {
		return nil, err
	}
	cfg.Password = password
	cfg.TLSConfig.RootCAs = roots
	cfg.TLSConfig.ServerName = t.serverName
	return pgx.ConnectConfig(ctx, cfg)
}

// pgDialEventually connects to t, retrying for a minute.
func pgDialEventually(ctx context.Context, t pgTarget, user, password string, roots *x509.CertPool) *pgx.Conn {
	GinkgoHelper()
	var conn *pgx.Conn
	Eventually(func(g Gomega) {
		var err error
		conn, err = pgDial(ctx, t, user, password, roots)
		g.Expect(err).NotTo(HaveOccurred())
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed(), "connecting to %s (%s)", t.serverName, t.host)
	return conn
}

// pgMemberState is what a member says of itself: in recovery (a standby), and read-only by
// default (the operator's fence, default_transaction_read_only). It takes writes when neither.
type pgMemberState struct {
	inRecovery, readOnly bool
}

func (s pgMemberState) writable() bool { return !s.inRecovery && !s.readOnly }

func (s pgMemberState) String() string {
	switch {
	case s.inRecovery:
		return "in recovery"
	case s.readOnly:
		return "out of recovery, read-only"
	default:
		return "writable"
	}
}

const pgStateQuery = "SELECT pg_is_in_recovery(), current_setting('default_transaction_read_only') = 'on'"

// queryState reads db's state.
func queryState(ctx context.Context, db *pgx.Conn) (pgMemberState, error) {
	var s pgMemberState
	err := db.QueryRow(ctx, pgStateQuery).Scan(&s.inRecovery, &s.readOnly)
	return s, err
}

// pgState reads db's state; it must answer.
func pgState(ctx context.Context, db *pgx.Conn) pgMemberState {
	GinkgoHelper()
	s, err := queryState(ctx, db)
	Expect(err).NotTo(HaveOccurred())
	return s
}

// memberState connects to pod's member and reads its state, asserting with g.
func memberState(ctx context.Context, g Gomega, dc *databasev1alpha1.DatabaseCluster, pod corev1.Pod, user, password string, roots *x509.CertPool) pgMemberState {
	conn, err := pgDial(ctx, memberTarget(dc, pod), user, password, roots)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = conn.Close(ctx) }()
	s, err := queryState(ctx, conn)
	g.Expect(err).NotTo(HaveOccurred())
	return s
}

// createWriterTable creates the table of the writer run through target.
func createWriterTable(ctx context.Context, target pgTarget, run, user, password string, roots *x509.CertPool) {
	GinkgoHelper()
	db := pgDialEventually(ctx, target, user, password, roots)
	_, err := db.Exec(ctx, "CREATE TABLE "+run+" (id integer PRIMARY KEY)")
	Expect(err).NotTo(HaveOccurred())
	Expect(db.Close(ctx)).To(Succeed())
}

// watchRoles starts the watches of the writable members and of the primaries, and returns the
// first and their stop: it stops both once, prints the members' states as they changed and
// returns what both saw.
func watchRoles(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, user, password string, roots *x509.CertPool) (*writableWatch, func() (writableSeen, primariesSeen)) {
	writable, primaries := watchWritable(ctx, dc, user, password, roots), watchPrimaries(ctx, dc)
	return writable, sync.OnceValues(func() (writableSeen, primariesSeen) {
		watched, seen := writable.stop(), primaries.stop()
		GinkgoWriter.Printf("The members' states, as they changed:\n%s\n", strings.Join(watched.changes, "\n"))
		return watched, seen
	})
}

// streamingReplicas describes the replicas streaming from db's server (pg_stat_replication:
// state, and the WAL sent and replayed), asserting with g. The replicas reach their primary
// through NAME-rw, so the address each comes from is the node's (kube-proxy masquerades a pod
// reaching itself or a neighbour through a Service), which tells none from another.
func streamingReplicas(ctx context.Context, g Gomega, db *pgx.Conn) []string {
	rows, err := db.Query(ctx, `SELECT format('%s, sent %s, replayed %s', state, sent_lsn, replay_lsn)
		FROM pg_stat_replication WHERE state = 'streaming' ORDER BY 1`)
	g.Expect(err).NotTo(HaveOccurred())
	replicas, err := pgx.CollectRows(rows, pgx.RowTo[string])
	g.Expect(err).NotTo(HaveOccurred())
	return replicas
}

// missingWrites are the acknowledged ids that db's table of the writer run does not hold.
func missingWrites(ctx context.Context, g Gomega, db *pgx.Conn, run string, acknowledged []int) []int {
	rows, err := db.Query(ctx, "SELECT id FROM "+run)
	g.Expect(err).NotTo(HaveOccurred())
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	g.Expect(err).NotTo(HaveOccurred())
	held := map[int]bool{}
	for _, id := range ids {
		held[id] = true
	}
	return slices.DeleteFunc(slices.Clone(acknowledged), func(id int) bool { return held[id] })
}

// switchoverDone lists the notes of the operator's SwitchoverDone events about dc since since,
// asserting with g.
func switchoverDone(ctx context.Context, g Gomega, dc *databasev1alpha1.DatabaseCluster, since time.Time) []string {
	var list eventsv1.EventList
	g.Expect(k8s.List(ctx, &list, client.InNamespace(dc.Namespace))).To(Succeed())
	var notes []string
	for _, e := range list.Items {
		if e.Reason == "SwitchoverDone" && e.Regarding.Name == dc.Name && !e.EventTime.Time.Before(since) {
			notes = append(notes, e.Note)
		}
	}
	return notes
}

// postgresWriter is a writer (writer_test.go: its bookkeeping, tally and stop) whose writes are
// PostgreSQL inserts of the ids 0, 1, 2... into the table named as its run, one at a time, each in
// its own transaction within writeTimeout, through one connection to its target (NAME-rw) that
// is made again after an error: a connection kept through the switchover would stay with the
// old primary, which kube-proxy's connection tracking keeps it on. A failed insert is not
// retried: the next takes the next id.
type postgresWriter struct {
	*writer
}

// startPostgresWriter starts inserting into the table run through target.
func startPostgresWriter(ctx context.Context, run string, target pgTarget, user, password string, roots *x509.CertPool) *postgresWriter {
	w := &postgresWriter{writer: &writer{run: run, done: make(chan struct{}), tally: writeTally{Run: run}}}
	var conn *pgx.Conn // the goroutine's own
	w.start(ctx, "id", func(id int) error { return insertOnce(ctx, &conn, target, run, user, password, roots, id) }, func() {
		if conn != nil {
			_ = conn.Close(context.WithoutCancel(ctx))
		}
	})
	return w
}

// insertOnce inserts id into the table run through *conn within writeTimeout, connecting first
// when *conn is nil; after an error the connection is closed and *conn set to nil.
func insertOnce(ctx context.Context, conn **pgx.Conn, target pgTarget, run, user, password string, roots *x509.CertPool, id int) error {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	if *conn == nil {
		c, err := pgDial(ctx, target, user, password, roots)
		if err != nil {
			return err
		}
		*conn = c
	}
	_, err := (*conn).Exec(ctx, "INSERT INTO "+run+" (id) VALUES ($1)", id)
	if err != nil {
		closing, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = (*conn).Close(closing)
		*conn = nil
	}
	return err
}

// acknowledged is how many inserts were acknowledged so far.
func (w *postgresWriter) acknowledged() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.tally.Acknowledged)
}

// writableWatch samples, every rolesSampleEvery until stopped, the cluster's status, its pods'
// role labels and the state of every member, read directly (each member on a connection of its
// own, all at once), and keeps the samples in which two members were writable.
type writableWatch struct {
	done chan struct{}
	wg   sync.WaitGroup

	mu   sync.Mutex
	seen writableSeen
}

// writableSeen is what a writableWatch saw.
type writableSeen struct {
	samples int
	// twoWritable are the samples with two or more writable members.
	twoWritable []string
	// fencedOverlap is how long two members were out of recovery, one of them read-only (the old
	// primary fenced, the new one promoted, until the old one restarts as a standby).
	fencedOverlap time.Duration
	// changes are the samples that differed from the one before.
	changes []string
}

// watchWritable starts a writableWatch of dc's members.
func watchWritable(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, user, password string, roots *x509.CertPool) *writableWatch {
	w := &writableWatch{done: make(chan struct{})}
	key := client.ObjectKeyFromObject(dc)
	selector := dc.SelectorLabels()
	names := dc.DeepCopy() // the spec re-reads dc meanwhile
	began := time.Now()
	w.wg.Go(func() {
		defer GinkgoRecover()
		conns := map[string]*pgx.Conn{} // by pod UID and address
		defer func() {
			for _, c := range conns {
				_ = c.Close(context.WithoutCancel(ctx))
			}
		}()
		last := ""
		for {
			select {
			case <-w.done:
				return
			case <-ctx.Done():
				return
			case <-time.After(rolesSampleEvery):
			}
			var cluster databasev1alpha1.DatabaseCluster
			var pods corev1.PodList
			if k8s.Get(ctx, key, &cluster) != nil || k8s.List(ctx, &pods, client.InNamespace(key.Namespace), client.MatchingLabels(selector)) != nil {
				continue
			}
			states := readStates(ctx, names, pods.Items, conns, user, password, roots)
			at := time.Since(began).Round(time.Millisecond)
			var writable, outOfRecovery, described []string
			for _, p := range pods.Items {
				state := "no answer"
				if s, ok := states[p.Name]; ok {
					state = s.String()
					if s.writable() {
						writable = append(writable, p.Name)
					}
					if !s.inRecovery {
						outOfRecovery = append(outOfRecovery, p.Name)
					}
				}
				described = append(described, fmt.Sprintf("%s(%s) %s, labelled %q", p.Name, string(p.UID)[:8], state, p.Labels[databasev1alpha1.RoleLabel]))
			}
			slices.Sort(described)
			switchover := "none"
			if sw := cluster.Status.Switchover; sw != nil {
				switchover = fmt.Sprintf("%s -> %s (%s)", sw.From, sw.To, sw.Reason)
			}
			sample := fmt.Sprintf("currentPrimary %q, switchover %s; %s", cluster.Status.CurrentPrimary, switchover, strings.Join(described, "; "))
			w.mu.Lock()
			w.seen.samples++
			if len(writable) > 1 {
				w.seen.twoWritable = append(w.seen.twoWritable, fmt.Sprintf("+%s %v", at, writable))
			}
			if len(outOfRecovery) > 1 {
				w.seen.fencedOverlap += rolesSampleEvery
			}
			if sample != last {
				w.seen.changes = append(w.seen.changes, fmt.Sprintf("+%s %s", at, sample))
				last = sample
			}
			w.mu.Unlock()
		}
	})
	return w
}

// readStates reads the state of each pod's member at once, each within pgProbeTimeout, on the
// connections of conns (made when missing, dropped after an error); a member that does not
// answer is left out.
func readStates(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pods []corev1.Pod, conns map[string]*pgx.Conn,
	user, password string, roots *x509.CertPool,
) map[string]pgMemberState {
	type read struct {
		pod  corev1.Pod
		id   string
		conn *pgx.Conn
	}
	var reads []read
	current := map[string]bool{}
	for _, p := range pods {
		if p.Status.PodIP == "" || p.DeletionTimestamp != nil {
			continue
		}
		id := string(p.UID) + "/" + p.Status.PodIP
		current[id] = true
		reads = append(reads, read{pod: p, id: id, conn: conns[id]})
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	states := map[string]pgMemberState{}
	for _, r := range reads {
		p, id, conn := r.pod, r.id, r.conn
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, pgProbeTimeout)
			defer cancel()
			if conn == nil {
				c, err := pgDial(ctx, memberTarget(dc, p), user, password, roots)
				if err != nil {
					return
				}
				conn = c
			}
			s, err := queryState(ctx, conn)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				_ = conn.Close(context.WithoutCancel(ctx))
				conns[id] = nil
				return
			}
			conns[id] = conn
			states[p.Name] = s
		})
	}
	wg.Wait()
	for id, c := range maps.Clone(conns) {
		if c == nil || !current[id] {
			if c != nil {
				_ = c.Close(context.WithoutCancel(ctx))
			}
			delete(conns, id)
		}
	}
	return states
}

// current is what the watch has seen so far.
func (w *writableWatch) current() writableSeen {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen
}

// stop ends the watch and returns what it saw.
func (w *writableWatch) stop() writableSeen {
	close(w.done)
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen
}

// logLines are the lines of the log of member's database container that contain any of words.
func logLines(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, member string, words ...string) []string {
	GinkgoHelper()
	log, err := clientset.CoreV1().Pods(dc.Namespace).GetLogs(member, &corev1.PodLogOptions{Container: "database", Timestamps: true}).DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred(), "log of %s", member)
	var lines []string
	for line := range strings.Lines(string(log)) {
		if slices.ContainsFunc(words, func(w string) bool { return strings.Contains(line, w) }) {
			lines = append(lines, strings.TrimRight(line, "\n"))
		}
	}
	return lines
}

// replicationWords pick the lines of a standby's log about its primary: where it streams from,
// on which timeline, and why it stopped.
var replicationWords = []string{"timeline", "streaming", "replication terminated", "primary server", "End of WAL", "FATAL"}

// describeMembers writes what each member says of itself to GinkgoWriter: its pod's
// announcements, role label and containers' states, the database container's log (PostgreSQL's
// entrypoint and server, or etcd; with the previous run's after a restart), the agent's, and the
// namespace's events with the cluster's status.
func describeMembers(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) {
	var cluster databasev1alpha1.DatabaseCluster
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(dc), &cluster); err == nil {
		GinkgoWriter.Printf("--- status of %s/%s: %+v\n", dc.Namespace, dc.Name, cluster.Status)
	}
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(dc.Namespace), client.MatchingLabels(dc.SelectorLabels())); err != nil {
		GinkgoWriter.Printf("listing the pods of %s: %v\n", dc.Namespace, err)
		return
	}
	for _, p := range pods.Items {
		announced := maps.Clone(p.Annotations)
		maps.DeleteFunc(announced, func(k, _ string) bool { return !strings.HasPrefix(k, "database.seed1b407122.io/") })
		GinkgoWriter.Printf("--- pod %s (%s, IP %s, role label %q): annotations %v\n", p.Name, p.UID, p.Status.PodIP, p.Labels[databasev1alpha1.RoleLabel], announced)
		for _, st := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
			GinkgoWriter.Printf("    container %s: ready %t, restarts %d, state %+v, last %+v\n", st.Name, st.Ready, st.RestartCount, st.State, st.LastTerminationState)
		}
		for _, c := range []struct {
			name     string
			previous bool
		}{{"database", true}, {"database", false}, {databasev1alpha1.StorageAgentContainerName, false}} {
			log, err := clientset.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{
				Container: c.name, Previous: c.previous, Timestamps: true,
			}).DoRaw(ctx)
			if c.previous && err != nil {
				continue // no previous run
			}
			GinkgoWriter.Printf("--- log of %s/%s (previous %t, %v):\n%s\n", p.Name, c.name, c.previous, err, headAndTail(string(log), logLinesShown))
		}
	}
	var events eventsv1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(dc.Namespace)); err != nil {
		return
	}
	slices.SortFunc(events.Items, func(a, b eventsv1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	GinkgoWriter.Printf("--- events of %s:\n", dc.Namespace)
	for _, e := range events.Items {
		GinkgoWriter.Printf("%s %s/%s %s %s: %s\n", eventTime(e).Format(time.RFC3339Nano), e.Regarding.Kind, e.Regarding.Name, e.Type, e.Reason, e.Note)
	}
}

// logLinesShown is how many lines of a log's beginning, and as many of its end, a failed spec
// shows: the entrypoint's account of the start, and what the server did last.
const logLinesShown = 100

// headAndTail is the first and the last n lines of log, with the number of lines left out.
func headAndTail(log string, n int) string {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	if len(lines) <= 2*n {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n[... %d lines ...]\n", len(lines)-2*n) + strings.Join(lines[len(lines)-n:], "\n")
}

// eventTime is when e happened: its eventTime, or for an event of the core API its last timestamp.
func eventTime(e eventsv1.Event) time.Time {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.DeprecatedLastTimestamp.IsZero():
		return e.DeprecatedLastTimestamp.Time
	default:
		return e.CreationTimestamp.Time
	}
}
