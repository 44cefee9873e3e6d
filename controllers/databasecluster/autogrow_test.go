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

package databasecluster

import (
	"math/rand/v2"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

// growNow is the time of the auto-grow tables.
var growNow = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// growSpec is spec.storage.autoGrow with the defaults (80%, 20%, 6 h) and maxSize max.
func growSpec(maxSize string) *databasev1alpha1.AutoGrowSpec {
	return &databasev1alpha1.AutoGrowSpec{MaxSize: resource.MustParse(maxSize)}
}

type growClaimOption func(*corev1.PersistentVolumeClaim)

// growClaim is data-db-<ordinal>, bound, asking for and given size.
func growClaim(ordinal, size string, opts ...growClaimOption) corev1.PersistentVolumeClaim {
	q := resource.MustParse(size)
	c := corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-db-" + ordinal},
		Spec:       corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q}}},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: q}},
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func withCapacity(size string) growClaimOption {
	return func(c *corev1.PersistentVolumeClaim) {
		c.Status.Capacity[corev1.ResourceStorage] = resource.MustParse(size)
	}
}

func withClaimCondition(t corev1.PersistentVolumeClaimConditionType) growClaimOption {
	return func(c *corev1.PersistentVolumeClaim) {
		c.Status.Conditions = append(c.Status.Conditions, corev1.PersistentVolumeClaimCondition{Type: t, Status: corev1.ConditionTrue})
	}
}

func withGrownAgo(d time.Duration) growClaimOption {
	return func(c *corev1.PersistentVolumeClaim) {
		c.Annotations = map[string]string{databasev1alpha1.AutoGrownAtAnnotation: growNow.Add(-d).Format(time.RFC3339)}
	}
}

func withClaimDeleting() growClaimOption {
	return func(c *corev1.PersistentVolumeClaim) { c.DeletionTimestamp = &metav1.Time{Time: growNow} }
}

// full is a usage of percent (of 1000 bytes).
func full(percent int64) memberUsage {
	return memberUsage{used: percent * 10, capacity: 1000, at: growNow}
}

// plan decides with the claims and usage by member, the class expandable.
func plan(spec *databasev1alpha1.AutoGrowSpec, claims []corev1.PersistentVolumeClaim, usage map[string]memberUsage, expandable bool) growthPlan {
	return decideGrowth(growthInput{spec: spec, claims: claims, usage: usage, expandable: expandable, class: "standard", now: growNow})
}

// grows is the growth plan of one claim from..to at percent.
func grows(claim, from, to string, percent int64) *claimGrowth {
	return &claimGrowth{claim: claim, from: resource.MustParse(from), to: resource.MustParse(to), percent: percent}
}

