//go:build linux && node

package nodee2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// clusterOption changes a DatabaseCluster fixture.
type clusterOption func(*databasev1alpha1.DatabaseCluster)

func withImage(image string) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Image = image }
}

func withPort(port int32) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Port = port }
}

// claimUIDs maps each claim of dc's namespace to its UID; a claim being deleted fails.
func claimUIDs(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) map[string]string {
	GinkgoHelper()
	var claims corev1.PersistentVolumeClaimList
	Expect(k8s.List(ctx, &claims, client.InNamespace(dc.Namespace))).To(Succeed())
	uids := map[string]string{}
	for _, claim := range claims.Items {
		Expect(claim.DeletionTimestamp).To(BeNil(), claim.Name)
		uids[claim.Name] = string(claim.UID)
	}
	return uids
}

// sampleCluster reads a DatabaseCluster sample of config/samples, as it is, into namespace.
func sampleCluster(namespace, file string) *databasev1alpha1.DatabaseCluster {
	GinkgoHelper()
	dc := &databasev1alpha1.DatabaseCluster{}
	readSample(file, namespace, dc)
	return dc
}

// readSample reads the sample file of config/samples into obj, strictly (a field the API does
// not have fails), and puts it into namespace.
func readSample(file, namespace string, obj client.Object) {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", file))
	Expect(err).NotTo(HaveOccurred())
	Expect(yaml.UnmarshalStrict(data, obj)).To(Succeed())
	obj.SetNamespace(namespace)
}

// newCluster returns a DatabaseCluster on the node's "standard" class with small requests.
func newCluster(namespace, name string, opts ...clusterOption) *databasev1alpha1.DatabaseCluster {
	dc := &databasev1alpha1.DatabaseCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: databasev1alpha1.DatabaseClusterSpec{
			Replicas: ptr.To[int32](1),
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi"),
			}},
			Storage: databasev1alpha1.StorageSpec{StorageClassName: "standard", Size: "1Gi"},
		},
	}
	for _, opt := range opts {
		opt(dc)
	}
	return dc
}

// waitAvailable waits until the cluster's status reports every replica Ready on the current
// generation, with Available=True and the rollout complete, and returns how long that took
// from began.
func waitAvailable(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, began time.Time) time.Duration {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		g.Expect(dc.Status.ObservedGeneration).To(Equal(dc.Generation))
		g.Expect(dc.Status.ReadyReplicas).To(Equal(*dc.Spec.Replicas))
		g.Expect(dc.Status.UpdatedReplicas).To(Equal(*dc.Spec.Replicas))
		cond := apimeta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionAvailable)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue), "Available: %s", cond.Message)
		g.Expect(cond.ObservedGeneration).To(Equal(dc.Generation))
		// The StatefulSet's status lags behind a change of its template: only Progressing=False
		// says that every pod runs the current revision.
		progressing := apimeta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionProgressing)
		g.Expect(progressing).NotTo(BeNil())
		g.Expect(progressing.Status).To(Equal(metav1.ConditionFalse), "Progressing: %s", progressing.Message)
		g.Expect(dc.Status.CurrentImage).To(Equal(dc.Spec.Image))
	}).WithContext(ctx).Should(Succeed(), "DatabaseCluster %s/%s did not become Available", dc.Namespace, dc.Name)
	return time.Since(began)
}

// expectTruthfulStatus checks the invariant "Available is True only when every replica is
// Ready" on one observation of the cluster.
func expectTruthfulStatus(g Gomega, dc *databasev1alpha1.DatabaseCluster) {
	cond := apimeta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionAvailable)
	if cond == nil {
		return
	}
	if cond.Status == metav1.ConditionTrue {
		g.Expect(dc.Status.ReadyReplicas).To(Equal(dc.Status.Replicas), "Available=True with %d/%d Ready", dc.Status.ReadyReplicas, dc.Status.Replicas)
	} else if cond.Reason != databasev1alpha1.ReasonHibernated {
		g.Expect(cond.Message).To(Equal(fmt.Sprintf("%d/%d replicas are ready", dc.Status.ReadyReplicas, *dc.Spec.Replicas)))
	}
}

// podsOf returns the cluster's pods by name.
func podsOf(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) map[string]corev1.Pod {
	GinkgoHelper()
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(dc.Namespace), client.MatchingLabels(dc.SelectorLabels()))).To(Succeed())
	byName := map[string]corev1.Pod{}
	for _, p := range pods.Items {
		byName[p.Name] = p
	}
	return byName
}

// podIP waits until the named pod runs and is Ready, and returns its address.
func podIP(ctx context.Context, namespace, name string) string {
	GinkgoHelper()
	var pod corev1.Pod
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &pod)).To(Succeed())
		g.Expect(pod.DeletionTimestamp).To(BeNil())
		g.Expect(pod.Status.PodIP).NotTo(BeEmpty())
		g.Expect(isReady(&pod)).To(BeTrue(), "pod %s is not Ready", name)
	}).WithContext(ctx).Should(Succeed())
	return pod.Status.PodIP
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// statefulSet returns the cluster's StatefulSet, asserting with g: inside an Eventually pass
// its g, so that a moment without one (the operator recreates it to grow the claims' template)
// is retried, not a failure; elsewhere pass Default.
func statefulSet(ctx context.Context, g Gomega, dc *databasev1alpha1.DatabaseCluster) *appsv1.StatefulSet {
	GinkgoHelper()
	var sts appsv1.StatefulSet
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.StatefulSetName()}, &sts)).To(Succeed())
	return &sts
}

// update applies change to the latest version of dc, retrying on conflicts.
func update(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, change func(*databasev1alpha1.DatabaseCluster)) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		change(dc)
		g.Expect(k8s.Update(ctx, dc)).To(Succeed())
	}).WithContext(ctx).Should(Succeed())
}
