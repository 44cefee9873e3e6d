// Package csisim simulates a CSI driver with its external-provisioner, external-resizer and
// external-snapshotter sidecars for the local control plane (see the provisioner type): the
// CSIDriver, the default StorageClass "standard" (WaitForFirstConsumer, expandable) and the default
// VolumeSnapshotClass "standard-snapshots", volumes provisioned for pending claims (also from a
// VolumeSnapshot), claims expanded, Released volumes deleted, snapshots cut and deleted. Nothing
// stores data, except in directory mode (Config.LocalDir, the real-node tier; dirvolumes.go): each
// volume is then a real directory on the host, which the CSI node plugin (nodeplugin.go) mounts
// into pods, a snapshot copies and a restore copies back; a class with ParamSizedFilesystem makes
// that directory a file system of the claim's size, grown on expansion (sizedvolumes.go).
package csisim

import (
	"context"
	"fmt"
	"maps"
	"os"
	"strings"

	snapclient "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	snapinformers "github.com/kubernetes-csi/external-snapshotter/client/v8/informers/externalversions"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

const (
	// ProvisionerName is the provisioner of the "standard" StorageClass and the name of the
	// simulated CSI driver, which serves every StorageClass that names it. As with real CSI
	// drivers both names are one, so it must be a DNS subdomain (a CSIDriver's name).
	ProvisionerName = "simulated-csi.localcluster.test"
	// StorageClassName is the cluster's default StorageClass.
	StorageClassName = "standard"

	annSelectedNode   = "volume.kubernetes.io/selected-node"
	annProvisionedBy  = "pv.kubernetes.io/provisioned-by"
	annDefaultClass   = "storageclass.kubernetes.io/is-default-class"
	claimKeyPrefix    = "claim/"
	volumeKeyPrefix   = "volume/"
	contentKeyPrefix  = "content/"
	simulatedFSType   = "ext4"
	simulatedQueueTag = "simulated-csi"

	// The names below are external-snapshotter v8.7.0's (pkg/utils/util.go). The common
	// controller (snapshot-controller) adds the content finalizer; the CSI sidecar removes it once
	// the snapshot is deleted from the storage. There is no sidecar-only finalizer.
	annDefaultSnapshotClass = "snapshot.storage.kubernetes.io/is-default-class"
	contentFinalizer        = "snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection"
	annBeingCreated         = "snapshot.storage.kubernetes.io/volumesnapshot-being-created"
	annBeingDeleted         = "snapshot.storage.kubernetes.io/volumesnapshot-being-deleted"

	eventProvisioningFailed = "ProvisioningFailed"
	// eventResizeFailed is the external-resizer's warning on a claim it could not expand.
	eventResizeFailed = "VolumeResizeFailed"
)

// BuildStorageClass returns the default class: provisioned on first use by a pod, expandable.
func BuildStorageClass() *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta:           defaultClassMeta(StorageClassName, annDefaultClass),
		Provisioner:          ProvisionerName,
		ReclaimPolicy:        ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode:    ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		AllowVolumeExpansion: ptr.To(true),
	}
}

// defaultClassMeta names a class and marks it the default with annotation (storage and
// snapshot classes each have their own default-class annotation).
func defaultClassMeta(name, annotation string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Annotations: map[string]string{annotation: "true"}}
}

// BuildCSIDriver registers the simulated driver as needing no attach step, so the
// attach/detach controller leaves its volumes alone (nothing would ever attach them), and with
// fsGroupPolicy File, so that on a real kubelet a pod's fsGroup owns its volume's directory
// whatever the volume's fsType and access modes (non-root databases write there).
func BuildCSIDriver() *storagev1.CSIDriver {
	return &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: ProvisionerName},
		Spec: storagev1.CSIDriverSpec{
			AttachRequired: ptr.To(false),
			PodInfoOnMount: ptr.To(false),
			FSGroupPolicy:  ptr.To(storagev1.FileFSGroupPolicy),
		},
	}
}

// provisioner SIMULATES A CSI DRIVER together with its external-provisioner and
// external-resizer sidecars; nothing stores data. It
//   - provisions: for each pending claim of a class it serves (for WaitForFirstConsumer, once
//     the scheduler has annotated the selected node) it creates a PersistentVolume pre-bound
//     to the claim, of the requested size, pinned to that node; kube-controller-manager's PV
//     binder then binds the two;
//   - expands: when a bound claim requests more than it has, it grows the volume and reports
//     the new size in the claim's status, as the resizer and the kubelet would;
//   - deletes: a Released volume it provisioned whose reclaim policy is Delete;
//   - with snapshots (Config.Snapshots), what snapshot.go says: cuts and deletes the snapshots
//     of VolumeSnapshotContents of its driver, provisions claims from VolumeSnapshots.
type provisioner struct {
	client  kubernetes.Interface
	claims  corelisters.PersistentVolumeClaimLister
	volumes corelisters.PersistentVolumeLister
	classes storagelisters.StorageClassLister
	queue   workqueue.TypedRateLimitingInterface[string]
	logf    func(format string, args ...any)
	// events records the claims' ProvisioningFailed events, as the external-provisioner does.
	events record.EventRecorder
	// localDir, when set, holds the volumes' and snapshots' directories (dirvolumes.go).
	localDir string
	// snap is the snapshot part; nil without Config.Snapshots.
	snap *snapshotter
}

