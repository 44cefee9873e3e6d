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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
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
