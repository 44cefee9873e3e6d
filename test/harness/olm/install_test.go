package olm

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// withStatus sets status on obj and returns it.
func withStatus(obj *unstructured.Unstructured, status map[string]any) *unstructured.Unstructured {
	obj.Object["status"] = status
	return obj
}

func fakeClient(objs ...client.Object) client.Client {
	return fake.NewClientBuilder().WithObjects(objs...).Build()
}

var _ = Describe("Install modes", Label("unit"), func() {
	DescribeTable("parses operator-sdk's --install-mode syntax",
		func(in string, want InstallMode, targets []string) {
			got, err := ParseInstallMode(in)
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(want))
			Expect(got.Targets("ns")).To(Equal(targets))
		},
		Entry("empty is OwnNamespace", "", InstallMode{Type: "OwnNamespace"}, []string{"ns"}),
		Entry("OwnNamespace", "OwnNamespace", InstallMode{Type: "OwnNamespace"}, []string{"ns"}),
		Entry("AllNamespaces", "AllNamespaces", InstallMode{Type: "AllNamespaces"}, nil),
		Entry("SingleNamespace", "SingleNamespace=other", InstallMode{Type: "SingleNamespace", TargetNamespaces: []string{"other"}}, []string{"other"}),
		Entry("MultiNamespace", "MultiNamespace=a, b", InstallMode{Type: "MultiNamespace", TargetNamespaces: []string{"a", "b"}}, []string{"a", "b"}),
	)

	DescribeTable("refuses what it cannot mean",
		func(in string) {
			_, err := ParseInstallMode(in)
			Expect(err).To(MatchError(`install mode "` + in + `": want OwnNamespace, AllNamespaces, SingleNamespace=NS or MultiNamespace=NS1,NS2`))
		},
		Entry("an unknown type", "Cluster"),
		Entry("SingleNamespace without a namespace", "SingleNamespace"),
		Entry("SingleNamespace with two", "SingleNamespace=a,b"),
		Entry("MultiNamespace with one", "MultiNamespace=a"),
		Entry("OwnNamespace with a target", "OwnNamespace=a"),
	)

	It("checks the mode against the bundle's CSV", func() {
		b, err := ReadBundle(filepath.Join("..", "..", "..", "bundle"))
		Expect(err).NotTo(HaveOccurred())
		Expect(InstallMode{Type: InstallModeOwnNamespace}.SupportedBy(b)).To(Succeed())
		Expect(InstallMode{Type: InstallModeAllNamespaces}.SupportedBy(b)).To(Succeed())
		Expect(InstallMode{Type: InstallModeMultiNamespace, TargetNamespaces: []string{"a", "b"}}.SupportedBy(b)).To(Succeed())
		released, err := ReadBundle(filepath.Join("..", "..", "..", "hack", "olm", "released", "0.2.0"))
		Expect(err).NotTo(HaveOccurred())
		Expect(InstallMode{Type: InstallModeMultiNamespace, TargetNamespaces: []string{"a", "b"}}.SupportedBy(released)).To(MatchError(
			released.CSVName + " does not support install mode MultiNamespace (supported: OwnNamespace, SingleNamespace, AllNamespaces)"))
	})
})

var _ = Describe("EnsureOperatorGroup", Label("unit"), func() {
	ctx := context.Background()
	labels := map[string]string{ManagedByLabel: ManagedBy}

	It("creates one, labelled, when the namespace has none", func() {
		c := fakeClient()
		name, created, err := EnsureOperatorGroup(ctx, c, "ns", "pkg", []string{"ns"}, labels)
		Expect(err).NotTo(HaveOccurred())
		Expect(name).To(Equal("pkg"))
		Expect(created).To(BeTrue())
		og := NewOperatorGroup("ns", "pkg")
		Expect(c.Get(ctx, client.ObjectKeyFromObject(og), og)).To(Succeed())
		Expect(og.GetLabels()).To(Equal(labels))
		Expect(og.Object["spec"]).To(Equal(map[string]any{"targetNamespaces": []any{"ns"}}))
	})

	It("uses an existing one with the same targets", func() {
		c := fakeClient(BuildOperatorGroup("ns", "theirs", []string{"ns"}, nil))
		name, created, err := EnsureOperatorGroup(ctx, c, "ns", "pkg", []string{"ns"}, labels)
		Expect(err).NotTo(HaveOccurred())
		Expect(name).To(Equal("theirs"))
		Expect(created).To(BeFalse())
	})

	It("refuses an existing one with other targets", func() {
		c := fakeClient(BuildOperatorGroup("ns", "theirs", nil, nil))
		_, _, err := EnsureOperatorGroup(ctx, c, "ns", "pkg", []string{"ns"}, labels)
		Expect(err).To(MatchError("namespace ns already has OperatorGroup theirs targeting all namespaces, not [ns] as the install mode needs: delete it or pick another install mode"))
	})

	It("refuses a namespace with two", func() {
		c := fakeClient(BuildOperatorGroup("ns", "a", nil, nil), BuildOperatorGroup("ns", "b", nil, nil))
		_, _, err := EnsureOperatorGroup(ctx, c, "ns", "pkg", nil, labels)
		Expect(err).To(MatchError("namespace ns has 2 OperatorGroups; OLM installs nothing in a namespace with more than one"))
	})
})

