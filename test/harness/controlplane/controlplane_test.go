//go:build e2e

package controlplane_test

import (
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/test/harness/controlplane"
	"github.com/seed1b407122/database-operator/test/harness/csisim"
	"github.com/seed1b407122/database-operator/test/harness/proc"
)

const namespace = "e2e-localcluster"

// TestLocalCluster runs a StatefulSet with claims, a volume expansion, a Job, and a snapshot
// and restore of a claim on a fresh cluster, then checks that Stop leaves no process and no port
// behind.
// Run: KUBEBUILDER_ASSETS=<bin dir> SNAPSHOT_ENV_DIR=<snapshot dir> go test -tags e2e ./test/harness/controlplane/ -v -count=1
func TestLocalCluster(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	if os.Getenv(controlplane.SnapshotDirEnv) == "" {
		t.Fatalf("%s is empty: this test runs the snapshot parts too (make snapshot-env builds them)", controlplane.SnapshotDirEnv)
	}

	began := time.Now()
	cluster, err := controlplane.Start(ctx, controlplane.Options{
		Nodes: 3, Log: testLog{t},
		APIServerArgs: []string{"--service-cluster-ip-range=10.96.0.0/16"},
		SchedulerArgs: []string{"--kube-api-qps=1000", "--kube-api-burst=2000"},
	})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = cluster.Stop() })
	t.Logf("cluster start: %s", time.Since(began).Round(time.Millisecond))
	c := cluster.Client()
	expectComponentFlags(ctx, t, g, c)

	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(Succeed())

	began = time.Now()
	g.Expect(c.Create(ctx, newStatefulSet("db", 3))).To(Succeed())
	g.Eventually(func(g Gomega) {
		var sts appsv1.StatefulSet
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "db"}, &sts)).To(Succeed())
		g.Expect(sts.Status.ReadyReplicas).To(Equal(int32(3)))
		var claims corev1.PersistentVolumeClaimList
		g.Expect(c.List(ctx, &claims, client.InNamespace(namespace))).To(Succeed())
		g.Expect(claims.Items).To(HaveLen(3))
		for _, claim := range claims.Items {
			g.Expect(claim.Status.Phase).To(Equal(corev1.ClaimBound), claim.Name)
		}
	}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
	t.Logf("StatefulSet ready (3 pods Ready, 3 claims Bound): %s", time.Since(began).Round(time.Millisecond))

	began = time.Now()
	expandClaim(ctx, g, c, "data-db-0", "2Gi")
	t.Logf("claim expanded to 2Gi: %s", time.Since(began).Round(time.Millisecond))

	began = time.Now()
	g.Expect(c.Create(ctx, newJob("once"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		var job batchv1.Job
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "once"}, &job)).To(Succeed())
		g.Expect(job.Status.Succeeded).To(Equal(int32(1)))
		g.Expect(job.Status.Conditions).To(ContainElement(And(
			HaveField("Type", batchv1.JobComplete), HaveField("Status", corev1.ConditionTrue))))
	}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
	t.Logf("Job succeeded: %s", time.Since(began).Round(time.Millisecond))

	snapshotAndRestore(ctx, t, g, cluster)

	began = time.Now()
	deleteStatefulSetAndClaims(ctx, g, c, "db")
	t.Logf("StatefulSet, pods, claims and volumes deleted: %s", time.Since(began).Round(time.Millisecond))

	children := childPIDs(t)
	g.Expect(children).To(HaveLen(6), "kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kwok, snapshot-controller")
	apiServer, err := url.Parse(cluster.Config.Host)
	g.Expect(err).NotTo(HaveOccurred())

	began = time.Now()
	g.Expect(cluster.Stop()).To(Succeed())
	t.Logf("teardown: %s", time.Since(began).Round(time.Millisecond))
	g.Expect(cluster.Stop()).To(Succeed(), "Stop is idempotent")
	for _, pid := range children {
		g.Expect(syscall.Kill(pid, 0)).To(MatchError(syscall.ESRCH), "process %d still exists", pid)
	}
	_, err = net.DialTimeout("tcp", apiServer.Host, time.Second)
	g.Expect(err).To(HaveOccurred(), "the API server port still accepts connections")
	_, err = os.Stat(cluster.WorkDir)
	g.Expect(os.IsNotExist(err)).To(BeTrue(), "the temporary work directory is removed")
}

