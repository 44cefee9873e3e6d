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
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// Sizes a grown claim is rounded up to: whole Gi from roundToGiFrom on, whole Mi below.
const (
	mi            = int64(1) << 20
	gi            = int64(1) << 30
	roundToGiFrom = 10 * gi
)

// memberUsage is one member's data file system as its storage agent measured it.
type memberUsage struct {
	used, capacity int64
	at             time.Time
}

// percent is how full u is, in whole percent rounded up: 79.1% counts as 80%, so that a
// threshold is never missed by a rounding.
func (u memberUsage) percent() int64 {
	if u.capacity <= 0 {
		return 0
	}
	return (u.used*100 + u.capacity - 1) / u.capacity
}

// claimGrowth is one claim to grow, and why.
type claimGrowth struct {
	claim    string
	from, to resource.Quantity
	percent  int64
}

// note is the event and condition message of a growth.
func (g *claimGrowth) note(threshold int32) string {
	return fmt.Sprintf("grew claim %s from %s to %s: used %d%% >= threshold %d%%",
		g.claim, g.from.String(), g.to.String(), g.percent, threshold)
}

// growthPlan is what auto-grow decided in one pass.
type growthPlan struct {
	// grow is the one claim to grow now, if any.
	grow *claimGrowth
	// atMax says, per claim over the threshold at maxSize, "claim X is at maxSize M and N% full";
	// fullAtMax is the highest used ratio among them.
	atMax     []string
	fullAtMax float64
	// notAllowed says, per claim over the threshold, that its StorageClass cannot expand it.
	notAllowed []string
	// waiting says, per claim over the threshold, why it does not grow now: an expansion in
	// flight, the minimum interval, or another claim growing in this pass.
	waiting []string
	// recheck is when the first claim held by the minimum interval may grow (0: none).
	recheck time.Duration
}

// growthInput is what decideGrowth looks at.
type growthInput struct {
	spec *databasev1alpha1.AutoGrowSpec
	// claims are the cluster's member claims (isMemberClaim): the only claims ever grown.
	claims []corev1.PersistentVolumeClaim
	// usage is the measured usage, by member (pod) name.
	usage map[string]memberUsage
	// expandable says whether the claims' StorageClass allows volume expansion; class names it.
	expandable bool
	class      string
	now        time.Time
}

// decideGrowth decides which claim, if any, grows in this pass. A claim grows when its member
// is at least thresholdPercent full, it is not being deleted, no expansion of it is in flight
// (expansionInFlight), it is below maxSize, its StorageClass allows expansion, and its last
// growth (AutoGrownAtAnnotation) is at least minIntervalSeconds ago. Of several, only the
// fullest grows (the first by name of equals): one claim per pass. The new size is nextSize's,
// above the current request: a claim is never shrunk.
func decideGrowth(in growthInput) growthPlan {
	var plan growthPlan
	var candidates []claimGrowth
	threshold := int64(in.spec.AutoGrowThreshold())
	for i := range in.claims {
		claim := &in.claims[i]
		u, measured := in.usage[memberOfClaim(claim.Name)]
		if !measured || u.percent() < threshold || claim.DeletionTimestamp != nil {
			continue
		}
		request := claim.Spec.Resources.Requests[corev1.ResourceStorage]
		switch {
		case expansionInFlight(claim):
			plan.waiting = append(plan.waiting, fmt.Sprintf("claim %s is %d%% full and being expanded to %s", claim.Name, u.percent(), request.String()))
		case request.Cmp(in.spec.MaxSize) >= 0:
			plan.atMax = append(plan.atMax, fmt.Sprintf("claim %s is at maxSize %s and %d%% full", claim.Name, in.spec.MaxSize.String(), u.percent()))
			plan.fullAtMax = max(plan.fullAtMax, float64(u.used)/float64(u.capacity))
		case !in.expandable:
			plan.notAllowed = append(plan.notAllowed, fmt.Sprintf("claim %s is %d%% full and StorageClass %s does not allow volume expansion (allowVolumeExpansion)",
				claim.Name, u.percent(), in.class))
		case !plan.intervalPassed(claim, u, in):
			// Noted as waiting, with when it may grow.
		default:
			candidates = append(candidates, claimGrowth{claim: claim.Name, from: request, to: nextSize(request, in.spec), percent: u.percent()})
		}
	}
	plan.choose(candidates)
	return plan
}

