//go:build linux && node

package nodee2e

import (
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// brokenImage is an image the etcd sample cannot run: it has no /usr/local/bin/etcd, so the
// container fails to start and the kubelet backs it off (CrashLoopBackOff).
const brokenImage = testdbImage

// stuckRolloutSpecs are the etcd story's stuck rollouts (kubernetes/kubernetes#67250): an image
// change whose new pod crash-loops stops the StatefulSet's rolling update at its first pod;
// the operator says so, keeps quorum, and heals it when the spec is reverted, or by itself with
// spec.rollout.autoRollback. cluster returns the story's running etcd and its client.
func stuckRolloutSpecs(cluster func() (*databasev1alpha1.DatabaseCluster, *etcdClient)) {
	It("reports a stuck rollout, keeps quorum, and heals when the spec is reverted, with no hand on a pod", func(ctx SpecContext) {
		dc, db := cluster()
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		good := dc.Spec.Image
		first := dc.StatefulSetName() + "-0"
		second := dc.StatefulSetName() + "-1"
		before := podsOf(ctx, dc)

		began := time.Now()
		update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Image = brokenImage })
		expectProgressing(ctx, dc, databasev1alpha1.ReasonRolloutStuck,
			"pod "+dc.StatefulSetName()+"-2: container database CrashLoopBackOff")
		report("etcd: image without etcd -> RolloutStuck", time.Since(began))

		// Quorum kept: the two members the rolling update has not reached serve every key.
		pods := podsOf(ctx, dc)
		for _, name := range []string{first, second} {
			Expect(pods[name].UID).To(Equal(before[name].UID), "pod %s was touched", name)
			pod := pods[name]
			Expect(isReady(&pod)).To(BeTrue(), "pod %s is not Ready", name)
		}
		db.expectAll(ctx)

		reverted := time.Now()
		update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Image = good })
		waitAvailable(ctx, dc, reverted)
		report("etcd: stuck rollout, spec reverted -> Available, no hand on a pod", time.Since(reverted))
		pods = podsOf(ctx, dc)
		for _, name := range []string{first, second} {
			Expect(pods[name].UID).To(Equal(before[name].UID), "pod %s was touched", name)
		}
		for _, p := range pods {
			Expect(p.Spec.Containers[0].Image).To(Equal(good))
		}
		// Who replaced the stuck pod: the operator (a ReplacedStuckPod event) or, when it got
		// there first, the StatefulSet controller itself. Either way no hand touched a pod.
		reasons := eventReasons(ctx, dc)
		Expect(reasons).To(ContainElement(databasev1alpha1.ReasonRolloutStuck))
		byOperator := 0
		if slices.Contains(reasons, "ReplacedStuckPod") {
			byOperator = 1
		}
		reportCount("etcd: stuck pods the operator replaced after the revert (0: the StatefulSet controller did)", byOperator)
		db.expectAll(ctx)
	}, NodeTimeout(8*time.Minute))

	It("with spec.rollout.autoRollback, returns to the previous revision by itself, once, and keeps every key", func(ctx SpecContext) {
		dc, db := cluster()
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		good := dc.Spec.Image
		update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.Rollout = &databasev1alpha1.RolloutSpec{AutoRollback: true}
		})
		before := podsOf(ctx, dc)

		began := time.Now()
		update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Image = brokenImage })
		expectProgressing(ctx, dc, databasev1alpha1.ReasonRolledBack, "spec.rollout.autoRollback returned StatefulSet "+dc.StatefulSetName())
		report("etcd: image without etcd -> RolledBack (autoRollback)", time.Since(began))
		// Available on the previous revision, while the spec still asks for the broken image.
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
			g.Expect(dc.Status.ReadyReplicas).To(Equal(*dc.Spec.Replicas))
			g.Expect(apimeta.IsStatusConditionTrue(dc.Status.Conditions, databasev1alpha1.ConditionAvailable)).To(BeTrue())
			pods := podsOf(ctx, dc)
			g.Expect(pods).To(HaveLen(etcdMembers))
			for name, p := range pods {
				g.Expect(p.Spec.Containers[0].Image).To(Equal(good), "pod %s", name)
			}
		}).WithContext(ctx).WithTimeout(4 * time.Minute).Should(Succeed())
		report("etcd: image without etcd -> Available again on the previous revision (autoRollback)", time.Since(began))
		for name, p := range podsOf(ctx, dc) {
			if !strings.HasSuffix(name, "-2") {
				Expect(p.UID).To(Equal(before[name].UID), "pod %s was touched", name)
			}
		}
		db.expectAll(ctx)

		// Held: the spec still asks for the broken image, the StatefulSet keeps the old one.
		Consistently(func(g Gomega) string {
			return statefulSet(ctx, g, dc).Spec.Template.Spec.Containers[0].Image
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Equal(good))
		reasons := eventReasons(ctx, dc)
		Expect(slices.DeleteFunc(reasons, func(r string) bool { return r != databasev1alpha1.ReasonRolledBack })).To(HaveLen(1),
			"one rollback for the template")

		// The spec reverted to what runs: nothing rolls, the rollback is released.
		held := podsOf(ctx, dc)
		update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Image = good })
		expectProgressing(ctx, dc, databasev1alpha1.ReasonRolloutComplete, "all 3 pods run the current revision")
		Expect(uids(podsOf(ctx, dc))).To(Equal(uids(held)), "reverting the spec to the running template rolled a pod")
		db.expectAll(ctx)
	}, NodeTimeout(8*time.Minute))
}

// expectProgressing waits until dc's Progressing condition has reason and a message starting
// with prefix, for the spec's current generation.
func expectProgressing(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, reason, prefix string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		c := apimeta.FindStatusCondition(dc.Status.Conditions, databasev1alpha1.ConditionProgressing)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.ObservedGeneration).To(Equal(dc.Generation))
		g.Expect(c.Reason).To(Equal(reason), c.Message)
		g.Expect(c.Message).To(HavePrefix(prefix))
	}).WithContext(ctx).WithTimeout(4 * time.Minute).WithPolling(time.Second).Should(Succeed())
}

// eventReasons lists the reasons of the events about dc (events.k8s.io, as the operator
// records them).
func eventReasons(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster) []string {
	GinkgoHelper()
	var list eventsv1.EventList
	Expect(k8s.List(ctx, &list, client.InNamespace(dc.Namespace))).To(Succeed())
	var reasons []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "DatabaseCluster" && e.Regarding.Name == dc.Name {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}

// uids maps each pod's name to its UID.
func uids(pods map[string]corev1.Pod) map[string]types.UID {
	out := map[string]types.UID{}
	for name, p := range pods {
		out[name] = p.UID
	}
	return out
}