var _ = Describe("auto-grow decision", func() {
	DescribeTable("which claim grows, and what the others wait for",
		func(spec *databasev1alpha1.AutoGrowSpec, claims []corev1.PersistentVolumeClaim, usage map[string]memberUsage, expandable bool, want growthPlan) {
			got := plan(spec, claims, usage, expandable)
			if want.grow != nil {
				Expect(got.grow).NotTo(BeNil())
				Expect(got.grow.claim).To(Equal(want.grow.claim))
				Expect(got.grow.from.String()).To(Equal(want.grow.from.String()))
				Expect(got.grow.to.String()).To(Equal(want.grow.to.String()))
				Expect(got.grow.percent).To(Equal(want.grow.percent))
			} else {
				Expect(got.grow).To(BeNil())
			}
			Expect(got.atMax).To(Equal(want.atMax))
			Expect(got.fullAtMax).To(Equal(want.fullAtMax))
			Expect(got.notAllowed).To(Equal(want.notAllowed))
			Expect(got.waiting).To(Equal(want.waiting))
			Expect(got.recheck).To(Equal(want.recheck))
		},
		Entry("below the threshold: nothing", growSpec("10Gi"),
			[]corev1.PersistentVolumeClaim{growClaim("0", "1Gi")}, map[string]memberUsage{"db-0": full(79)}, true, growthPlan{}),
		Entry("79.1% rounds up to 80%: at the threshold it grows by 20%, to a whole Mi",
			growSpec("10Gi"), []corev1.PersistentVolumeClaim{growClaim("0", "1Gi")},
			map[string]memberUsage{"db-0": {used: 791, capacity: 1000}}, true,
			growthPlan{grow: grows("data-db-0", "1Gi", "1229Mi", 80)}),
		Entry("not measured (pod not running): nothing", growSpec("10Gi"),
			[]corev1.PersistentVolumeClaim{growClaim("0", "1Gi")}, map[string]memberUsage{"db-1": full(95)}, true, growthPlan{}),
		Entry("a claim being deleted: nothing", growSpec("10Gi"),
			[]corev1.PersistentVolumeClaim{growClaim("0", "1Gi", withClaimDeleting())}, map[string]memberUsage{"db-0": full(95)}, true, growthPlan{}),
		Entry("in flight: capacity below the request", growSpec("10Gi"),
			[]corev1.PersistentVolumeClaim{growClaim("0", "2Gi", withCapacity("1Gi"))}, map[string]memberUsage{"db-0": full(90)}, true,
			growthPlan{waiting: []string{"claim data-db-0 is 90% full and being expanded to 2Gi"}}),
		Entry("in flight: the kubelet has the file system to resize", growSpec("10Gi"),
			[]corev1.PersistentVolumeClaim{growClaim("0", "2Gi", withClaimCondition(corev1.PersistentVolumeClaimFileSystemResizePending))},
			map[string]memberUsage{"db-0": full(90)}, true,
			growthPlan{waiting: []string{"claim data-db-0 is 90% full and being expanded to 2Gi"}}),
		Entry("in flight: a resize error is not retried over", growSpec("10Gi"),
			[]corev1.PersistentVolumeClaim{growClaim("0", "2Gi", withClaimCondition(corev1.PersistentVolumeClaimControllerResizeError))},
			map[string]memberUsage{"db-0": full(90)}, true,
			growthPlan{waiting: []string{"claim data-db-0 is 90% full and being expanded to 2Gi"}}),
		Entry("unbound (no capacity yet): in flight, never grown", growSpec("10Gi"),
			[]corev1.PersistentVolumeClaim{func() corev1.PersistentVolumeClaim {
				c := growClaim("0", "1Gi")
				c.Status = corev1.PersistentVolumeClaimStatus{}
				return c
			}()}, map[string]memberUsage{"db-0": full(90)}, true,
			growthPlan{waiting: []string{"claim data-db-0 is 90% full and being expanded to 1Gi"}}),
		Entry("grown 5 h ago with a 6 h interval: waits, rechecked when the interval ends", growSpec("10Gi"),
			[]corev1.PersistentVolumeClaim{growClaim("0", "2Gi", withGrownAgo(5*time.Hour))}, map[string]memberUsage{"db-0": full(85)}, true,
			growthPlan{waiting: []string{"claim data-db-0 is 85% full and grows again after 2026-11-28T13:00:00Z (minIntervalSeconds 21600)"},
				recheck: time.Hour}),
		Entry("grown exactly 6 h ago: grows", growSpec("10Gi"),
			[]corev1.PersistentVolumeClaim{growClaim("0", "2Gi", withGrownAgo(6*time.Hour))}, map[string]memberUsage{"db-0": full(85)}, true,
			growthPlan{grow: grows("data-db-0", "2Gi", "2458Mi", 85)}),
		Entry("a shorter interval lets it grow sooner", func() *databasev1alpha1.AutoGrowSpec {
			s := growSpec("10Gi")
			s.MinIntervalSeconds = ptr.To[int32](3600)
			return s
		}(), []corev1.PersistentVolumeClaim{growClaim("0", "2Gi", withGrownAgo(time.Hour))}, map[string]memberUsage{"db-0": full(85)}, true,
			growthPlan{grow: grows("data-db-0", "2Gi", "2458Mi", 85)}),
		Entry("the StorageClass does not allow expansion: said, not grown", growSpec("10Gi"),
			[]corev1.PersistentVolumeClaim{growClaim("0", "1Gi")}, map[string]memberUsage{"db-0": full(90)}, false,
			growthPlan{notAllowed: []string{"claim data-db-0 is 90% full and StorageClass standard does not allow volume expansion (allowVolumeExpansion)"}}),
		Entry("the last step is clamped to maxSize", growSpec("1100Mi"),
			[]corev1.PersistentVolumeClaim{growClaim("0", "1Gi")}, map[string]memberUsage{"db-0": full(90)}, true,
			growthPlan{grow: grows("data-db-0", "1Gi", "1100Mi", 90)}),
		Entry("at maxSize and over the threshold: said, with the ratio, never grown", growSpec("2Gi"),
			[]corev1.PersistentVolumeClaim{growClaim("0", "2Gi")}, map[string]memberUsage{"db-0": full(92)}, true,
			growthPlan{atMax: []string{"claim data-db-0 is at maxSize 2Gi and 92% full"}, fullAtMax: 0.92}),
		Entry("above maxSize (size raised by hand past it, then the cap lowered): never shrunk, at maxSize", growSpec("2Gi"),
			[]corev1.PersistentVolumeClaim{growClaim("0", "3Gi")}, map[string]memberUsage{"db-0": full(95)}, true,
			growthPlan{atMax: []string{"claim data-db-0 is at maxSize 2Gi and 95% full"}, fullAtMax: 0.95}),
		Entry("one claim per pass: the fullest grows, the other waits", growSpec("10Gi"),
			[]corev1.PersistentVolumeClaim{growClaim("0", "1Gi"), growClaim("1", "1Gi"), growClaim("2", "1Gi")},
			map[string]memberUsage{"db-0": full(85), "db-1": full(95), "db-2": full(50)}, true,
			growthPlan{grow: grows("data-db-1", "1Gi", "1229Mi", 95),
				waiting: []string{"claim data-db-0 is 85% full and grows after data-db-1 (one claim at a time)"}}),
		Entry("equally full: the first by name grows", growSpec("10Gi"),
			[]corev1.PersistentVolumeClaim{growClaim("0", "1Gi"), growClaim("1", "1Gi")},
			map[string]memberUsage{"db-0": full(90), "db-1": full(90)}, true,
			growthPlan{grow: grows("data-db-0", "1Gi", "1229Mi", 90),
				waiting: []string{"claim data-db-1 is 90% full and grows after data-db-0 (one claim at a time)"}}),
	)

	DescribeTable("nextSize: current plus increment, rounded up, clamped to maxSize",
		func(current, increment, maxSize, want string) {
			spec := growSpec(maxSize)
			if increment != "" {
				spec.Increment = ptr.To(intstr.Parse(increment))
			}
			got := nextSize(resource.MustParse(current), spec)
			Expect(got.String()).To(Equal(want))
		},
		Entry("default 20% of 1Gi: 1228.8Mi up to 1229Mi", "1Gi", "", "100Gi", "1229Mi"),
		Entry("20% of 10Gi: 12Gi, whole Gi", "10Gi", "20%", "100Gi", "12Gi"),
		Entry("20% of 9Gi: 10.8Gi, at 10Gi or more rounds up to 11Gi", "9Gi", "20%", "100Gi", "11Gi"),
		Entry("100% doubles", "3Gi", "100%", "100Gi", "6Gi"),
		Entry("1% of 1Gi: 10.24Mi up to 11Mi", "1Gi", "1%", "100Gi", "1035Mi"),
		Entry("a quantity: 1Gi + 5Gi", "1Gi", "5Gi", "100Gi", "6Gi"),
		Entry("a decimal size: 1.5Gi + 20% = 1.8Gi, 1843.2Mi up to 1844Mi", "1.5Gi", "20%", "100Gi", "1844Mi"),
		Entry("a decimal SI size: 1G + 100M, up to a whole Mi", "1G", "100M", "100Gi", "1050Mi"),
		Entry("a bare integer is bytes: 1Gi + 1 byte, up to 1025Mi", "1Gi", "1", "100Gi", "1025Mi"),
		Entry("clamped to maxSize as written", "8Gi", "50%", "10G", "10G"),
		Entry("exactly maxSize", "5Gi", "100%", "10Gi", "10Gi"),
	)

	DescribeTable("percent rounds up",
		func(used, capacity, want int64) {
			Expect(memberUsage{used: used, capacity: capacity}.percent()).To(Equal(want))
		},
		Entry("empty", int64(0), int64(1000), int64(0)),
		Entry("79.1%", int64(791), int64(1000), int64(80)),
		Entry("exactly 80%", int64(800), int64(1000), int64(80)),
		Entry("full", int64(1000), int64(1000), int64(100)),
		Entry("no capacity reported", int64(10), int64(0), int64(0)),
	)
})

