//go:build linux && node

package nodee2e

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/api/conditions"
	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/roles"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

const (
	// pgKillRun and pgFreezeRun name the writers of the two faults and their tables.
	pgKillRun   = "killed"
	pgFreezeRun = "frozen"
	// pgRecoverBound is how long a killed or thawed primary may take to take writes again.
	pgRecoverBound = 2 * time.Minute
	// pgFailoverAfter is the failover delay the frozen-primary spec sets (the API's minimum).
	pgFailoverAfter = 10
)

// pgFault is one fault done to the primary of dc under a writer of its own table: the primary,
// its pod before the fault, and the writer with the watches of the writable members and the
// primaries.
type pgFault struct {
	dc          *databasev1alpha1.DatabaseCluster
	primary     string
	pod         corev1.Pod
	writer      *postgresWriter
	stopWriter  func() writeTally
	stopWatches func() (writableSeen, primariesSeen)
}

// startPgFault starts a writer of the table run through NAME-rw and the watches, and lets the
// writer go on alone for 2 s, so that a gap at the fault is the cluster's.
func startPgFault(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, run, user, password string, roots *x509.CertPool) *pgFault {
	GinkgoHelper()
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
	f := &pgFault{dc: dc, primary: dc.Status.CurrentPrimary}
	Expect(f.primary).NotTo(BeEmpty())
	f.pod = podsOf(ctx, dc)[f.primary]
	rw := readWriteTarget(ctx, dc)
	createWriterTable(ctx, rw, run, user, password, roots)
	_, f.stopWatches = watchRoles(ctx, dc, user, password, roots)
	f.writer = startPostgresWriter(ctx, run, rw, user, password, roots)
	f.stopWriter = sync.OnceValue(f.writer.stop)
	Expect(pause(ctx, 2*time.Second)).To(Succeed())
	return f
}

// stop stops the writer and the watches (again, once, if a spec failed before).
func (f *pgFault) stop() {
	f.stopWriter()
	f.stopWatches()
}

// expectSamePrimaryWriting waits until the primary of before the fault is Ready again in the
// same pod, published alone, with both replicas streaming from it, and a write was acknowledged
// after acked.
func (f *pgFault) expectSamePrimaryWriting(ctx context.Context, acked int, user, password string, roots *x509.CertPool) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		pods := podsOf(ctx, f.dc)
		p := pods[f.primary]
		g.Expect(p.UID).To(Equal(f.pod.UID), "the pod of %s was replaced", f.primary)
		g.Expect(isReady(&p)).To(BeTrue(), "%s is not Ready", f.primary)
		g.Expect(expectPostgresRolesPublished(ctx, g, f.dc)).To(Equal(f.primary))
		conn, err := pgDial(ctx, memberTarget(f.dc, p), user, password, roots)
		g.Expect(err).NotTo(HaveOccurred())
		defer func() { _ = conn.Close(ctx) }()
		g.Expect(streamingReplicas(ctx, g, conn)).To(HaveLen(pgMembers-1), "the replicas streaming from %s", f.primary)
		g.Expect(f.writer.acknowledged()).To(BeNumerically(">", acked), "no write acknowledged since the fault")
	}).WithContext(ctx).WithTimeout(pgRecoverBound).WithPolling(time.Second).Should(Succeed(),
		"%s did not take writes again within %s", f.primary, pgRecoverBound)
}

