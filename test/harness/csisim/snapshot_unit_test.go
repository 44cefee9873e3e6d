package csisim

import (
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestSnapshotDataSource(t *testing.T) {
	snapshotRef := &corev1.TypedObjectReference{APIGroup: ptr.To(snapv1.GroupName), Kind: "VolumeSnapshot", Name: "backup"}
	cases := []struct {
		name string
		spec corev1.PersistentVolumeClaimSpec
		want *corev1.TypedObjectReference
	}{
		{"no data source", corev1.PersistentVolumeClaimSpec{}, nil},
		{"dataSourceRef to a VolumeSnapshot", corev1.PersistentVolumeClaimSpec{DataSourceRef: snapshotRef}, snapshotRef},
		{"dataSource only", corev1.PersistentVolumeClaimSpec{DataSource: &corev1.TypedLocalObjectReference{
			APIGroup: ptr.To(snapv1.GroupName), Kind: "VolumeSnapshot", Name: "backup"}}, snapshotRef},
		{"a claim to clone", corev1.PersistentVolumeClaimSpec{DataSourceRef: &corev1.TypedObjectReference{
			Kind: "PersistentVolumeClaim", Name: "data"}}, nil},
		{"a VolumeSnapshot of another group", corev1.PersistentVolumeClaimSpec{DataSourceRef: &corev1.TypedObjectReference{
			APIGroup: ptr.To("example.com"), Kind: "VolumeSnapshot", Name: "backup"}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := snapshotDataSource(&corev1.PersistentVolumeClaim{Spec: c.spec})
			if (got == nil) != (c.want == nil) || (got != nil && (got.Name != c.want.Name || got.Kind != c.want.Kind ||
				ptr.Deref(got.APIGroup, "") != ptr.Deref(c.want.APIGroup, ""))) {
				t.Errorf("snapshotDataSource() = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestShouldDeleteSnapshot(t *testing.T) {
	now := ptr.To(metav1.Now())
	cases := []struct {
		name           string
		deleted        *metav1.Time
		annotations    map[string]string
		preProvisioned bool
		want           bool
	}{
		{"not deleted", nil, map[string]string{annBeingDeleted: "yes"}, false, false},
		{"deleted, marked by the snapshot-controller", now, map[string]string{annBeingDeleted: "yes"}, false, true},
		{"deleted, not marked", now, nil, false, false},
		{"deleted and marked, while CreateSnapshot is in flight", now, map[string]string{annBeingDeleted: "yes", annBeingCreated: "yes"}, false, false},
		{"deleted, pre-provisioned and unbound", now, nil, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			content := &snapv1.VolumeSnapshotContent{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: c.deleted, Annotations: c.annotations}}
			if c.preProvisioned {
				content.Spec.Source.SnapshotHandle = ptr.To("snap-1")
			} else {
				content.Spec.VolumeSnapshotRef.UID = "uid"
			}
			if got := shouldDeleteSnapshot(content); got != c.want {
				t.Errorf("shouldDeleteSnapshot() = %v, want %v", got, c.want)
			}
		})
	}
}

func TestBuildVolumeFromSnapshot(t *testing.T) {
	class := BuildStorageClass()
	claim := func(size string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "restored", UID: "uid-1"},
			Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}},
		}
	}
	from := &restoreSource{namespace: "ns", name: "backup", handle: "snap-x", size: resource.MustParse("2Gi")}
	for _, c := range []struct{ request, want string }{{"1Gi", "2Gi"}, {"2Gi", "2Gi"}, {"3Gi", "3Gi"}} {
		pv := buildVolume(claim(c.request), class, "node-0", from)
		got := pv.Spec.Capacity[corev1.ResourceStorage]
		if got.Cmp(resource.MustParse(c.want)) != 0 {
			t.Errorf("request %s: capacity %s, want %s", c.request, got.String(), c.want)
		}
		want := map[string]string{annProvisionedBy: ProvisionerName, AnnRestoredFromSnapshot: "ns/backup", AnnRestoredFromSnapshotHandle: "snap-x"}
		if len(pv.Annotations) != len(want) {
			t.Errorf("request %s: annotations %v, want %v", c.request, pv.Annotations, want)
		}
		for k, v := range want {
			if pv.Annotations[k] != v {
				t.Errorf("request %s: annotation %s = %q, want %q", c.request, k, pv.Annotations[k], v)
			}
		}
	}
	if pv := buildVolume(claim("1Gi"), class, "node-0", nil); len(pv.Annotations) != 1 {
		t.Errorf("an empty volume has annotations %v, want only %s", pv.Annotations, annProvisionedBy)
	}
}