// Config configures Start.
type Config struct {
	// Client reads and writes claims, volumes, classes and events.
	Client kubernetes.Interface
	// Snapshots, when set, turns on the snapshot part (snapshot.go); the VolumeSnapshot CRDs
	// must be installed. Without it a claim from a VolumeSnapshot stays Pending with an event.
	Snapshots snapclient.Interface
	// LocalDir, when set, turns on directory mode (dirvolumes.go): each volume's data is the
	// directory LocalDir/<volume handle>, which StartNodePlugin's plugin mounts on a real kubelet;
	// snapshots copy it and restores copy it back. Without it nothing stores data (kwok nodes).
	LocalDir string
	// Logf receives the retries (required).
	Logf func(format string, args ...any)
}

// Start watches claims and volumes (and with Config.Snapshots the VolumeSnapshots and their
// contents) until ctx ends. The returned channel is closed once every goroutine it started has
// returned.
func Start(ctx context.Context, cfg Config) (<-chan struct{}, error) {
	factory := informers.NewSharedInformerFactory(cfg.Client, 0)
	claimInformer := factory.Core().V1().PersistentVolumeClaims()
	volumeInformer := factory.Core().V1().PersistentVolumes()
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	p := &provisioner{
		client:  cfg.Client,
		claims:  claimInformer.Lister(),
		volumes: volumeInformer.Lister(),
		classes: factory.Storage().V1().StorageClasses().Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: simulatedQueueTag}),
		logf:     cfg.Logf,
		events:   broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: ProvisionerName}),
		localDir: cfg.LocalDir,
	}
	watches := []watch{
		{claimInformer.Informer(), p.handler(claimKeyPrefix), "claims"},
		{volumeInformer.Informer(), p.handler(volumeKeyPrefix), "volumes"},
	}
	var snapFactory snapinformers.SharedInformerFactory
	if cfg.Snapshots != nil {
		snapFactory = snapinformers.NewSharedInformerFactory(cfg.Snapshots, 0)
		snapshots := snapFactory.Snapshot().V1().VolumeSnapshots()
		contents := snapFactory.Snapshot().V1().VolumeSnapshotContents()
		p.snap = &snapshotter{client: cfg.Snapshots, snapshots: snapshots.Lister(), contents: contents.Lister()}
		watches = append(watches,
			watch{snapshots.Informer(), p.snapshotHandler(), "volume snapshots"},
			watch{contents.Informer(), p.handler(contentKeyPrefix), "volume snapshot contents"})
	}
	shutdown := func() {
		p.queue.ShutDown()
		factory.Shutdown()
		if snapFactory != nil {
			snapFactory.Shutdown()
		}
		broadcaster.Shutdown()
	}
	for _, w := range watches {
		if _, err := w.informer.AddEventHandler(w.handler); err != nil {
			shutdown()
			return nil, fmt.Errorf("watching %s: %w", w.what, err)
		}
	}
	factory.Start(ctx.Done())
	synced := factory.WaitForCacheSync(ctx.Done())
	if snapFactory != nil {
		snapFactory.Start(ctx.Done())
		maps.Insert(synced, maps.All(snapFactory.WaitForCacheSync(ctx.Done())))
	}
	for typ, ok := range synced {
		if !ok {
			shutdown()
			return nil, fmt.Errorf("caches of the simulated CSI driver did not sync: %v", typ)
		}
	}
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cfg.Client.CoreV1().Events("")})
	done := make(chan struct{})
	go func() {
		<-ctx.Done()
		p.queue.ShutDown()
	}()
	go func() {
		defer close(done)
		for p.processNext(ctx) {
		}
		shutdown()
	}()
	return done, nil
}

// watch is an informer and the handler that queues its objects.
type watch struct {
	informer cache.SharedIndexInformer
	handler  cache.ResourceEventHandler
	what     string
}

// handler queues "<prefix><namespace>/<name>" for every added or updated object.
func (p *provisioner) handler(prefix string) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			p.queue.Add(prefix + key)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}
}