var _ = Describe("Install status", Label("unit"), func() {
	failedCSV := withStatus(NewCSV("ns", "pkg.v1"), map[string]any{
		"phase": "Failed", "reason": "InstallComponentFailed", "message": "install strategy failed: deployment not ready",
	})
	failedPlan := withStatus(NewObject(APIVersionV1alpha1, KindInstallPlan, "ns", "install-abc"), map[string]any{
		"phase": "Failed",
		"conditions": []any{map[string]any{
			"type": "Installed", "status": "False", "reason": "InstallComponentFailed", "message": "error creating csv pkg.v1: forbidden",
		}},
	})
	stuckSub := withStatus(NewSubscription("ns", "pkg"), map[string]any{
		"state": "UpgradePending",
		"conditions": []any{
			map[string]any{"type": "ResolutionFailed", "status": "True", "reason": "ConstraintsNotSatisfiable", "message": "no operators found in channel stable"},
			map[string]any{"type": "CatalogSourcesUnhealthy", "status": "False", "reason": "AllCatalogSourcesHealthy"},
		},
	})

	It("reads a Subscription's condition by type", func() {
		deprecated := withStatus(NewSubscription("ns", "pkg"), map[string]any{
			"conditions": []any{
				map[string]any{"type": "Deprecated", "status": "True", "message": "rollup"},
				map[string]any{"type": "ChannelDeprecated", "status": "True", "message": "use candidate-v0"},
			},
		})
		status, message := SubscriptionCondition(deprecated, "ChannelDeprecated")
		Expect([]string{status, message}).To(Equal([]string{"True", "use candidate-v0"}))
		status, message = SubscriptionCondition(stuckSub, "ChannelDeprecated")
		Expect([]string{status, message}).To(Equal([]string{"", ""}))
	})

	DescribeTable("says why an install failed, or that it did not yet",
		func(s installState, failure, described string) {
			Expect(s.failure()).To(Equal(failure))
			Expect(s.String()).To(Equal(described))
		},
		Entry("a failed CSV", installState{csv: failedCSV, csvName: "pkg.v1"},
			"ClusterServiceVersion ns/pkg.v1: phase Failed (InstallComponentFailed: install strategy failed: deployment not ready)",
			"ClusterServiceVersion ns/pkg.v1: phase Failed (InstallComponentFailed: install strategy failed: deployment not ready)"),
		Entry("a failed InstallPlan", installState{plan: failedPlan, csvName: "pkg.v1"},
			"InstallPlan ns/install-abc: phase Failed (Installed=False (InstallComponentFailed: error creating csv pkg.v1: forbidden))",
			"InstallPlan ns/install-abc: phase Failed (Installed=False (InstallComponentFailed: error creating csv pkg.v1: forbidden)); ClusterServiceVersion pkg.v1: not created yet"),
		Entry("a Subscription that cannot resolve", installState{subscription: stuckSub, csvName: "pkg.v1"},
			"",
			"Subscription ns/pkg: state UpgradePending (ResolutionFailed=True (ConstraintsNotSatisfiable: no operators found in channel stable)); ClusterServiceVersion pkg.v1: not created yet"),
	)

	It("gives up on a CSV that stays Failed for csvFailedGrace, quoting it", func() {
		DeferCleanup(func(old time.Duration) { csvFailedGrace = old }, csvFailedGrace)
		csvFailedGrace = 500 * time.Millisecond
		began := time.Now()
		_, err := WaitForCSV(timeoutCtx(time.Minute), fakeClient(failedCSV.DeepCopy()), "ns", "pkg.v1")
		Expect(err).To(MatchError("the install failed (the CSV stayed Failed for 500ms): ClusterServiceVersion ns/pkg.v1: phase Failed (InstallComponentFailed: install strategy failed: deployment not ready)"))
		Expect(time.Since(began)).To(BeNumerically(">=", 500*time.Millisecond))
	})

	It("waits through a CSV that is Failed for a moment, as OLM re-evaluates it", func() {
		csv := withStatus(NewCSV("ns", "pkg.v1"), map[string]any{
			"phase": "Failed", "reason": "RequirementsNotMet", "message": "requirements no longer met",
		})
		c := fakeClient(csv)
		go func() {
			defer GinkgoRecover()
			time.Sleep(time.Second)
			recovered := withStatus(NewCSV("ns", "pkg.v1"), map[string]any{"phase": "Succeeded"})
			Expect(c.Get(context.Background(), client.ObjectKeyFromObject(csv), csv)).To(Succeed())
			recovered.SetResourceVersion(csv.GetResourceVersion())
			Expect(c.Update(context.Background(), recovered)).To(Succeed())
		}()
		got, err := WaitForCSV(timeoutCtx(time.Minute), c, "ns", "pkg.v1")
		Expect(err).NotTo(HaveOccurred())
		Expect(phase(got)).To(Equal("Succeeded"))
	})

	It("stops waiting as soon as the InstallPlan fails, quoting it", func() {
		sub := withStatus(NewSubscription("ns", "pkg"), map[string]any{
			"installPlanRef": map[string]any{"namespace": "ns", "name": "install-abc"},
		})
		_, err := waitInstalled(timeoutCtx(time.Minute), fakeClient(sub, failedPlan.DeepCopy()), sub, "ns", "pkg.v1")
		Expect(err).To(MatchError(ContainSubstring("the install failed: ")))
		Expect(err).To(MatchError(ContainSubstring("InstallPlan ns/install-abc: phase Failed (Installed=False (InstallComponentFailed: error creating csv pkg.v1: forbidden))")))
	})

	It("times out with the last state of the Subscription, the InstallPlan and the CSV", func() {
		sub := stuckSub.DeepCopy()
		sub.Object["status"].(map[string]any)["installPlanRef"] = map[string]any{"namespace": "ns", "name": "install-abc"}
		plan := withStatus(NewObject(APIVersionV1alpha1, KindInstallPlan, "ns", "install-abc"), map[string]any{"phase": "Installing"})
		c := fakeClient(sub, plan)
		waitCtx, cancel := context.WithTimeoutCause(context.Background(), 600*time.Millisecond, errors.New("timed out after 600ms"))
		defer cancel()
		_, err := waitInstalled(waitCtx, c, sub, "ns", "pkg.v1")
		Expect(err).To(MatchError("waiting for ClusterServiceVersion ns/pkg.v1 to succeed: timed out after 600ms; last seen: " +
			"Subscription ns/pkg: state UpgradePending (ResolutionFailed=True (ConstraintsNotSatisfiable: no operators found in channel stable)); " +
			"InstallPlan ns/install-abc: phase Installing; ClusterServiceVersion pkg.v1: not created yet"))
	})

	It("returns the CSV once it has Succeeded", func() {
		csv := withStatus(NewCSV("ns", "pkg.v1"), map[string]any{"phase": "Succeeded"})
		got, err := WaitForCSV(timeoutCtx(time.Minute), fakeClient(csv), "ns", "pkg.v1")
		Expect(err).NotTo(HaveOccurred())
		Expect(got.GetName()).To(Equal("pkg.v1"))
	})
})

// timeoutCtx is a background context that ends after d.
func timeoutCtx(d time.Duration) context.Context {
	c, cancel := context.WithTimeout(context.Background(), d)
	DeferCleanup(cancel)
	return c
}

var _ = Describe("poll", Label("unit"), func() {
	It("quotes the last thing it saw, not the error of a check cut short by the deadline", func(ctx SpecContext) {
		// The first check sees a state; the second (one pollInterval later) is still waiting on
		// the API server when the deadline passes, as a Get would.
		short, cancel := context.WithTimeout(ctx, pollInterval+150*time.Millisecond)
		defer cancel()
		calls := 0
		err := poll(short, "the thing", func(ctx context.Context) (bool, string, error) {
			calls++
			if calls == 1 {
				return false, "state TRANSIENT_FAILURE", nil
			}
			<-ctx.Done()
			return false, ctx.Err().Error(), nil
		})
		Expect(calls).To(Equal(2))
		Expect(err).To(MatchError("waiting for the thing: context deadline exceeded; last seen: state TRANSIENT_FAILURE"))
	})
})
