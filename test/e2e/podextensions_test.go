//go:build e2e

// Copyright 2026 The database-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// rollTimeout bounds one rolling update of three simulated pods.
const rollTimeout = time.Minute

// The pod extensions of issue 33 on real StatefulSet, scheduler and (simulated) kubelet: a cluster
// with a native sidecar, an init container, a projected Secret volume and a spread constraint
// converges, each of the four rolls the pods one at a time, highest ordinal first, and
// spec.service exposes the client Service as a NodePort and back.
var _ = Describe("DatabaseCluster pod extensions", Ordered, func() {
	const (
		ns         = "e2e-pod-extensions"
		secretName = "ext-extra"
		extraMount = "/etc/extra"
	)
	var (
		dc *databasev1alpha1.DatabaseCluster
		// clientset watches the pods: a watch from a list's resourceVersion sees every change.
		clientset kubernetes.Interface
	)

	BeforeAll(func(ctx SpecContext) {
		var err error
		clientset, err = kubernetes.NewForConfig(cluster.Config)
		Expect(err).NotTo(HaveOccurred())
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	})

	// The namespace goes in the background: no later spec needs to wait for it.
	AfterAll(func(ctx SpecContext) {
		Expect(k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	})

	AfterEach(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			dumpNamespace(ctx, ns)
		}
	})

	// pods lists the cluster's pods by ordinal.
	pods := func(g Gomega, ctx context.Context) []corev1.Pod {
		var list corev1.PodList
		g.Expect(k8s.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels(dc.SelectorLabels()))).To(Succeed())
		slices.SortFunc(list.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
		return list.Items
	}
	statefulSet := func(g Gomega, ctx context.Context) *appsv1.StatefulSet {
		sts := &appsv1.StatefulSet{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.StatefulSetName()}, sts)).To(Succeed())
		return sts
	}
	// settled waits until the cluster is Available with 3 Ready pods, all of the StatefulSet's
	// current revision, and returns that revision.
	settled := func(ctx context.Context) string {
		GinkgoHelper()
		var revision string
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			available := meta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionAvailable)
			g.Expect(available).NotTo(BeNil())
			g.Expect([]string{string(available.Status), available.Message}).To(Equal([]string{"True", "3/3 replicas are ready"}))
			sts := statefulSet(g, ctx)
			g.Expect(sts.Status.ObservedGeneration).To(Equal(sts.Generation))
			g.Expect(sts.Status.CurrentRevision).To(Equal(sts.Status.UpdateRevision))
			g.Expect(sts.Status.UpdatedReplicas).To(Equal(int32(3)))
			revision = sts.Status.UpdateRevision
			list := pods(g, ctx)
			g.Expect(list).To(HaveLen(3))
			for _, pod := range list {
				g.Expect(podReady(&pod)).To(BeTrue(), pod.Name)
				g.Expect(pod.Labels[appsv1.ControllerRevisionHashLabelKey]).To(Equal(revision), pod.Name)
			}
		}).Should(Succeed())
		return revision
	}
	// patchCluster applies change to the stored cluster.
	patchCluster := func(ctx context.Context, change func(*databasev1alpha1.DatabaseCluster)) {
		GinkgoHelper()
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		patch := client.MergeFrom(dc.DeepCopy())
		change(dc)
		Expect(k8s.Patch(ctx, dc, patch)).To(Succeed())
	}

	It("converges with a sidecar, an init container, a projected Secret volume and a spread constraint", func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: ns},
			StringData: map[string]string{"password": "s3cret", "user": "app"},
		})).To(Succeed())
		dc = smallCluster(ns, "ext", 3)
		dc.Spec.PodExtensions = databasev1alpha1.PodExtensions{
			Sidecars:       []corev1.Container{{Name: "agent", Image: "registry.example.com/agent:1.0"}},
			InitContainers: []corev1.Container{{Name: "prepare", Image: "registry.example.com/init:1.0", Command: []string{"sh", "-c", "echo prepare-1"}}},
			Volumes: []corev1.Volume{{Name: "extra", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{
					LocalObjectReference: corev1.LocalObjectReference{Name: secretName},
					Items:                []corev1.KeyToPath{{Key: "password", Path: "password"}},
				}}},
			}}}},
			VolumeMounts: []corev1.VolumeMount{{Name: "extra", MountPath: extraMount, ReadOnly: true}},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
			}},
		}

		began := time.Now()
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		settled(ctx)
		AddReportEntry("create with extensions → Available (3 pods)", time.Since(began).Round(time.Millisecond).String())

		nodes := map[string]bool{}
		for _, pod := range pods(Default, ctx) {
			nodes[pod.Spec.NodeName] = true
			expectExtensions(Default, &pod, dc)
			// The simulated kubelet runs them as a kubelet would: the init container ran to
			// completion, the sidecar was started and keeps running beside the database.
			Expect(pod.Status.InitContainerStatuses).To(HaveLen(2), pod.Name)
			prepare, agent := pod.Status.InitContainerStatuses[0], pod.Status.InitContainerStatuses[1]
			Expect(prepare.Name).To(Equal("prepare"))
			Expect(prepare.State.Terminated).NotTo(BeNil(), "%s: %+v", pod.Name, prepare.State)
			Expect([]any{prepare.State.Terminated.ExitCode, prepare.State.Terminated.Reason}).To(Equal([]any{int32(0), "Completed"}))
			Expect(agent.Name).To(Equal("agent"))
			Expect(agent.State.Running).NotTo(BeNil(), "%s: %+v", pod.Name, agent.State)
			Expect([]bool{ptr.Deref(agent.Started, false), agent.Ready}).To(Equal([]bool{true, true}), pod.Name)
		}
		Expect(nodes).To(HaveLen(3), "maxSkew 1 on kubernetes.io/hostname, DoNotSchedule: one pod per node")
	})

	// Each change of one extension rolls the pods once, one at a time, highest ordinal first.
	for _, change := range []struct {
		field  string
		change func(*databasev1alpha1.DatabaseCluster)
	}{
		{"the sidecar's image", func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.Sidecars[0].Image = "registry.example.com/agent:2.0"
		}},
		{"the init container's command", func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.InitContainers[0].Command = []string{"sh", "-c", "echo prepare-2"}
		}},
		{"the volume's projection", func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.Volumes[0].Projected.Sources[0].Secret.Items = []corev1.KeyToPath{{Key: "password", Path: "db/password"}}
		}},
		{"the spread constraint", func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.TopologySpreadConstraints[0].MaxSkew = 2
		}},
	} {
		It("rolls the pods one at a time, highest ordinal first, for a change of "+change.field, func(ctx SpecContext) {
			oldRevision := settled(ctx)
			before := pods(Default, ctx)
			revisionsBefore := revisionCount(ctx, ns, dc)

			began := time.Now()
			roll := observeRoll(ctx, clientset, ns, dc.SelectorLabels(), 3, oldRevision, func() {
				patchCluster(ctx, change.change)
			})
			AddReportEntry("roll of 3 pods for "+change.field, fmt.Sprintf("%s: replaced %s, at most %d unavailable, %d pod events",
				time.Since(began).Round(time.Millisecond), strings.Join(roll.replaced, ", "), roll.maxUnavailable, len(roll.timeline)))
			timeline := strings.Join(roll.timeline, "\n")
			Expect(roll.replaced).To(Equal([]string{"ext-2", "ext-1", "ext-0"}), "order of replacement; pod events:\n%s", timeline)
			Expect(roll.maxUnavailable).To(Equal(1), "at most one pod missing, terminating or not Ready at a time; pod events:\n%s", timeline)

			newRevision := settled(ctx)
			Expect(newRevision).NotTo(Equal(oldRevision))
			Expect(revisionCount(ctx, ns, dc)).To(Equal(revisionsBefore+1), "one new revision: the change was written once")
			after := pods(Default, ctx)
			for i, pod := range after {
				Expect(pod.UID).NotTo(Equal(before[i].UID), "%s was replaced", pod.Name)
				expectExtensions(Default, &pod, dc)
			}
		})
	}

	It("exposes the client Service as a NodePort with an extra port and back, the headless Service unchanged", func(ctx SpecContext) {
		settled(ctx)
		podsBefore := pods(Default, ctx)
		headless := &corev1.Service{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.HeadlessServiceName()}, headless)).To(Succeed())
		clientService := &corev1.Service{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.ClientServiceName()}, clientService)).To(Succeed())
		clusterIP, uid := clientService.Spec.ClusterIP, clientService.UID
		Expect(clientService.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
		dbPort := corev1.ServicePort{
			Name: databasev1alpha1.PortName, Port: dc.DatabasePort(), Protocol: corev1.ProtocolTCP,
			TargetPort: intstr.FromString(databasev1alpha1.PortName),
		}
		metricsPort := corev1.ServicePort{Name: "metrics", Port: 9187, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(9187)}
		// readClient reads the client Service and checks what no change of spec.service may touch.
		readClient := func(g Gomega) *corev1.Service {
			svc := &corev1.Service{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.ClientServiceName()}, svc)).To(Succeed())
			g.Expect(svc.UID).To(Equal(uid), "the client Service is changed in place, not replaced")
			g.Expect(svc.Spec.ClusterIP).To(Equal(clusterIP))
			g.Expect(svc.Spec.Selector).To(Equal(dc.SelectorLabels()))
			return svc
		}
		// withoutNodePorts are the ports of svc with their node ports cleared, and those node ports.
		withoutNodePorts := func(svc *corev1.Service) ([]corev1.ServicePort, []int32) {
			var ports []corev1.ServicePort
			var nodePorts []int32
			for _, p := range svc.Spec.Ports {
				nodePorts = append(nodePorts, p.NodePort)
				p.NodePort = 0
				ports = append(ports, p)
			}
			return ports, nodePorts
		}

		patchCluster(ctx, func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.Service = &databasev1alpha1.ServiceSpec{
				Type:  corev1.ServiceTypeNodePort,
				Ports: []databasev1alpha1.ServicePort{{Name: "metrics", Port: 9187}},
			}
		})
		var nodePorts []int32
		Eventually(func(g Gomega) {
			svc := readClient(g)
			g.Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeNodePort))
			g.Expect(svc.Spec.ExternalTrafficPolicy).To(Equal(corev1.ServiceExternalTrafficPolicyCluster))
			var ports []corev1.ServicePort
			ports, nodePorts = withoutNodePorts(svc)
			g.Expect(ports).To(Equal([]corev1.ServicePort{dbPort, metricsPort}))
			for i, p := range nodePorts {
				g.Expect(p).To(BeNumerically(">=", 30000), svc.Spec.Ports[i].Name)
				g.Expect(p).To(BeNumerically("<=", 32767), svc.Spec.Ports[i].Name)
			}
		}).Should(Succeed())

		// Another change of spec.service keeps the node ports the API server allocated.
		patchCluster(ctx, func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.Service.Labels = map[string]string{"team": "payments"}
		})
		Eventually(func(g Gomega) {
			svc := readClient(g)
			g.Expect(svc.Labels).To(HaveKeyWithValue("team", "payments"))
			ports, again := withoutNodePorts(svc)
			g.Expect(ports).To(Equal([]corev1.ServicePort{dbPort, metricsPort}))
			g.Expect(again).To(Equal(nodePorts), "the node ports are kept")
		}).Should(Succeed())

		patchCluster(ctx, func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.Service = &databasev1alpha1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}
		})
		Eventually(func(g Gomega) {
			svc := readClient(g)
			g.Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
			g.Expect(svc.Spec.Ports).To(Equal([]corev1.ServicePort{dbPort}), "no node port, no extra port")
			g.Expect(svc.Spec.ExternalTrafficPolicy).To(BeEmpty())
			g.Expect(svc.Labels).NotTo(HaveKey("team"))
		}).Should(Succeed())

		after := &corev1.Service{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dc.HeadlessServiceName()}, after)).To(Succeed())
		Expect(after.ResourceVersion).To(Equal(headless.ResourceVersion), "the headless Service was not written")
		Expect(after.Spec).To(Equal(headless.Spec))
		Expect(after.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))
		Expect(after.Spec.Ports).To(Equal([]corev1.ServicePort{dbPort}))
		for i, pod := range pods(Default, ctx) {
			Expect(pod.UID).To(Equal(podsBefore[i].UID), "a change of spec.service rolls no pod: %s", pod.Name)
		}
	})
})