// processNext handles one key; it returns false once the queue is shut down.
func (p *provisioner) processNext(ctx context.Context) bool {
	key, shutdown := p.queue.Get()
	if shutdown {
		return false
	}
	defer p.queue.Done(key)
	var err error
	if name, ok := strings.CutPrefix(key, volumeKeyPrefix); ok {
		err = p.syncVolume(ctx, name)
	} else if name, ok := strings.CutPrefix(key, contentKeyPrefix); ok {
		err = p.syncContent(ctx, name)
	} else {
		ns, name, _ := cache.SplitMetaNamespaceKey(strings.TrimPrefix(key, claimKeyPrefix))
		err = p.syncClaim(ctx, ns, name)
	}
	if err != nil && ctx.Err() == nil {
		// A conflict is another writer's update, the snapshot-controller's mostly: the retry
		// reads it, so it is not worth a line.
		if !apierrors.IsConflict(err) {
			p.logf("simulated CSI driver: %s: %v (retrying)", key, err)
		}
		p.queue.AddRateLimited(key)
		return true
	}
	p.queue.Forget(key)
	return true
}

// syncClaim provisions or expands the volume of one claim, if its class is ours.
func (p *provisioner) syncClaim(ctx context.Context, ns, name string) error {
	claim, err := p.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the claim: %w", err)
	}
	if claim.DeletionTimestamp != nil || claim.Spec.StorageClassName == nil {
		return nil
	}
	class, err := p.classes.Get(*claim.Spec.StorageClassName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the class: %w", err)
	}
	if class.Provisioner != ProvisionerName {
		return nil
	}
	if claim.Spec.VolumeName == "" {
		return p.provision(ctx, claim, class)
	}
	return p.expand(ctx, claim)
}

// provision creates the volume of a pending claim, once its node is known.
func (p *provisioner) provision(ctx context.Context, claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) error {
	node := claim.Annotations[annSelectedNode]
	waitForConsumer := class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
	if waitForConsumer && node == "" {
		return nil // The scheduler has not picked a node yet.
	}
	if _, err := p.volumes.Get(volumeName(claim)); err == nil {
		return nil // Provisioned already; the PV binder finishes the binding.
	}
	var from *restoreSource
	if ref := snapshotDataSource(claim); ref != nil {
		var problem string
		if from, problem = p.restoreSource(claim, ref); from == nil {
			// The claim stays Pending; a change of the snapshot queues it again.
			p.events.Event(claim, corev1.EventTypeWarning, eventProvisioningFailed,
				fmt.Sprintf("failed to provision volume with StorageClass %q: %s", class.Name, problem))
			return nil
		}
	}
	pv := buildVolume(claim, class, node, from)
	if p.localDir != "" {
		if err := p.makeVolumeData(pv, from); err != nil {
			return err
		}
	}
	_, err := p.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating volume %s: %w", pv.Name, err)
	}
	return nil
}

// volumeName is the name the external-provisioner gives the volume of a claim.
func volumeName(claim *corev1.PersistentVolumeClaim) string { return "pvc-" + string(claim.UID) }

// buildVolume returns the volume of a claim, pre-bound to it (claimRef with UID), as the
// external-provisioner names and shapes it, a CSI volume of the driver whose handle is its name;
// node, if set, pins the volume to that node. A volume restored from a snapshot (from) is at
// least the snapshot's size and names it in annotations.
func buildVolume(claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, node string,
	from *restoreSource) *corev1.PersistentVolume {
	name := volumeName(claim)
	capacity := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if from != nil && from.size.Cmp(capacity) > 0 {
		capacity = from.size
	}
	source := corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
		Driver: ProvisionerName, VolumeHandle: name, FSType: simulatedFSType,
	}}
	if classSizesVolumes(class) {
		source.CSI.VolumeAttributes = map[string]string{ParamSizedFilesystem: sizedOn}
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annProvisionedBy: ProvisionerName}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: capacity},
			AccessModes: claim.Spec.AccessModes,
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID,
			},
			PersistentVolumeReclaimPolicy: ptr.Deref(class.ReclaimPolicy, corev1.PersistentVolumeReclaimDelete),
			StorageClassName:              class.Name,
			MountOptions:                  class.MountOptions,
			VolumeMode:                    claim.Spec.VolumeMode,
			PersistentVolumeSource:        source,
		},
	}
	if from != nil {
		from.annotate(pv)
	}
	if node != "" {
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node},
			}}}},
		}}
	}
	return pv
}