// finish stops the writer and the watches and checks what they saw: every acknowledged write
// on the primary, never two writable members, never two pods labelled primary or two Ready
// addresses in NAME-rw. The tally is reported under what.
func (f *pgFault) finish(ctx context.Context, what, run, user, password string, roots *x509.CertPool) {
	GinkgoHelper()
	Expect(pause(ctx, 2*time.Second)).To(Succeed())
	tally := f.stopWriter()
	watched, seen := f.stopWatches()
	reportCount("PostgreSQL roles: writes acknowledged ("+what+")", len(tally.Acknowledged))
	reportCount("PostgreSQL roles: writes failed ("+what+")", tally.Failed)
	report("PostgreSQL roles: longest time between two acknowledged writes ("+what+")", tally.LongestGap)
	conn := pgDialEventually(ctx, memberTarget(f.dc, podsOf(ctx, f.dc)[f.primary]), user, password, roots)
	defer func() { _ = conn.Close(ctx) }()
	lost := missingWrites(ctx, Default, conn, run, tally.Acknowledged)
	reportCount("PostgreSQL roles: acknowledged writes lost ("+what+")", len(lost))
	Expect(lost).To(BeEmpty(), "acknowledged writes the primary %s does not hold", f.primary)
	Expect(watched.samples).To(BeNumerically(">", 10))
	Expect(watched.twoWritable).To(BeEmpty(), "two members writable at once (out of recovery, not read-only)")
	Expect(seen.twoLabelled).To(BeEmpty(), "two pods labelled primary at once")
	Expect(seen.twoReady).To(BeEmpty(), "two Ready addresses in NAME-rw's endpoints at once")
}

// databaseStatus is the status of pod's database container.
func databaseStatus(pod *corev1.Pod) corev1.ContainerStatus {
	GinkgoHelper()
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == specs.ContainerName {
			return s
		}
	}
	Fail(fmt.Sprintf("pod %s has no container %s", pod.Name, specs.ContainerName))
	return corev1.ContainerStatus{}
}

// databasePID is the host PID of the first process (the entrypoint) of pod's database container.
func databasePID(ctx context.Context, pod *corev1.Pod) int {
	GinkgoHelper()
	pid, err := node.ContainerPID(ctx, databaseStatus(pod).ContainerID)
	Expect(err).NotTo(HaveOccurred())
	return pid
}

// freezerFile is the cgroup file that freezes the processes of pid's cgroup, with the values
// that freeze and thaw it: cgroup v1's freezer.state (FROZEN, THAWED) where the freezer
// controller is mounted, else v2's cgroup.freeze (1, 0).
func freezerFile(pid int) (path, frozen, thawed string, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", "", "", err
	}
	var unified string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, controller := range strings.Split(parts[1], ",") {
			if controller == "freezer" {
				return filepath.Join("/sys/fs/cgroup/freezer", parts[2], "freezer.state"), "FROZEN", "THAWED", nil
			}
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
		}
	}
	if unified == "" {
		return "", "", "", errors.New("no freezer cgroup")
	}
	return filepath.Join("/sys/fs/cgroup", unified, "cgroup.freeze"), "1", "0", nil
}

// freezeContainer freezes every process of the cgroup of pid (a container), as SIGSTOP would
// each of them at once, and returns the thaw, which thaws it once (call it also when the spec
// fails, so that the node's teardown can stop the container).
func freezeContainer(pid int) func() {
	GinkgoHelper()
	path, frozen, thawed, err := freezerFile(pid)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(path, []byte(frozen), 0o644)).To(Succeed())
	if frozen == "FROZEN" { // v1 reports FREEZING until every task is stopped
		Eventually(func() (string, error) {
			state, err := os.ReadFile(path)
			return strings.TrimSpace(string(state)), err
		}).WithTimeout(10 * time.Second).Should(Equal(frozen))
	}
	GinkgoWriter.Printf("Froze the processes of %s\n", path)
	return sync.OnceFunc(func() {
		if err := os.WriteFile(path, []byte(thawed), 0o644); err != nil {
			GinkgoWriter.Printf("Thawing %s: %v\n", path, err)
		}
	})
}

