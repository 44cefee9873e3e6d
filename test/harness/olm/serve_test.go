package olm

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var _ = Describe("Waiting for the in-cluster catalog server", Label("unit"), func() {
	var objs InClusterCatalog

	BeforeEach(func() {
		objs = BuildInClusterCatalog("ns", "database-operator-catalog", "database-operator", "opm@sha256:0", []byte("{}"))
	})

	It("returns once the Deployment has an available pod of its generation", func(ctx SpecContext) {
		dep := objs.Deployment.DeepCopy()
		dep.Status.ObservedGeneration, dep.Status.UpdatedReplicas, dep.Status.AvailableReplicas = 1, 1, 1
		dep.Generation = 1
		Expect(WaitInClusterCatalogServing(ctx, fakeClient(dep), objs)).To(Succeed())
	})

	It("times out with what the crash-looping container said when it last exited", func(ctx SpecContext) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "database-operator-catalog-abc", Labels: objs.Deployment.Spec.Template.Labels},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
				Name:  "registry-grpc",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 1, Message: "integrity check failed: read existing cache digest\n"}},
			}}},
		}
		short, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		err := WaitInClusterCatalogServing(short, fakeClient(objs.Deployment.DeepCopy(), pod), objs)
		Expect(err).To(MatchError(ContainSubstring("waiting for the catalog server ns/database-operator-catalog to be ready: context deadline exceeded; " +
			"last seen: pod database-operator-catalog-abc Running, registry-grpc waiting: CrashLoopBackOff back-off 10s, " +
			"registry-grpc last exited 1: integrity check failed: read existing cache digest")))
	})

	It("says so while no pod exists", func(ctx SpecContext) {
		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		Expect(WaitInClusterCatalogServing(short, fakeClient(objs.Deployment.DeepCopy()), objs)).To(MatchError(ContainSubstring("last seen: no pod yet")))
	})
})