// autoGrowCluster is cluster db of 3 members with spec.storage.autoGrow (cap maxSize).
func autoGrowCluster(maxSize string) *databasev1alpha1.DatabaseCluster {
	dc := newCluster("db", withReplicas(3))
	dc.Spec.Storage.AutoGrow = growSpec(maxSize)
	return dc
}

var _ = Describe("the storage agent sidecar", func() {
	It("is not added without autoGrow: the template is BuildStatefulSet's, so an upgrade rolls nothing", func() {
		dc := newCluster("db", withReplicas(3))
		sts := buildStatefulSet(dc, specs.Inputs{AgentImage: "registry.example.com/operator@sha256:1"})
		Expect(sts).To(Equal(buildStatefulSet(dc, specs.Inputs{})))
	})
	It("is not added when the operator has no image for it", func() {
		dc := autoGrowCluster("10Gi")
		sts := buildStatefulSet(dc, specs.Inputs{})
		Expect(sts.Spec.Template.Spec.InitContainers).To(BeEmpty())
	})
	It("is a restricted native sidecar after the user's, reading the data volume read-only", func() {
		dc := autoGrowCluster("10Gi")
		dc.Spec.Sidecars = []corev1.Container{{Name: "exporter", Image: "registry.example.com/exporter:1"}}
		sts := buildStatefulSet(dc, specs.Inputs{AgentImage: "registry.example.com/operator@sha256:1"})
		init := sts.Spec.Template.Spec.InitContainers
		Expect(init).To(HaveLen(2))
		Expect(init[0].Name).To(Equal("exporter"))
		Expect(init[1]).To(Equal(corev1.Container{
			Name:            "storage-agent",
			Image:           "registry.example.com/operator@sha256:1",
			ImagePullPolicy: corev1.PullIfNotPresent,
			Command:         []string{"/manager", "storage-agent"},
			Args:            []string{"--path=/var/lib/database", "--listen=:9190"},
			Ports:           []corev1.ContainerPort{{Name: "storage-agent", ContainerPort: 9190, Protocol: corev1.ProtocolTCP}},
			VolumeMounts:    []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/database", ReadOnly: true}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
			},
			RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false), RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true),
				Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
		}))
		Expect(specs.NotRestricted(&sts.Spec.Template)).To(BeEmpty())
	})
})