// expectExtensions checks that pod carries dc's extensions as the builder puts them: the init
// container, then the sidecar as an init container with restartPolicy Always, the projected
// volume mounted read-only by the database container, and the spread constraint over the
// cluster's pods.
func expectExtensions(g Gomega, pod *corev1.Pod, dc *databasev1alpha1.DatabaseCluster) {
	type container struct {
		Name, Image   string
		Command       []string
		RestartPolicy *corev1.ContainerRestartPolicy
	}
	var init []container
	for _, c := range pod.Spec.InitContainers {
		init = append(init, container{c.Name, c.Image, c.Command, c.RestartPolicy})
	}
	prepare, agent := dc.Spec.InitContainers[0], dc.Spec.Sidecars[0]
	g.Expect(init).To(Equal([]container{
		{prepare.Name, prepare.Image, prepare.Command, nil},
		{agent.Name, agent.Image, nil, ptr.To(corev1.ContainerRestartPolicyAlways)},
	}), pod.Name)

	var extra *corev1.Volume
	for i, v := range pod.Spec.Volumes {
		if v.Name == "extra" {
			extra = &pod.Spec.Volumes[i]
		}
	}
	g.Expect(extra).NotTo(BeNil(), "%s has the volume extra", pod.Name)
	g.Expect(extra.Projected).NotTo(BeNil(), pod.Name)
	g.Expect(extra.Projected.Sources).To(Equal(dc.Spec.Volumes[0].Projected.Sources), pod.Name)

	g.Expect(pod.Spec.Containers).To(HaveLen(1), pod.Name)
	g.Expect(pod.Spec.Containers[0].VolumeMounts).To(ContainElement(dc.Spec.VolumeMounts[0]), pod.Name)

	want := *dc.Spec.TopologySpreadConstraints[0].DeepCopy()
	want.LabelSelector = &metav1.LabelSelector{MatchLabels: dc.SelectorLabels()}
	g.Expect(pod.Spec.TopologySpreadConstraints).To(Equal([]corev1.TopologySpreadConstraint{want}), pod.Name)
}