// expectComponentFlags checks that Options.APIServerArgs and SchedulerArgs reached the
// components: the kubernetes Service takes the first address of the service range given
// (envtest's own range is 10.0.0.0/24), and kube-scheduler's command line ends with its flags.
func expectComponentFlags(ctx context.Context, t *testing.T, g *WithT, c client.Client) {
	var svc corev1.Service
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceDefault, Name: "kubernetes"}, &svc)).To(Succeed())
	g.Expect(svc.Spec.ClusterIP).To(Equal("10.96.0.1"))
	var cmdline []string
	for _, pid := range childPIDs(t) {
		exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
		if err != nil || filepath.Base(exe) != "kube-scheduler" {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		g.Expect(err).NotTo(HaveOccurred())
		cmdline = strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
	}
	g.Expect(len(cmdline)).To(BeNumerically(">", 2), "kube-scheduler's command line: %q", cmdline)
	g.Expect(cmdline[len(cmdline)-2:]).To(Equal([]string{"--kube-api-qps=1000", "--kube-api-burst=2000"}))
}

// expandClaim raises a claim's request and waits until its status reports the new size.
func expandClaim(ctx context.Context, g *WithT, c client.Client, name, size string) {
	var claim corev1.PersistentVolumeClaim
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &claim)).To(Succeed())
	patch := client.MergeFrom(claim.DeepCopy())
	claim.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse(size)
	g.Expect(c.Patch(ctx, &claim, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(&claim), &claim)).To(Succeed())
		got := claim.Status.Capacity[corev1.ResourceStorage]
		g.Expect(got.Cmp(resource.MustParse(size))).To(BeZero(), "claim capacity %s", got.String())
		var pv corev1.PersistentVolume
		g.Expect(c.Get(ctx, client.ObjectKey{Name: claim.Spec.VolumeName}, &pv)).To(Succeed())
		got = pv.Spec.Capacity[corev1.ResourceStorage]
		g.Expect(got.Cmp(resource.MustParse(size))).To(BeZero(), "volume capacity %s", got.String())
	}).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
}

// deleteStatefulSetAndClaims deletes a StatefulSet and its claims, and waits until the
// garbage collector and kwok have removed the pods and the simulated CSI driver the volumes.
func deleteStatefulSetAndClaims(ctx context.Context, g *WithT, c client.Client, name string) {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	g.Expect(c.Delete(ctx, sts, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	g.Expect(c.DeleteAllOf(ctx, &corev1.PersistentVolumeClaim{}, client.InNamespace(namespace))).To(Succeed())
	g.Eventually(func(g Gomega) {
		var pods corev1.PodList
		g.Expect(c.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{"app.kubernetes.io/name": name})).To(Succeed())
		g.Expect(pods.Items).To(BeEmpty())
		var claims corev1.PersistentVolumeClaimList
		g.Expect(c.List(ctx, &claims, client.InNamespace(namespace))).To(Succeed())
		g.Expect(claims.Items).To(BeEmpty())
		var volumes corev1.PersistentVolumeList
		g.Expect(c.List(ctx, &volumes)).To(Succeed())
		g.Expect(volumes.Items).To(BeEmpty())
	}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
}

// newStatefulSet returns a StatefulSet whose pods each claim 1Gi of the "standard" class.
func newStatefulSet(name string, replicas int32) *appsv1.StatefulSet {
	labels := map[string]string{"app.kubernetes.io/name": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(replicas),
			ServiceName:         name,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "db", Image: "registry.example/db:1",
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/db"}},
				}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: ptr.To(csisim.StorageClassName),
					Resources: corev1.VolumeResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
					},
				},
			}},
		},
	}
}

// newJob returns a Job with one pod, which kwok's pod-complete stage makes succeed.
func newJob(name string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "job", Image: "registry.example/job:1"}},
		}}},
	}
}

// childPIDs lists the processes whose parent is this test binary.
func childPIDs(t *testing.T) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatalf("listing processes: %v", err)
	}
	var pids []int
	for _, path := range stats {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if err != nil {
			continue
		}
		if st, err := proc.ReadStat(pid); err == nil && st.PPID == os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// testLog sends the cluster's progress lines to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