var _ = Describe("the StorageAutoGrow condition", func() {
	cond := func(dc *databasev1alpha1.DatabaseCluster, obs autoGrowObservation, existing ...metav1.Condition) []metav1.Condition {
		conditions := append([]metav1.Condition(nil), existing...)
		setStorageAutoGrowCondition(&conditions, dc, obs)
		for i := range conditions {
			conditions[i].LastTransitionTime = metav1.Time{}
		}
		return conditions
	}
	want := func(status metav1.ConditionStatus, reason, message string) []metav1.Condition {
		return []metav1.Condition{{Type: "StorageAutoGrow", Status: status, Reason: reason, Message: message, ObservedGeneration: 1}}
	}
	It("does not exist without autoGrow, and is removed when autoGrow is", func() {
		Expect(cond(newCluster("db"), autoGrowObservation{ran: true}, metav1.Condition{Type: "StorageAutoGrow"})).To(BeEmpty())
	})
	It("is kept as it is while the phases stopped before auto-grow", func() {
		kept := metav1.Condition{Type: "StorageAutoGrow", Status: metav1.ConditionTrue, Reason: "Growing", Message: "m"}
		Expect(cond(autoGrowCluster("10Gi"), autoGrowObservation{}, kept)).To(Equal([]metav1.Condition{kept}))
	})
	DescribeTable("says what keeps a member from growing first, then what grows",
		func(obs autoGrowObservation, want []metav1.Condition) {
			obs.ran = true
			Expect(cond(autoGrowCluster("10Gi"), obs)).To(Equal(want))
		},
		Entry("no agent image", autoGrowObservation{noImage: true}, want(metav1.ConditionFalse, "UsageUnknown",
			"the operator has no storage agent image (RELATED_IMAGE_STORAGE_AGENT is not set on the manager): usage cannot be measured")),
		Entry("at maxSize before anything else", autoGrowObservation{unknown: []string{"db-1: timeout"}, plan: growthPlan{
			atMax: []string{"claim data-db-0 is at maxSize 10Gi and 92% full"}, notAllowed: []string{"x"}}},
			want(metav1.ConditionFalse, "AtMaxSize", "claim data-db-0 is at maxSize 10Gi and 92% full")),
		Entry("expansion not allowed", autoGrowObservation{plan: growthPlan{notAllowed: []string{"claim data-db-0 is 90% full and StorageClass standard does not allow volume expansion (allowVolumeExpansion)"}}},
			want(metav1.ConditionFalse, "ExpansionNotAllowed", "claim data-db-0 is 90% full and StorageClass standard does not allow volume expansion (allowVolumeExpansion)")),
		Entry("an agent that does not answer", autoGrowObservation{unknown: []string{"db-1: connection refused", "db-2: timeout"}},
			want(metav1.ConditionFalse, "UsageUnknown", "cannot read the storage agent of db-1: connection refused; db-2: timeout")),
		Entry("grown now, another waiting", autoGrowObservation{grew: grows("data-db-1", "1Gi", "1229Mi", 95),
			plan: growthPlan{waiting: []string{"claim data-db-0 is 85% full and grows after data-db-1 (one claim at a time)"}}},
			want(metav1.ConditionTrue, "Growing", "grew claim data-db-1 from 1Gi to 1229Mi: used 95% >= threshold 80%; "+
				"claim data-db-0 is 85% full and grows after data-db-1 (one claim at a time)")),
		Entry("an expansion in flight", autoGrowObservation{plan: growthPlan{waiting: []string{"claim data-db-0 is 90% full and being expanded to 2Gi"}}},
			want(metav1.ConditionTrue, "Growing", "claim data-db-0 is 90% full and being expanded to 2Gi")),
		Entry("no member measured yet (created, rolled or stopped)", autoGrowObservation{},
			want(metav1.ConditionTrue, "BelowThreshold", "no member runs the storage agent yet: nothing is measured")),
		Entry("every member below the threshold", autoGrowObservation{members: []databasev1alpha1.MemberStorage{{Name: "db-0"}, {Name: "db-1"}}},
			want(metav1.ConditionTrue, "BelowThreshold", "2 measured members are below 80% full")),
	)
	It("warns once when it turns to AtMaxSize, not at each message change", func() {
		atMax := metav1.Condition{Type: "StorageAutoGrow", Status: metav1.ConditionFalse, Reason: "AtMaxSize", Message: "claim data-db-0 is at maxSize 2Gi and 92% full"}
		growing := metav1.Condition{Type: "StorageAutoGrow", Status: metav1.ConditionTrue, Reason: "Growing"}
		Expect(reasonBegan([]metav1.Condition{growing}, []metav1.Condition{atMax}, "StorageAutoGrow", "AtMaxSize", "ExpansionNotAllowed")).To(Equal(&atMax))
		later := atMax
		later.Message = "claim data-db-0 is at maxSize 2Gi and 93% full"
		Expect(reasonBegan([]metav1.Condition{atMax}, []metav1.Condition{later}, "StorageAutoGrow", "AtMaxSize", "ExpansionNotAllowed")).To(BeNil())
		Expect(reasonBegan([]metav1.Condition{atMax}, []metav1.Condition{growing}, "StorageAutoGrow", "AtMaxSize", "ExpansionNotAllowed")).To(BeNil())
	})
})

