//go:build e2e

package csisim_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapclient "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/seed1b407122/database-operator/test/harness/csisim"
)

const (
	namespace    = "csisim"
	sourceVolume = "pvc-source"
	// The finalizer and annotation of external-snapshotter's snapshot-controller, which no
	// snapshot-controller sets here: the tests play its part.
	contentFinalizer = "snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection"
	annBeingDeleted  = "snapshot.storage.kubernetes.io/volumesnapshot-being-deleted"
)

// env is a kube-apiserver and etcd with the VolumeSnapshot CRDs, and the simulated CSI driver
// running against them. No snapshot-controller runs: each test writes what it would.
type env struct {
	kube  kubernetes.Interface
	snaps snapclient.Interface
}

// startEnv starts envtest (KUBEBUILDER_ASSETS) with the CRDs of $SNAPSHOT_ENV_DIR/crds, the
// default StorageClass, a 3Gi source volume of the driver and the driver itself.
func startEnv(t *testing.T) *env {
	t.Helper()
	return startEnvIn(t, "")
}

// startEnvIn is startEnv with the driver in directory mode when localDir is set.
func startEnvIn(t *testing.T, localDir string) *env {
	t.Helper()
	g := NewWithT(t)
	dir := os.Getenv("SNAPSHOT_ENV_DIR")
	if dir == "" {
		t.Fatal("SNAPSHOT_ENV_DIR is empty: set it to the directory make snapshot-env builds")
	}
	te := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join(dir, "crds")}, ErrorIfCRDPathMissing: true}
	cfg, err := te.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = te.Stop() })
	e := &env{}
	e.kube, err = kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	e.snaps, err = snapclient.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())

	ctx := t.Context()
	_, err = e.kube.StorageV1().StorageClasses().Create(ctx, csisim.BuildStorageClass(), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = e.kube.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: sourceVolume},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("3Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: csisim.ProvisionerName, VolumeHandle: sourceVolume,
			}},
		},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	runCtx, cancel := context.WithCancel(context.Background())
	done, err := csisim.Start(runCtx, csisim.Config{Client: e.kube, Snapshots: e.snaps, LocalDir: localDir, Logf: t.Logf})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { cancel(); <-done })
	return e
}

// newContent returns a dynamic VolumeSnapshotContent of a volume, as the snapshot-controller
// creates it for VolumeSnapshot <namespace>/<snapshot> (UID uid).
func newContent(name, driver, volumeHandle, snapshot string, uid string, finalizers ...string) *snapv1.VolumeSnapshotContent {
	return &snapv1.VolumeSnapshotContent{
		ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers},
		Spec: snapv1.VolumeSnapshotContentSpec{
			VolumeSnapshotRef:       corev1.ObjectReference{Namespace: namespace, Name: snapshot, UID: types.UID(uid)},
			DeletionPolicy:          snapv1.VolumeSnapshotContentDelete,
			Driver:                  driver,
			VolumeSnapshotClassName: ptr.To(csisim.SnapshotClassName),
			Source:                  snapv1.VolumeSnapshotContentSource{VolumeHandle: ptr.To(volumeHandle)},
		},
	}
}

// createSnapshot creates the VolumeSnapshot name of source in the test namespace, as a user
// would.
func createSnapshot(ctx context.Context, t *testing.T, e *env, name string, source snapv1.VolumeSnapshotSource) *snapv1.VolumeSnapshot {
	t.Helper()
	snap, err := e.snaps.SnapshotV1().VolumeSnapshots(namespace).Create(ctx, &snapv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       snapv1.VolumeSnapshotSpec{Source: source},
	}, metav1.CreateOptions{})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return snap
}

// markSnapshotReady plays the snapshot-controller's part once content is ready to use: it writes
// the status of snap as bound to content, ready to use, and restoring 3Gi (the source volume's
// size).
func markSnapshotReady(ctx context.Context, t *testing.T, e *env, snap *snapv1.VolumeSnapshot, content string) {
	t.Helper()
	snap.Status = &snapv1.VolumeSnapshotStatus{
		BoundVolumeSnapshotContentName: ptr.To(content),
		ReadyToUse:                     ptr.To(true),
		RestoreSize:                    ptr.To(resource.MustParse("3Gi")),
	}
	_, err := e.snaps.SnapshotV1().VolumeSnapshots(snap.Namespace).UpdateStatus(ctx, snap, metav1.UpdateOptions{})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
}