// awaitFailoverRecorded waits until dc's status records a failover from primary, and returns it.
func awaitFailoverRecorded(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, primary string) databasev1alpha1.SwitchoverStatus {
	GinkgoHelper()
	var sw databasev1alpha1.SwitchoverStatus
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		g.Expect(dc.Status.Switchover).NotTo(BeNil(), "status.switchover")
		sw = *dc.Status.Switchover
	}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
	Expect([]string{sw.From, sw.Reason}).To(Equal([]string{primary, string(roles.SwitchFailover)}))
	Expect(sw.To).NotTo(Equal(primary))
	return sw
}

// awaitFencedUntilGone waits until pod, the frozen primary's, is deleted and gone, and checks on
// every look until then that nothing was promoted: the status still names its member the
// primary, target's pod is not labelled primary and no other pod is.
func awaitFencedUntilGone(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod corev1.Pod, target string) {
	GinkgoHelper()
	looks := 0
	Eventually(func(g Gomega) {
		pods := podsOf(ctx, dc)
		if p, ok := pods[pod.Name]; ok && p.UID == pod.UID {
			looks++
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			Expect(dc.Status.CurrentPrimary).To(Equal(pod.Name), "promoted while the old primary's pod is still there")
			for name, other := range pods {
				if name != pod.Name {
					Expect(other.Labels[databasev1alpha1.RoleLabel]).NotTo(Equal(string(databasev1alpha1.MemberRolePrimary)), name)
				}
			}
			g.Expect(p.UID).NotTo(Equal(pod.UID), "the pod of %s is still there (deleted: %t)", pod.Name, p.DeletionTimestamp != nil)
		}
	}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
	reportCount("PostgreSQL roles: looks at the frozen primary's pod before it was gone, nothing promoted", looks)
	Expect(looks).To(BeNumerically(">", 10))
	Expect(target).NotTo(Equal(pod.Name))
}

// degradedReason is dc's Degraded reason when it is True, "" otherwise.
func degradedReason(ctx context.Context, g Gomega, dc *databasev1alpha1.DatabaseCluster) string {
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
	if c := apimeta.FindStatusCondition(dc.Status.Conditions, conditions.Degraded); c != nil && c.Status == "True" {
		return c.Reason
	}
	return ""
}

// postgresFaultSpecs are the replicated PostgreSQL story's faults of the primary under a writer,
// on the cluster *dc with the credentials and CA the story read: its database container killed,
// then frozen with failover on.
func postgresFaultSpecs(dc **databasev1alpha1.DatabaseCluster, username, password *string, roots **x509.CertPool) {
	It("recovers in place when the primary's database container is killed (SIGKILL) under a writer: the same primary in the same pod, no failover (off), never two writable, no acknowledged write lost", func(ctx SpecContext) {
		f := startPgFault(ctx, *dc, pgKillRun, *username, *password, *roots)
		defer f.stop()
		restarts := databaseStatus(&f.pod).RestartCount
		acked := f.writer.acknowledged()
		killed := time.Now()
		Expect(syscall.Kill(databasePID(ctx, &f.pod), syscall.SIGKILL)).To(Succeed())
		GinkgoWriter.Printf("Killed the database container of the primary %s (SIGKILL)\n", f.primary)
		f.expectSamePrimaryWriting(ctx, acked, *username, *password, *roots)
		report("PostgreSQL roles: the primary's database container killed (SIGKILL) -> the same primary Ready, published, taking writes", time.Since(killed))
		p := podsOf(ctx, *dc)[f.primary]
		Expect(databaseStatus(&p).RestartCount).To(BeNumerically(">", restarts), "the container did not restart")
		f.finish(ctx, "primary killed", pgKillRun, *username, *password, *roots)
	}, NodeTimeout(5*time.Minute))

	It("fails over from a frozen primary (its database container's processes stopped, failover on after 10 s): not Ready, its pod deleted to fence it, nothing promoted until the kubelet has stopped it, then the most advanced replica; never two writable, no acknowledged write lost, the old primary back as a replica", func(ctx SpecContext) {
		update(ctx, *dc, func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.Roles.Failover = &databasev1alpha1.FailoverSpec{Enabled: true, AfterSeconds: ptr.To[int32](pgFailoverAfter)}
		})
		f := startPgFault(ctx, *dc, pgFreezeRun, *username, *password, *roots)
		defer f.stop()
		acked := f.writer.acknowledged()
		thaw := freezeContainer(databasePID(ctx, &f.pod))
		defer thaw() // a no-op once the kubelet has stopped the container
		frozen := time.Now()

		sw := awaitFailoverRecorded(ctx, *dc, f.primary)
		report("PostgreSQL roles: the primary frozen (failover on, after 10 s) -> the failover recorded", time.Since(frozen))
		GinkgoWriter.Printf("Failing over from %s to %s\n", sw.From, sw.To)
		awaitFencedUntilGone(ctx, *dc, f.pod, sw.To)
		report("PostgreSQL roles: the primary frozen -> its pod deleted to fence it and gone (the kubelet stopped it; nothing promoted before)", time.Since(frozen))

		// The target promoted: the only primary, published, taking writes.
		f.primary = sw.To
		Eventually(func(g Gomega) {
			g.Expect(expectPostgresRolesPublished(ctx, g, *dc)).To(Equal(sw.To))
			g.Expect(f.writer.acknowledged()).To(BeNumerically(">", acked), "no write acknowledged since the freeze")
		}).WithContext(ctx).WithTimeout(pgRecoverBound).WithPolling(250 * time.Millisecond).Should(Succeed())
		report("PostgreSQL roles: the primary frozen -> the most advanced replica promoted, published, taking writes", time.Since(frozen))

		// The old primary back, a replica of the new one: rewound, or cloned again.
		Eventually(func(g Gomega) {
			pods := podsOf(ctx, *dc)
			old := pods[f.pod.Name]
			g.Expect(old.UID).NotTo(Equal(f.pod.UID))
			g.Expect(isReady(&old)).To(BeTrue(), "%s is not Ready", old.Name)
			g.Expect(old.Labels[databasev1alpha1.RoleLabel]).To(Equal(string(databasev1alpha1.MemberRoleReplica)))
			conn, err := pgDial(ctx, memberTarget(*dc, pods[sw.To]), *username, *password, *roots)
			g.Expect(err).NotTo(HaveOccurred())
			defer func() { _ = conn.Close(ctx) }()
			g.Expect(streamingReplicas(ctx, g, conn)).To(HaveLen(pgMembers-1), "the replicas streaming from %s", sw.To)
		}).WithContext(ctx).WithTimeout(pgRecoverBound).WithPolling(time.Second).Should(Succeed())
		report("PostgreSQL roles: the primary frozen -> the old primary back, a replica streaming from the new one", time.Since(frozen))
		Eventually(func(g Gomega) string { return degradedReason(ctx, g, *dc) }).WithContext(ctx).WithTimeout(time.Minute).Should(BeEmpty())
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(*dc), *dc)).To(Succeed())
		Expect((*dc).Status.Switchover).To(BeNil(), "status.switchover")
		events := roleEvents(ctx, *dc, frozen, "Fenced", "Promoted", "SwitchoverDone")
		GinkgoWriter.Printf("The operator's events:\n%s\n", strings.Join(events, "\n"))
		Expect(events).To(HaveExactElements(
			MatchRegexp(`^\+\S+ Warning Fenced: Deleted pod %s to fence it: `, f.pod.Name),
			MatchRegexp(`^\+\S+ Normal Promoted: Promoted %s( \(x\d+\))?$`, sw.To),
			MatchRegexp(`^\+\S+ Normal SwitchoverDone: %s is the only primary \(from %s, Failover\)$`, sw.To, f.pod.Name)))
		f.finish(ctx, "primary frozen, failed over", pgFreezeRun, *username, *password, *roots)
	}, NodeTimeout(6*time.Minute))
}