// The data-safety property of auto-grow, on random claims and usage: at most one claim grows,
// it is one of the claims given (the member claims), it grows (never shrinks), never past
// maxSize, and never while it is being deleted, its expansion is in flight, its last growth is
// within minIntervalSeconds, or its class cannot expand. The decision deletes nothing: it only
// ever names one claim and a larger size.
var _ = Describe("auto-grow data safety (property)", func() {
	It("holds on 2,000 random clusters", func() {
		rng := newRand(GinkgoRandomSeed())
		sizes := []string{"512Mi", "1Gi", "1229Mi", "2Gi", "9Gi", "10Gi", "15Gi", "20Gi"}
		grew := 0
		for run := range 2000 {
			spec := growSpec(sizes[rng.IntN(len(sizes))])
			spec.Increment = ptr.To([]intstr.IntOrString{intstr.FromString("20%"), intstr.FromString("1%"), intstr.FromString("100%"),
				intstr.FromString("5Gi"), intstr.FromInt32(1)}[rng.IntN(5)])
			var claims []corev1.PersistentVolumeClaim
			usage := map[string]memberUsage{}
			for i := range 1 + rng.IntN(5) {
				var opts []growClaimOption
				if rng.IntN(4) == 0 {
					opts = append(opts, withCapacity("512Mi"))
				}
				if rng.IntN(6) == 0 {
					opts = append(opts, withClaimDeleting())
				}
				if rng.IntN(3) == 0 {
					opts = append(opts, withGrownAgo(time.Duration(rng.IntN(12))*time.Hour))
				}
				ordinal := string(rune('0' + i))
				claims = append(claims, growClaim(ordinal, sizes[rng.IntN(len(sizes))], opts...))
				if rng.IntN(5) != 0 {
					usage["db-"+ordinal] = full(int64(rng.IntN(101)))
				}
			}
			expandable := rng.IntN(4) != 0
			got := plan(spec, claims, usage, expandable)
			if got.grow == nil {
				continue
			}
			grew++
			idx := slices.IndexFunc(claims, func(c corev1.PersistentVolumeClaim) bool { return c.Name == got.grow.claim })
			Expect(idx).To(BeNumerically(">=", 0), "run %d: grows a claim it was not given", run)
			claim := claims[idx]
			request := claim.Spec.Resources.Requests[corev1.ResourceStorage]
			Expect(got.grow.from.Cmp(request)).To(Equal(0), "run %d", run)
			Expect(got.grow.to.Cmp(request)).To(Equal(1), "run %d: never shrinks nor stays", run)
			Expect(got.grow.to.Cmp(spec.MaxSize)).To(BeNumerically("<=", 0), "run %d: never past maxSize", run)
			Expect(expandable).To(BeTrue(), "run %d", run)
			Expect(claim.DeletionTimestamp).To(BeNil(), "run %d", run)
			Expect(expansionInFlight(&claim)).To(BeFalse(), "run %d", run)
			last, grown := lastGrowth(&claim)
			Expect(!grown || !growNow.Before(last.Add(spec.MinInterval()))).To(BeTrue(), "run %d: within the interval", run)
			Expect(usage[memberOfClaim(claim.Name)].percent()).To(BeNumerically(">=", 80), "run %d: below the threshold", run)
		}
		Expect(grew).To(BeNumerically(">", 100), "the runs must exercise growths, not only refusals")
	})
})

// newRand is a random source seeded by the suite's seed, so that a failure can be replayed.
func newRand(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0)) }