// expectContentFailed expects the status of content to report message as its error, with no
// snapshot handle and not ready to use: what the sidecar writes for a snapshot it cannot cut or
// find.
func expectContentFailed(g Gomega, content *snapv1.VolumeSnapshotContent, message string) {
	g.Expect(content.Status).NotTo(BeNil())
	g.Expect(content.Status.ReadyToUse).To(HaveValue(BeFalse()))
	g.Expect(content.Status.SnapshotHandle).To(BeNil())
	g.Expect(content.Status.Error).NotTo(BeNil())
	g.Expect(content.Status.Error.Message).To(HaveValue(Equal(message)))
}

// TestSnapshots drives the driver's snapshot part as the snapshot-controller would: cutting,
// failing, ignoring another driver, deleting, and provisioning claims from a snapshot.
// Run: KUBEBUILDER_ASSETS=<bin dir> SNAPSHOT_ENV_DIR=<snapshot dir> go test -tags e2e ./test/harness/csisim/ -v -count=1
func TestSnapshots(t *testing.T) {
	e := startEnv(t)
	contents := e.snaps.SnapshotV1().VolumeSnapshotContents()

	t.Run("cuts the snapshot of a content of its driver", func(t *testing.T) {
		g := NewWithT(t)
		ctx := t.Context()
		before := time.Now()
		created, err := contents.Create(ctx, newContent("content-cut", csisim.ProvisionerName, sourceVolume, "cut", "uid-cut"), metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		var content *snapv1.VolumeSnapshotContent
		g.Eventually(func(g Gomega) {
			content, err = contents.Get(ctx, created.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(content.Status).NotTo(BeNil())
		}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
		g.Expect(content.Status.SnapshotHandle).To(HaveValue(Equal("snap-" + string(created.UID))))
		g.Expect(content.Status.ReadyToUse).To(HaveValue(BeTrue()))
		g.Expect(content.Status.RestoreSize).To(HaveValue(Equal(int64(3 << 30))))
		g.Expect(content.Status.Error).To(BeNil())
		g.Expect(content.Status.CreationTime).To(HaveValue(And(
			BeNumerically(">=", before.UnixNano()), BeNumerically("<=", time.Now().UnixNano()))))
	})

	t.Run("reports a source volume that is not its own in the status error", func(t *testing.T) {
		g := NewWithT(t)
		ctx := t.Context()
		_, err := contents.Create(ctx, newContent("content-missing", csisim.ProvisionerName, "pvc-missing", "missing", "uid-missing"), metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Eventually(func(g Gomega) {
			content, err := contents.Get(ctx, "content-missing", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			expectContentFailed(g, content, "Failed to create snapshot: failed to take snapshot of the volume pvc-missing: "+
				"volume pvc-missing of driver simulated-csi.localcluster.test not found")
		}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	})

	t.Run("leaves the contents of another driver alone", func(t *testing.T) {
		g := NewWithT(t)
		ctx := t.Context()
		_, err := contents.Create(ctx, newContent("content-other", "other.csi.test", sourceVolume, "other", "uid-other"), metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Consistently(func(g Gomega) {
			content, err := contents.Get(ctx, "content-other", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(content.Status).To(BeNil())
		}).WithTimeout(2 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
	})

	t.Run("deletes a snapshot the snapshot-controller marked, and releases its content", func(t *testing.T) {
		g := NewWithT(t)
		ctx := t.Context()
		for _, name := range []string{"content-delete", "content-unmarked"} {
			_, err := contents.Create(ctx, newContent(name, csisim.ProvisionerName, sourceVolume, name, "uid-"+name, contentFinalizer), metav1.CreateOptions{})
			g.Expect(err).NotTo(HaveOccurred())
		}
		g.Eventually(func(g Gomega) {
			for _, name := range []string{"content-delete", "content-unmarked"} {
				content, err := contents.Get(ctx, name, metav1.GetOptions{})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(content.Status).NotTo(BeNil())
				g.Expect(content.Status.ReadyToUse).To(HaveValue(BeTrue()))
			}
		}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())

		// The snapshot-controller annotates a content before it deletes it (deletion policy
		// Delete); without the annotation the sidecar keeps the finalizer.
		marked, err := contents.Get(ctx, "content-delete", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		metav1.SetMetaDataAnnotation(&marked.ObjectMeta, annBeingDeleted, "yes")
		_, err = contents.Update(ctx, marked, metav1.UpdateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		for _, name := range []string{"content-delete", "content-unmarked"} {
			g.Expect(contents.Delete(ctx, name, metav1.DeleteOptions{})).To(Succeed())
		}
		g.Eventually(func(g Gomega) {
			_, err := contents.Get(ctx, "content-delete", metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "content-delete: %v", err)
		}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
		g.Consistently(func(g Gomega) {
			content, err := contents.Get(ctx, "content-unmarked", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(content.Finalizers).To(Equal([]string{contentFinalizer}))
			g.Expect(content.Status.SnapshotHandle).NotTo(BeNil())
		}).WithTimeout(2 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
		unmarked, err := contents.Get(ctx, "content-unmarked", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		unmarked.Finalizers = nil
		_, err = contents.Update(ctx, unmarked, metav1.UpdateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
	})

	t.Run("provisions a claim from a VolumeSnapshot once it is ready, at least its size", func(t *testing.T) {
		testRestore(t, e)
	})

	t.Run("readies a pre-provisioned content on a known handle and restores a claim from it", func(t *testing.T) {
		testPreprovisioned(t, e)
	})
}

// testRestore: claims from a snapshot stay Pending with the provisioner's event while the
// snapshot is missing, then not ready; once ready each gets a volume of max(request, restore
// size) naming the snapshot.
func testRestore(t *testing.T, e *env) {
	g := NewWithT(t)
	ctx := t.Context()
	claims := e.kube.CoreV1().PersistentVolumeClaims(namespace)
	for _, c := range []struct{ name, size string }{{"restore-small", "1Gi"}, {"restore-large", "5Gi"}} {
		claim := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: c.name,
				// The scheduler's pick: the class binds on first consumer.
				Annotations: map[string]string{"volume.kubernetes.io/selected-node": "node-0"}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: ptr.To(csisim.StorageClassName),
				DataSourceRef:    &corev1.TypedObjectReference{APIGroup: ptr.To(snapv1.GroupName), Kind: "VolumeSnapshot", Name: "backup"},
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(c.size)}},
			},
		}
		_, err := claims.Create(ctx, claim, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
	}
	expectEvent := func(message string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			events, err := e.kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{
				FieldSelector: fields.OneTermEqualSelector("involvedObject.name", "restore-small").String()})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(events.Items).To(ContainElement(And(
				HaveField("Type", corev1.EventTypeWarning),
				HaveField("Reason", "ProvisioningFailed"),
				HaveField("Source.Component", csisim.ProvisionerName),
				HaveField("Message", `failed to provision volume with StorageClass "standard": `+
					"error getting handle for DataSource Type VolumeSnapshot by Name backup: "+message),
			)))
		}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	}
	expectNoVolumes := func() {
		t.Helper()
		volumes, err := e.kube.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(volumes.Items).To(HaveLen(1), "only the source volume")
	}

	expectEvent(`error getting snapshot backup from api server: volumesnapshot.snapshot.storage.k8s.io "backup" not found`)
	expectNoVolumes()

	snap := createSnapshot(ctx, t, e, "backup", snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr.To("data")})
	expectEvent("snapshot backup is not Ready")
	expectNoVolumes()

	// The snapshot-controller's part: the content, then the snapshot's status from the content's.
	created, err := e.snaps.SnapshotV1().VolumeSnapshotContents().Create(ctx,
		newContent("content-backup", csisim.ProvisionerName, sourceVolume, "backup", string(snap.UID)), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	var handle string
	g.Eventually(func(g Gomega) {
		content, err := e.snaps.SnapshotV1().VolumeSnapshotContents().Get(ctx, created.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(content.Status).NotTo(BeNil())
		g.Expect(content.Status.SnapshotHandle).NotTo(BeNil())
		handle = *content.Status.SnapshotHandle
	}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	markSnapshotReady(ctx, t, e, snap, created.Name)

	for _, c := range []struct{ name, capacity string }{{"restore-small", "3Gi"}, {"restore-large", "5Gi"}} {
		claim, err := claims.Get(ctx, c.name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Eventually(func(g Gomega) {
			pv, err := e.kube.CoreV1().PersistentVolumes().Get(ctx, "pvc-"+string(claim.UID), metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			got := pv.Spec.Capacity[corev1.ResourceStorage]
			g.Expect(got.Cmp(resource.MustParse(c.capacity))).To(BeZero(), "%s: capacity %s", c.name, got.String())
			g.Expect(pv.Annotations).To(Equal(map[string]string{
				"pv.kubernetes.io/provisioned-by":    csisim.ProvisionerName,
				csisim.AnnRestoredFromSnapshot:       namespace + "/backup",
				csisim.AnnRestoredFromSnapshotHandle: handle,
			}))
			g.Expect(pv.Spec.ClaimRef).To(HaveValue(And(HaveField("Name", c.name), HaveField("UID", claim.UID))))
		}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	}
}
