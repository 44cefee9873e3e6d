package leaderlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func TestLeaderLock(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Leader election lock")
}

var _ = Describe("Whom a Get waits on", Label("unit"), func() {
	rec := func(holder string) *rl.LeaderElectionRecord { return &rl.LeaderElectionRecord{HolderIdentity: holder} }
	DescribeTable("waits only on another replica's Lease, while this one holds nothing",
		func(held bool, holder string, want bool) {
			l := &Lock{Interface: identity("me"), held: held}
			Expect(l.following(rec(holder))).To(Equal(want))
		},
		Entry("another replica's", false, "other", true),
		Entry("released", false, "", false),
		Entry("this replica's", false, "me", false),
		Entry("another's, but this replica wrote it since (it may lead)", true, "other", false),
	)

	It("reports a holder that stopped renewing as a release, with the rest of the record", func() {
		l := &Lock{Interface: identity("me"), held: true}
		got, raw, err := l.released(&rl.LeaderElectionRecord{HolderIdentity: "other", LeaseDurationSeconds: 15, LeaderTransitions: 3})
		Expect(err).NotTo(HaveOccurred())
		Expect(*got).To(Equal(rl.LeaderElectionRecord{LeaseDurationSeconds: 15, LeaderTransitions: 3}))
		Expect(string(raw)).To(ContainSubstring(`"holderIdentity":""`))
		Expect(l.held).To(BeFalse())
	})
})

// countGets counts the Lease reads of lock's Lease lock; call it before the elector runs.
func countGets(lock *Lock) *atomic.Int64 {
	c := &counting{Interface: lock.Interface}
	lock.Interface = c
	return &c.gets
}

type counting struct {
	rl.Interface
	gets atomic.Int64
}

func (c *counting) Get(ctx context.Context) (*rl.LeaderElectionRecord, []byte, error) {
	c.gets.Add(1)
	return c.Interface.Get(ctx)
}

// identity is a resource lock with only an identity, for the unit specs.
type identity string

func (i identity) Identity() string                                            { return string(i) }
func (identity) Describe() string                                              { return "test" }
func (identity) RecordEvent(string)                                            {}
func (identity) Get(context.Context) (*rl.LeaderElectionRecord, []byte, error) { panic("unused") }
func (identity) Create(context.Context, rl.LeaderElectionRecord) error         { panic("unused") }
func (identity) Update(context.Context, rl.LeaderElectionRecord) error         { panic("unused") }

var _ = Describe("Leader election with the watched lock", Ordered, Label("integration"), func() {
	const namespace = "default"
	var cfg *rest.Config

	BeforeAll(func() {
		env := &envtest.Environment{}
		var err error
		cfg, err = env.Start()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(env.Stop)
	})

	// candidate runs a client-go elector on a watched lock of Lease name until its context ends.
	type candidate struct {
		lock    *Lock
		gets    *atomic.Int64 // the Lease reads of its Lease lock
		cancel  context.CancelFunc
		leading atomic.Bool
		led     chan time.Time
		done    chan struct{}
	}
	start := func(name string, lease, renew, retry time.Duration, release bool) *candidate {
		lock, stop, err := New(cfg, Options{Namespace: namespace, Name: name, LeaseDuration: lease, RenewDeadline: renew})
		Expect(err).NotTo(HaveOccurred())
		c := &candidate{lock: lock, gets: countGets(lock), led: make(chan time.Time, 1), done: make(chan struct{})}
		elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: lock, LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry, ReleaseOnCancel: release, Name: name,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) { c.leading.Store(true); c.led <- time.Now() },
				OnStoppedLeading: func() { c.leading.Store(false) },
			},
		})
		Expect(err).NotTo(HaveOccurred())
		var ctx context.Context
		ctx, c.cancel = context.WithCancel(context.Background())
		go func() { defer close(c.done); defer stop(); elector.Run(ctx) }()
		DeferCleanup(func() { c.cancel(); <-c.done })
		return c
	}
	// stopLeading ends c's elector and waits until it has stopped (and released, if it does).
	stopLeading := func(c *candidate) { c.cancel(); Eventually(c.done).Should(BeClosed()) }
	// waiting says whether c's lock waits on the watch.
	waiting := func(c *candidate) func() int32 { return c.lock.waiting.Load }
	lease := func(ctx context.Context, name string) *coordinationv1.Lease {
		clients, err := kubernetes.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		l, err := clients.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		return l
	}

	It("hands a released Lease over as soon as it is released: the follower waits on the watch and does not poll", func(ctx SpecContext) {
		const name = "released"
		const retry = 2 * time.Second
		a := start(name, time.Minute, 50*time.Second, retry, true)
		Eventually(a.led).Should(Receive())
		b := start(name, time.Minute, 50*time.Second, retry, true)
		gets := b.gets
		Eventually(waiting(b)).Should(BeEquivalentTo(1))
		polled := gets.Load()
		Consistently(gets.Load).WithTimeout(3*retry).Should(Equal(polled), "the follower read the Lease while a renewed it")
		Expect(b.leading.Load()).To(BeFalse())

		stopLeading(a)
		Eventually(b.led).WithTimeout(10 * time.Second).Should(Receive())
		Expect(gets.Load()).To(Equal(polled+1), "one read after the release, then the elector's update")
		l := lease(ctx, name)
		Expect(*l.Spec.HolderIdentity).To(Equal(b.lock.Identity()))
		Expect(*l.Spec.LeaseTransitions).To(BeEquivalentTo(1))
	}, SpecTimeout(time.Minute))

	It("takes over from a holder that stopped renewing, never while it renews nor before the lease duration has passed", func(ctx SpecContext) {
		const name = "expired"
		const leaseDuration = 4 * time.Second
		a := start(name, leaseDuration, 3*time.Second, time.Second, false)
		Eventually(a.led).Should(Receive())
		b := start(name, leaseDuration, 3*time.Second, time.Second, false)
		Eventually(waiting(b)).Should(BeEquivalentTo(1))
		gets := b.gets
		polled := gets.Load()
		Consistently(b.leading.Load).WithTimeout(2*leaseDuration).Should(BeFalse(), "the follower took a Lease that is being renewed")

		stopLeading(a) // no release: as if it had crashed
		lastRenew := lease(ctx, name).Spec.RenewTime.Time
		var led time.Time
		Eventually(b.led).WithTimeout(4 * leaseDuration).Should(Receive(&led))
		Expect(led).To(BeTemporally(">=", lastRenew.Add(leaseDuration)), "taken over before the Lease expired")
		GinkgoWriter.Printf("taken over %s after the last renewal\n", led.Sub(lastRenew))
		Expect(gets.Load()).To(BeNumerically("<=", polled+3), "the follower polled while it waited")
		l := lease(ctx, name)
		Expect(*l.Spec.HolderIdentity).To(Equal(b.lock.Identity()))
		Expect(*l.Spec.LeaseTransitions).To(BeEquivalentTo(1))
	}, SpecTimeout(time.Minute))

	It("still emits the elector's event on the Lease", func(ctx SpecContext) {
		clients, err := kubernetes.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) []string {
			events, err := clients.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			var reasons []string
			for _, e := range events.Items {
				if e.InvolvedObject.Kind == "Lease" && e.InvolvedObject.Name == "released" && e.Type == corev1.EventTypeNormal {
					reasons = append(reasons, e.Reason)
				}
			}
			return reasons
		}).WithContext(ctx).Should(ContainElement("LeaderElection"))
	}, SpecTimeout(30*time.Second))
})
