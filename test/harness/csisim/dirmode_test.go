//go:build e2e

package csisim_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seed1b407122/database-operator/test/harness/csisim"
)

// TestDirectoryMode drives the driver in directory mode (Config.LocalDir, the real-node tier)
// as the snapshot-controller and the PV binder would: volumes are CSI volumes whose directory
// exists, a snapshot is a copy of the source volume's directory taken when it is cut, a claim
// from the snapshot starts as that copy (not as the source is now), and deleting the snapshot or
// releasing the volume removes its directory.
// Run: KUBEBUILDER_ASSETS=<bin dir> SNAPSHOT_ENV_DIR=<snapshot dir> go test -tags e2e -run TestDirectoryMode ./test/harness/csisim/ -v -count=1
func TestDirectoryMode(t *testing.T) {
	g := NewWithT(t)
	localDir := t.TempDir()
	source := filepath.Join(localDir, sourceVolume)
	writeTree(t, source)
	want := describeTree(t, source)
	e := startEnvIn(t, localDir)
	ctx := t.Context()
	contents := e.snaps.SnapshotV1().VolumeSnapshotContents()
	volumes := e.kube.CoreV1().PersistentVolumes()

	// An empty volume: a CSI volume of the driver, its handle its name, its directory made.
	empty := newClaim(ctx, t, e, "empty", "")
	pv := waitVolume(ctx, t, e, empty)
	g.Expect(pv.Spec.CSI).To(HaveValue(And(HaveField("Driver", csisim.ProvisionerName), HaveField("VolumeHandle", pv.Name))))
	g.Expect(pv.Spec.Local).To(BeNil())
	g.Expect(pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values).To(Equal([]string{"node-0"}))
	g.Expect(describeTree(t, filepath.Join(localDir, pv.Name))).To(HaveLen(1), "an empty directory")

	// The snapshot: a copy of the source as it is when the content is cut.
	snap := createSnapshot(ctx, t, e, "dir-backup", snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr.To("data")})
	content, err := contents.Create(ctx, newContent("content-dir", csisim.ProvisionerName, sourceVolume, "dir-backup", string(snap.UID), contentFinalizer), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	handle := "snap-" + string(content.UID)
	g.Eventually(func(g Gomega) {
		content, err = contents.Get(ctx, content.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(content.Status).NotTo(BeNil())
		g.Expect(content.Status.SnapshotHandle).To(HaveValue(Equal(handle)))
		g.Expect(content.Status.ReadyToUse).To(HaveValue(BeTrue()))
	}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	snapshotDir := csisim.SnapshotDirectory(localDir, handle)
	g.Expect(describeTree(t, snapshotDir)).To(Equal(want), "the snapshot's copy")
	// Written after the cut: in the source, not in the snapshot nor in what it restores.
	g.Expect(os.WriteFile(filepath.Join(source, "later"), []byte("after the backup"), 0o600)).To(Succeed())
	markSnapshotReady(ctx, t, e, snap, content.Name)

	restored := waitVolume(ctx, t, e, newClaim(ctx, t, e, "restored", "dir-backup"))
	g.Expect(restored.Annotations).To(HaveKeyWithValue(csisim.AnnRestoredFromSnapshotHandle, handle))
	restoredDir := filepath.Join(localDir, restored.Name)
	g.Expect(describeTree(t, restoredDir)).To(Equal(want), "the restored volume is the snapshot's copy")
	g.Expect(describeTree(t, snapshotDir)).To(Equal(want), "the snapshot is unchanged by the restore")

	// A Released volume of policy Delete goes with its directory (the PV binder's part played
	// here: no kube-controller-manager runs).
	restored.Status.Phase = corev1.VolumeReleased
	_, err = volumes.UpdateStatus(ctx, restored, metav1.UpdateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	// Deleted, or held only by the pv-protection finalizer that admission adds (no controller
	// here removes it).
	g.Eventually(func(g Gomega) {
		pv, err := volumes.Get(ctx, restored.Name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pv.DeletionTimestamp).NotTo(BeNil(), "volume %s not deleted", pv.Name)
		}
	}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	expectGone(t, restoredDir)

	// The snapshot deleted as the snapshot-controller does for policy Delete: the copy goes,
	// then the content's finalizer.
	metav1.SetMetaDataAnnotation(&content.ObjectMeta, annBeingDeleted, "yes")
	_, err = contents.Update(ctx, content, metav1.UpdateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(contents.Delete(ctx, content.Name, metav1.DeleteOptions{})).To(Succeed())
	g.Eventually(func(g Gomega) {
		_, err := contents.Get(ctx, content.Name, metav1.GetOptions{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "content %s: %v", content.Name, err)
	}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	expectGone(t, snapshotDir)

	// What is left is exactly the source (with its later file) and the empty volume.
	entries, err := os.ReadDir(localDir)
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, entry := range entries {
		names = append(names, entry.Name())
	}
	left := []string{sourceVolume, pv.Name, "snapshots"}
	slices.Sort(left)
	g.Expect(names).To(Equal(left))
	g.Expect(describeTree(t, filepath.Join(localDir, "snapshots"))).To(HaveLen(1), "no snapshot copy left")
}

// newClaim creates a claim of the default class on node-0, from snapshot when it is set.
func newClaim(ctx context.Context, t *testing.T, e *env, name, snapshot string) *corev1.PersistentVolumeClaim {
	t.Helper()
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
			Annotations: map[string]string{"volume.kubernetes.io/selected-node": "node-0"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To(csisim.StorageClassName),
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if snapshot != "" {
		claim.Spec.DataSourceRef = &corev1.TypedObjectReference{APIGroup: ptr.To(snapv1.GroupName), Kind: "VolumeSnapshot", Name: snapshot}
	}
	created, err := e.kube.CoreV1().PersistentVolumeClaims(namespace).Create(ctx, claim, metav1.CreateOptions{})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return created
}

// waitVolume waits for the volume the driver provisions for claim.
func waitVolume(ctx context.Context, t *testing.T, e *env, claim *corev1.PersistentVolumeClaim) *corev1.PersistentVolume {
	t.Helper()
	var pv *corev1.PersistentVolume
	NewWithT(t).Eventually(func(g Gomega) {
		var err error
		pv, err = e.kube.CoreV1().PersistentVolumes().Get(ctx, "pvc-"+string(claim.UID), metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
	}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	return pv
}

func expectGone(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s is still there: %v", path, err)
	}
}