// intervalPassed reports whether claim's last growth is at least minIntervalSeconds ago; when
// it is not, plan notes until when it waits.
func (plan *growthPlan) intervalPassed(claim *corev1.PersistentVolumeClaim, u memberUsage, in growthInput) bool {
	last, ok := lastGrowth(claim)
	next := last.Add(in.spec.MinInterval())
	if !ok || !in.now.Before(next) {
		return true
	}
	plan.waiting = append(plan.waiting, fmt.Sprintf("claim %s is %d%% full and grows again after %s (minIntervalSeconds %d)",
		claim.Name, u.percent(), next.UTC().Format(time.RFC3339), int64(in.spec.MinInterval()/time.Second)))
	if wait := next.Sub(in.now); plan.recheck == 0 || wait < plan.recheck {
		plan.recheck = wait
	}
	return false
}

// choose makes the fullest candidate the growth of the pass; the others wait for it.
func (plan *growthPlan) choose(candidates []claimGrowth) {
	if len(candidates) == 0 {
		return
	}
	best := 0
	for i := range candidates {
		if candidates[i].percent > candidates[best].percent {
			best = i
		}
	}
	plan.grow = &candidates[best]
	for i, c := range candidates {
		if i != best {
			plan.waiting = append(plan.waiting, fmt.Sprintf("claim %s is %d%% full and grows after %s (one claim at a time)",
				c.claim, c.percent, plan.grow.claim))
		}
	}
}

// memberOfClaim is the member (pod) whose data claim is named claim: data-<pod>.
func memberOfClaim(claim string) string {
	return strings.TrimPrefix(claim, databasev1alpha1.DataVolumeName+"-")
}

// expansionInFlight reports whether an expansion of claim has not finished: the capacity it
// reports is below its request (a claim not bound yet reports none), or the resizer or the
// kubelet reports a resize condition (Resizing, FileSystemResizePending, or a resize error,
// which a new request would not fix).
func expansionInFlight(claim *corev1.PersistentVolumeClaim) bool {
	request := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	capacity, ok := claim.Status.Capacity[corev1.ResourceStorage]
	if !ok || capacity.Cmp(request) < 0 {
		return true
	}
	return slices.ContainsFunc(claim.Status.Conditions, func(c corev1.PersistentVolumeClaimCondition) bool {
		return c.Status == corev1.ConditionTrue && (c.Type == corev1.PersistentVolumeClaimResizing ||
			c.Type == corev1.PersistentVolumeClaimFileSystemResizePending ||
			c.Type == corev1.PersistentVolumeClaimControllerResizeError || c.Type == corev1.PersistentVolumeClaimNodeResizeError)
	})
}

// lastGrowth is when the operator last grew claim, from its AutoGrownAtAnnotation.
func lastGrowth(claim *corev1.PersistentVolumeClaim) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, claim.Annotations[databasev1alpha1.AutoGrownAtAnnotation])
	return t, err == nil
}

// nextSize is current grown by spec's increment (a percent of current, or a quantity; a bare
// integer is bytes), rounded up to a whole Gi from roundToGiFrom on and to a whole Mi below,
// and never more than maxSize. Sizes are bytes in an int64: 8 EiB, far above any volume.
func nextSize(current resource.Quantity, spec *databasev1alpha1.AutoGrowSpec) resource.Quantity {
	inc := spec.AutoGrowIncrement()
	size := current.Value()
	var add int64
	switch {
	case inc.Type == intstr.Int:
		add = int64(inc.IntValue())
	case strings.HasSuffix(inc.StrVal, "%"):
		pct, _ := strconv.ParseInt(strings.TrimSuffix(inc.StrVal, "%"), 10, 64) // admission: 1% to 100%
		add = ceilDiv(size*pct, 100)
	default:
		q, _ := resource.ParseQuantity(inc.StrVal) // admission: a quantity above 0
		add = q.Value()
	}
	unit := mi
	if size+add >= roundToGiFrom {
		unit = gi
	}
	next := ceilDiv(size+add, unit) * unit
	if next >= spec.MaxSize.Value() {
		return spec.MaxSize.DeepCopy()
	}
	return *resource.NewQuantity(next, resource.BinarySI)
}

// ceilDiv is n / d rounded up, for n >= 0 and d > 0.
func ceilDiv(n, d int64) int64 { return (n + d - 1) / d }
