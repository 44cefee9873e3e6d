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
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/opmetrics"
	"github.com/seed1b407122/database-operator/controllers/storageagent"
)

// Events about auto-grow.
const (
	// EventStorageGrown tells that the operator grew a member's claim.
	EventStorageGrown = "StorageGrown"
	// EventStorageAtMaxSize is the warning that StorageAutoGrow turned to AtMaxSize.
	EventStorageAtMaxSize = databasev1alpha1.ReasonAtMaxSize
	// EventExpansionNotAllowed is the warning that StorageAutoGrow turned to ExpansionNotAllowed.
	EventExpansionNotAllowed = databasev1alpha1.ReasonExpansionNotAllowed
)

// DefaultMeasureInterval is how often the members of a cluster with spec.storage.autoGrow are
// measured: between two measurements the status does not change, so a cluster costs at most one
// status write a minute for its usage.
const DefaultMeasureInterval = time.Minute

// agentTimeout bounds one read of a storage agent: it answers a statfs from memory.
const agentTimeout = 2 * time.Second

// agentClient reads the storage agents. No proxy: the agents are on pod IPs, which an
// HTTP(S)_PROXY of the manager's environment would not reach.
var agentClient = &http.Client{Timeout: agentTimeout, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}

// autoGrowObservation is what auto-grow measured and did in one pass.
type autoGrowObservation struct {
	// ran says that the phase ran (spec.storage.autoGrow set, the phases got that far).
	ran bool
	// noImage says that the operator does not know the agent's image.
	noImage bool
	// members are the members measured, by name.
	members []databasev1alpha1.MemberStorage
	// unknown says, per member whose agent could not be read, why.
	unknown []string
	// plan is the decision, and grew the growth applied (nil when none was).
	plan growthPlan
	grew *claimGrowth
}

// memoEntry is one member's last measurement: its usage, or why its agent could not be read,
// and the capacity its claim reported then (claimCapacity): once an expansion changes that, the
// measurement tells of the file system before it and is not used again.
type memoEntry struct {
	uid           types.UID
	usage         memberUsage
	err           string
	at            time.Time
	claimCapacity string
}

func (r *Reconciler) measureInterval() time.Duration {
	if r.MeasureInterval <= 0 {
		return DefaultMeasureInterval
	}
	return r.MeasureInterval
}

func (r *Reconciler) agentAddress(pod *corev1.Pod) string {
	if r.AgentAddress != nil {
		return r.AgentAddress(pod)
	}
	return agentAddress(pod)
}

// reconcileAutoGrow is the auto-grow step of phase 4, after the claims have been grown to
// spec.storage.size: it measures the members (measureMembers), decides (decideGrowth) and
// grows at most one claim (growClaim). claims are the member claims as phase 4 left them.
func (r *Reconciler) reconcileAutoGrow(ctx context.Context, dc *databasev1alpha1.DatabaseCluster,
	claims []corev1.PersistentVolumeClaim,
) (autoGrowObservation, error) {
	if !dc.AutoGrows() {
		r.usage.forget(client.ObjectKeyFromObject(dc))
		return autoGrowObservation{}, nil
	}
	obs := autoGrowObservation{ran: true}
	if r.AgentImage == "" {
		obs.noImage = true
		return obs, nil
	}
	pods, err := r.listPods(ctx, dc)
	if err != nil {
		return obs, err
	}
	usage := r.measureMembers(ctx, dc, pods, claimCapacities(claims), &obs)
	spec := dc.Spec.Storage.AutoGrow
	// The StorageClass is read only when a claim would grow if it allowed expansion; if it
	// does not, the decision is taken again knowing it.
	in := growthInput{spec: spec, claims: claims, usage: usage, class: dc.Spec.Storage.StorageClassName, now: r.clock().Now(),
		expandable: true}
	obs.plan = decideGrowth(in)
	if obs.plan.grow == nil {
		return obs, nil
	}
	if in.expandable, err = r.expansionAllowed(ctx, in.class); err != nil {
		obs.plan.grow = nil // Degraded says why; the next pass decides again
		return obs, err
	}
	if !in.expandable {
		obs.plan = decideGrowth(in)
		return obs, nil
	}
	for i := range claims {
		if claims[i].Name == obs.plan.grow.claim {
			if err := r.growClaim(ctx, dc, &claims[i], obs.plan.grow, in.now); err != nil {
				return obs, err
			}
			obs.grew = obs.plan.grow
		}
	}
	return obs, nil
}

// expansionAllowed reads StorageClass class from the API server (one get, only when a claim is
// about to grow: StorageClasses are not cached) and reports allowVolumeExpansion. A class that
// does not exist allows nothing.
func (r *Reconciler) expansionAllowed(ctx context.Context, class string) (bool, error) {
	sc := &storagev1.StorageClass{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Name: class}, sc)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading StorageClass %s: %w", class, err)
	}
	return ptr.Deref(sc.AllowVolumeExpansion, false), nil
}