// expand grows the volume of a bound claim that requests more than its status reports, then
// reports the new size on the claim, clearing what a resize in progress leaves behind.
func (p *provisioner) expand(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	want := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	have := claim.Status.Capacity[corev1.ResourceStorage]
	if claim.Status.Phase != corev1.ClaimBound || want.Cmp(have) <= 0 {
		return nil
	}
	pv, err := p.volumes.Get(claim.Spec.VolumeName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading volume %s: %w", claim.Spec.VolumeName, err)
	}
	if p.localDir != "" && isSizedVolume(pv) {
		if err := growSizedVolume(p.localDir, pv.Spec.CSI.VolumeHandle, want.Value()); err != nil {
			p.events.Event(claim, corev1.EventTypeWarning, eventResizeFailed, err.Error())
			return fmt.Errorf("growing the file system of volume %s: %w", pv.Name, err)
		}
	}
	if size := pv.Spec.Capacity[corev1.ResourceStorage]; size.Cmp(want) < 0 {
		pv = pv.DeepCopy()
		pv.Spec.Capacity[corev1.ResourceStorage] = want
		if _, err := p.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("growing volume %s: %w", pv.Name, err)
		}
	}
	claim = claim.DeepCopy()
	if claim.Status.Capacity == nil {
		claim.Status.Capacity = corev1.ResourceList{}
	}
	claim.Status.Capacity[corev1.ResourceStorage] = want
	if claim.Status.AllocatedResources == nil {
		claim.Status.AllocatedResources = corev1.ResourceList{}
	}
	claim.Status.AllocatedResources[corev1.ResourceStorage] = want
	delete(claim.Status.AllocatedResourceStatuses, corev1.ResourceStorage)
	claim.Status.Conditions = dropResizeConditions(claim.Status.Conditions)
	if _, err := p.client.CoreV1().PersistentVolumeClaims(claim.Namespace).UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("reporting the new size of claim %s/%s: %w", claim.Namespace, claim.Name, err)
	}
	return nil
}

// dropResizeConditions removes the conditions of a resize in progress.
func dropResizeConditions(conds []corev1.PersistentVolumeClaimCondition) []corev1.PersistentVolumeClaimCondition {
	var kept []corev1.PersistentVolumeClaimCondition
	for _, c := range conds {
		switch c.Type {
		case corev1.PersistentVolumeClaimResizing, corev1.PersistentVolumeClaimFileSystemResizePending,
			corev1.PersistentVolumeClaimControllerResizeError, corev1.PersistentVolumeClaimNodeResizeError:
		default:
			kept = append(kept, c)
		}
	}
	return kept
}

// syncVolume deletes a Released volume we provisioned when its reclaim policy says so, as the
// external-provisioner does (the PV binder leaves that to it).
func (p *provisioner) syncVolume(ctx context.Context, name string) error {
	pv, err := p.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the volume: %w", err)
	}
	if pv.Annotations[annProvisionedBy] != ProvisionerName || pv.DeletionTimestamp != nil ||
		pv.Status.Phase != corev1.VolumeReleased || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		return nil
	}
	if p.localDir != "" && pv.Spec.CSI != nil {
		if err := removeVolumeData(p.localDir, pv); err != nil {
			return fmt.Errorf("deleting released volume %s: %w", name, err)
		}
	}
	err = p.client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting released volume: %w", err)
	}
	return nil
}

// makeVolumeData creates the data of a new volume: a sized file system (sizedvolumes.go), or a
// directory (makeVolumeDirectory); for a restore, with the snapshot's content.
func (p *provisioner) makeVolumeData(pv *corev1.PersistentVolume, from *restoreSource) error {
	handle := pv.Spec.CSI.VolumeHandle
	if !isSizedVolume(pv) {
		return p.makeVolumeDirectory(handle, from)
	}
	var snapshot string
	if from != nil {
		snapshot = snapshotDirectory(p.localDir, from.handle)
	}
	size := pv.Spec.Capacity[corev1.ResourceStorage]
	if err := makeSizedVolume(p.localDir, handle, size.Value(), snapshot); err != nil {
		return fmt.Errorf("making the file system of volume %s: %w", handle, err)
	}
	return nil
}

// removeVolumeData removes a deleted volume's data: its file system, or its directory.
func removeVolumeData(localDir string, pv *corev1.PersistentVolume) error {
	if isSizedVolume(pv) {
		return removeSizedVolume(localDir, pv.Spec.CSI.VolumeHandle)
	}
	return removeTree(volumeDirectory(localDir, pv.Spec.CSI.VolumeHandle))
}

// makeVolumeDirectory creates the directory of a new volume: a copy of the snapshot's
// directory for a restore (owners and modes as the database left them), else an empty one that,
// like the root of a fresh filesystem, belongs to root; the kubelet hands it to the pod's fsGroup
// (the CSIDriver's fsGroupPolicy File).
func (p *provisioner) makeVolumeDirectory(handle string, from *restoreSource) error {
	path := volumeDirectory(p.localDir, handle)
	if from != nil {
		if err := copyTree(snapshotDirectory(p.localDir, from.handle), path); err != nil {
			return fmt.Errorf("restoring volume %s from snapshot %s/%s: %w", handle, from.namespace, from.name, err)
		}
		return nil
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return fmt.Errorf("creating the directory of volume %s: %w", handle, err)
	}
	return nil
}