// rollObservation is what a watch of a cluster's pods saw during one rolling update.
type rollObservation struct {
	// replaced are the pods of the old revision in the order their replacement began (they
	// became terminating, or were deleted).
	replaced []string
	// maxUnavailable is the most pods that were at one moment missing, terminating or not Ready.
	maxUnavailable int
	// timeline has a line per pod event, for a failure message.
	timeline []string
}

// observeRoll watches the pods selected by selector from before change is made until replicas
// pods, none of oldRevision, are Ready. The watch starts at the list's resourceVersion, so that
// every state each pod went through is seen, not just those a poll happens to catch.
func observeRoll(ctx context.Context, clientset kubernetes.Interface, ns string, selector map[string]string,
	replicas int, oldRevision string, change func()) rollObservation {
	GinkgoHelper()
	podsOf := clientset.CoreV1().Pods(ns)
	list, err := podsOf.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(selector).String()})
	Expect(err).NotTo(HaveOccurred())
	current := map[string]*corev1.Pod{}
	for i := range list.Items {
		current[list.Items[i].Name] = &list.Items[i]
	}
	w, err := podsOf.Watch(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(selector).String(), ResourceVersion: list.ResourceVersion,
	})
	Expect(err).NotTo(HaveOccurred())
	defer w.Stop()

	change()
	var seen rollObservation
	began := time.Now()
	deadline := time.After(rollTimeout)
	for !rolled(current, replicas, oldRevision) {
		select {
		case event, ok := <-w.ResultChan():
			Expect(ok).To(BeTrue(), "the watch of the pods ended; pod events:\n%s", strings.Join(seen.timeline, "\n"))
			pod, isPod := event.Object.(*corev1.Pod)
			Expect(isPod).To(BeTrue(), "a %s event of %T: %v", event.Type, event.Object, event.Object)
			if event.Type == watch.Deleted {
				delete(current, pod.Name)
			} else {
				current[pod.Name] = pod
			}
			revision := pod.Labels[appsv1.ControllerRevisionHashLabelKey]
			leaving := event.Type == watch.Deleted || pod.DeletionTimestamp != nil
			if revision == oldRevision && leaving && !slices.Contains(seen.replaced, pod.Name) {
				seen.replaced = append(seen.replaced, pod.Name)
			}
			unavailable := replicas
			for _, p := range current {
				if p.DeletionTimestamp == nil && podReady(p) {
					unavailable--
				}
			}
			seen.maxUnavailable = max(seen.maxUnavailable, unavailable)
			seen.timeline = append(seen.timeline, fmt.Sprintf("%6dms %-8s %s uid=%s revision=%s ready=%t terminating=%t unavailable=%d",
				time.Since(began).Milliseconds(), event.Type, pod.Name, pod.UID, revision, podReady(pod), pod.DeletionTimestamp != nil, unavailable))
		case <-deadline:
			Fail(fmt.Sprintf("the pods did not roll within %s; pod events:\n%s", rollTimeout, strings.Join(seen.timeline, "\n")))
		}
	}
	return seen
}

// rolled says whether current holds replicas pods, each Ready, not terminating and not of
// oldRevision.
func rolled(current map[string]*corev1.Pod, replicas int, oldRevision string) bool {
	if len(current) != replicas {
		return false
	}
	for _, pod := range current {
		if pod.DeletionTimestamp != nil || !podReady(pod) || pod.Labels[appsv1.ControllerRevisionHashLabelKey] == oldRevision {
			return false
		}
	}
	return true
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// revisionCount is the number of ControllerRevisions of dc's StatefulSet.
func revisionCount(ctx context.Context, ns string, dc *databasev1alpha1.DatabaseCluster) int {
	GinkgoHelper()
	var revisions appsv1.ControllerRevisionList
	Expect(k8s.List(ctx, &revisions, client.InNamespace(ns), client.MatchingLabels(dc.SelectorLabels()))).To(Succeed())
	return len(revisions.Items)
}
