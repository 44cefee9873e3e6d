//go:build e2e

package controlplane_test

import (
	"context"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapclient "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/test/harness/controlplane"
	"github.com/seed1b407122/database-operator/test/harness/csisim"
)

// snapshotAndRestore snapshots claim data-db-0 (expanded to 2Gi before) through the default
// VolumeSnapshotClass, restores a 1Gi claim from it (which gets 2Gi), checks that a claim from a
// missing snapshot stays Pending with the provisioner's event, and deletes the snapshot with its
// content. The real snapshot-controller does the binding; the simulated CSI driver cuts.
func snapshotAndRestore(ctx context.Context, t *testing.T, g *WithT, cluster *controlplane.Cluster) {
	t.Helper()
	c := cluster.Client()
	snaps, err := snapclient.NewForConfig(cluster.Config)
	g.Expect(err).NotTo(HaveOccurred())

	class, err := snaps.SnapshotV1().VolumeSnapshotClasses().Get(ctx, csisim.SnapshotClassName, metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(class.Driver).To(Equal(csisim.ProvisionerName))
	g.Expect(class.DeletionPolicy).To(Equal(snapv1.VolumeSnapshotContentDelete))
	g.Expect(class.Annotations).To(HaveKeyWithValue("snapshot.storage.kubernetes.io/is-default-class", "true"))

	var source corev1.PersistentVolumeClaim
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "data-db-0"}, &source)).To(Succeed())

	began := time.Now()
	snap := &snapv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "db-0-backup"},
		Spec:       snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr.To("data-db-0")}},
	}
	_, err = snaps.SnapshotV1().VolumeSnapshots(namespace).Create(ctx, snap, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		snap, err = snaps.SnapshotV1().VolumeSnapshots(namespace).Get(ctx, "db-0-backup", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(snap.Status).NotTo(BeNil())
		g.Expect(snap.Status.ReadyToUse).To(HaveValue(BeTrue()))
	}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
	t.Logf("VolumeSnapshot readyToUse: %s", time.Since(began).Round(time.Millisecond))
	g.Expect(snap.Spec.VolumeSnapshotClassName).To(HaveValue(Equal(csisim.SnapshotClassName)), "the default class")
	g.Expect(snap.Status.RestoreSize).NotTo(BeNil())
	g.Expect(snap.Status.RestoreSize.Cmp(resource.MustParse("2Gi"))).To(BeZero(), "restore size %s", snap.Status.RestoreSize)
	g.Expect(snap.Status.CreationTime).NotTo(BeNil())
	g.Expect(snap.Status.Error).To(BeNil())
	g.Expect(snap.Status.BoundVolumeSnapshotContentName).NotTo(BeNil())

	content, err := snaps.SnapshotV1().VolumeSnapshotContents().Get(ctx, *snap.Status.BoundVolumeSnapshotContentName, metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(content.Spec.Driver).To(Equal(csisim.ProvisionerName))
	g.Expect(content.Spec.DeletionPolicy).To(Equal(snapv1.VolumeSnapshotContentDelete))
	g.Expect(content.Spec.Source.VolumeHandle).To(HaveValue(Equal(source.Spec.VolumeName)))
	g.Expect(content.Spec.VolumeSnapshotRef.UID).To(Equal(snap.UID))
	g.Expect(content.Finalizers).To(ContainElement("snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection"))
	g.Expect(content.Status).NotTo(BeNil())
	handle := csisim.SnapshotHandlePrefix + string(content.UID)
	g.Expect(content.Status.SnapshotHandle).To(HaveValue(Equal(handle)))
	g.Expect(content.Status.ReadyToUse).To(HaveValue(BeTrue()))
	g.Expect(content.Status.RestoreSize).To(HaveValue(Equal(int64(2 << 30))))

	// A 1Gi claim from the 2Gi snapshot gets the snapshot's size; a claim from a missing
	// snapshot stays Pending. Both have a pod: the class binds on first consumer.
	began = time.Now()
	for _, restore := range []struct{ claim, snapshot string }{{"restored", "db-0-backup"}, {"from-missing", "no-such-snapshot"}} {
		g.Expect(c.Create(ctx, newClaimFromSnapshot(restore.claim, restore.snapshot, "1Gi"))).To(Succeed())
		g.Expect(c.Create(ctx, newPodWithClaim(restore.claim, restore.claim))).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		var claim corev1.PersistentVolumeClaim
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "restored"}, &claim)).To(Succeed())
		g.Expect(claim.Status.Phase).To(Equal(corev1.ClaimBound))
		got := claim.Status.Capacity[corev1.ResourceStorage]
		g.Expect(got.Cmp(resource.MustParse("2Gi"))).To(BeZero(), "claim capacity %s", got.String())
		var pv corev1.PersistentVolume
		g.Expect(c.Get(ctx, client.ObjectKey{Name: claim.Spec.VolumeName}, &pv)).To(Succeed())
		g.Expect(pv.Annotations).To(HaveKeyWithValue(csisim.AnnRestoredFromSnapshot, namespace+"/db-0-backup"))
		g.Expect(pv.Annotations).To(HaveKeyWithValue(csisim.AnnRestoredFromSnapshotHandle, handle))
	}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
	t.Logf("claim restored from the snapshot Bound: %s", time.Since(began).Round(time.Millisecond))
	g.Eventually(func(g Gomega) {
		var claim corev1.PersistentVolumeClaim
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "from-missing"}, &claim)).To(Succeed())
		g.Expect(claim.Status.Phase).To(Equal(corev1.ClaimPending))
		g.Expect(claim.Spec.VolumeName).To(BeEmpty())
		var events corev1.EventList
		g.Expect(c.List(ctx, &events, client.InNamespace(namespace))).To(Succeed())
		g.Expect(events.Items).To(ContainElement(And(
			HaveField("InvolvedObject.Name", "from-missing"),
			HaveField("Type", corev1.EventTypeWarning),
			HaveField("Reason", "ProvisioningFailed"),
			HaveField("Source.Component", csisim.ProvisionerName),
			HaveField("Message", ContainSubstring(`"no-such-snapshot" not found`)),
		)))
	}).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())

	// Deleting the snapshot deletes its content: the snapshot-controller marks it, the simulated
	// sidecar deletes the snapshot and releases the content's finalizer.
	began = time.Now()
	g.Expect(snaps.SnapshotV1().VolumeSnapshots(namespace).Delete(ctx, "db-0-backup", metav1.DeleteOptions{})).To(Succeed())
	g.Eventually(func(g Gomega) {
		_, err := snaps.SnapshotV1().VolumeSnapshots(namespace).Get(ctx, "db-0-backup", metav1.GetOptions{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "snapshot: %v", err)
		_, err = snaps.SnapshotV1().VolumeSnapshotContents().Get(ctx, content.Name, metav1.GetOptions{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "content: %v", err)
	}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
	t.Logf("VolumeSnapshot and its content deleted: %s", time.Since(began).Round(time.Millisecond))

	for _, name := range []string{"restored", "from-missing"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
		g.Expect(c.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	}
}

// newClaimFromSnapshot returns a claim of the "standard" class whose dataSourceRef is a
// VolumeSnapshot.
func newClaimFromSnapshot(name, snapshot, size string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To(csisim.StorageClassName),
			DataSourceRef: &corev1.TypedObjectReference{
				APIGroup: ptr.To(snapv1.GroupName), Kind: "VolumeSnapshot", Name: snapshot,
			},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
			},
		},
	}
}

// newPodWithClaim returns a pod that mounts a claim, its first consumer.
func newPodWithClaim(name, claim string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "db", Image: "registry.example/db:1",
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/db"}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
			}}},
		},
	}
}