// growClaim raises claim's request to g.to and stamps AutoGrownAtAnnotation with now, in one
// patch that fails if the claim changed since it was read (the cache may lag behind a growth
// of the previous pass, and a claim must never grow twice within the interval), then tells it
// in an event.
func (r *Reconciler) growClaim(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, claim *corev1.PersistentVolumeClaim,
	g *claimGrowth, now time.Time,
) error {
	patch := client.MergeFromWithOptions(claim.DeepCopy(), client.MergeFromWithOptimisticLock{})
	setClaimRequest(claim, g.to)
	metav1.SetMetaDataAnnotation(&claim.ObjectMeta, databasev1alpha1.AutoGrownAtAnnotation, now.UTC().Format(time.RFC3339))
	if err := r.Patch(ctx, claim, patch); err != nil {
		return fmt.Errorf("growing claim %s to %s: %w", claim.Name, g.to.String(), err)
	}
	r.Recorder.Eventf(dc, nil, corev1.EventTypeNormal, EventStorageGrown, actionUpdate, "%s",
		capitalize(g.note(dc.Spec.Storage.AutoGrow.AutoGrowThreshold())))
	return nil
}

// capitalize makes a condition's message an event's note.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// claimCapacities is the capacity each member's claim reports, by member name.
func claimCapacities(claims []corev1.PersistentVolumeClaim) map[string]string {
	capacities := make(map[string]string, len(claims))
	for i := range claims {
		capacities[memberOfClaim(claims[i].Name)] = claims[i].Status.Capacity.Storage().String()
	}
	return capacities
}

// measureMembers returns the usage of every member that runs the storage agent, by pod name,
// and adds to obs the members measured (for the status) and those whose agent could not be
// read. A member is read again when its last measurement is measureInterval old, or when its
// claim's capacity (capacities) changed since: a measurement of the file system before an
// expansion would make a claim just grown to maxSize look full at maxSize. The agents are read
// at once, each within agentTimeout.
func (r *Reconciler) measureMembers(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pods []corev1.Pod,
	capacities map[string]string, obs *autoGrowObservation,
) map[string]memberUsage {
	key := client.ObjectKeyFromObject(dc)
	memo, _ := r.usage.get(key)
	now := r.clock().Now()
	kept := map[string]memoEntry{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range pods {
		pod := &pods[i]
		addr := r.agentAddress(pod)
		if !isMemberPod(dc, pod) || pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning ||
			!hasStorageAgent(pod) || addr == "" {
			continue
		}
		if e, ok := memo[pod.Name]; ok && e.uid == pod.UID && e.claimCapacity == capacities[pod.Name] && now.Sub(e.at) < r.measureInterval() {
			kept[pod.Name] = e
			continue
		}
		wg.Go(func() {
			u, err := storageagent.Read(ctx, agentClient, addr)
			e := memoEntry{uid: pod.UID, at: now, claimCapacity: capacities[pod.Name],
				usage: memberUsage{used: u.UsedBytes, capacity: u.CapacityBytes, at: now}}
			if err != nil {
				e.err = agentFailure(err)
			}
			mu.Lock()
			defer mu.Unlock()
			kept[pod.Name] = e
		})
	}
	wg.Wait()
	r.usage.put(key, kept)
	usage := make(map[string]memberUsage, len(kept))
	for name, e := range kept {
		if e.err != "" {
			obs.unknown = append(obs.unknown, withDetail(name, ": ", e.err, ""))
			continue
		}
		usage[name] = e.usage
		obs.members = append(obs.members, databasev1alpha1.MemberStorage{Name: name, UsedBytes: e.usage.used,
			CapacityBytes: e.usage.capacity, MeasuredAt: metav1.Time{Time: e.usage.at}})
	}
	sortMembers(obs)
	return usage
}

// agentFailure is why a member's agent could not be read, as StorageAutoGrow tells it: err's
// text on one line without the separator an empty part left at its end ("the agent answered 404
// Not Found: " when the answer has no body), and never "", which would read as a measurement.
func agentFailure(err error) string {
	if why := tidyDetail(err.Error()); why != "" {
		return why
	}
	return "the read failed without saying why"
}

// sortMembers orders the members and the unknown ones by name: the status must not change with
// the order the agents answered in.
func sortMembers(obs *autoGrowObservation) {
	slices.SortFunc(obs.members, func(a, b databasev1alpha1.MemberStorage) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(obs.unknown, strings.Compare)
}

// isMemberPod reports whether pod is one of dc's members by name: <StatefulSet>-<ordinal>.
func isMemberPod(dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod) bool {
	ordinal, ok := strings.CutPrefix(pod.Name, dc.StatefulSetName()+"-")
	return ok && isOrdinal(ordinal)
}

// storageStatus is status.storage: the members as measured now, or as last known while the
// phases stopped before auto-grow (paused, a failure before phase 4).
func storageStatus(dc *databasev1alpha1.DatabaseCluster, obs autoGrowObservation) *databasev1alpha1.StorageStatus {
	switch {
	case !dc.AutoGrows():
		return nil
	case !obs.ran:
		return dc.Status.Storage
	case len(obs.members) == 0:
		return nil
	}
	return &databasev1alpha1.StorageStatus{Members: obs.members}
}

// recordAutoGrow sets the auto-grow series of dc from what this pass measured.
func recordAutoGrow(dc *databasev1alpha1.DatabaseCluster, obs autoGrowObservation) {
	if dc.AutoGrows() && !obs.ran {
		return // paused, or stopped before phase 4: the series stay as last measured
	}
	members := make([]opmetrics.MemberUsage, 0, len(obs.members))
	for _, m := range obs.members {
		members = append(members, opmetrics.MemberUsage{Member: m.Name, UsedBytes: m.UsedBytes, Capacity: m.CapacityBytes})
	}
	opmetrics.RecordAutoGrow(dc.Namespace, dc.Name, members, obs.plan.fullAtMax)
}
