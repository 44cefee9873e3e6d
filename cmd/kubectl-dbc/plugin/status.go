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

package plugin

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// clusterState is everything "status" shows, as read from the API server.
type clusterState struct {
	// Cluster is the DatabaseCluster.
	Cluster databasev1alpha1.DatabaseCluster
	// Pods are the pods of the cluster's StatefulSet (selected by the cluster's selector labels).
	Pods []corev1.Pod
	// Claims are the namespace's claims named data-NAME-<ordinal>: the StatefulSet uses a claim
	// of that name whoever made it, so the name is what makes it a member's.
	Claims []corev1.PersistentVolumeClaim
	// Backups are the DatabaseBackups of the cluster (spec.clusterName).
	Backups []databasev1alpha1.DatabaseBackup
	// Events are the events.k8s.io/v1 events regarding the cluster (the operator records its
	// events there).
	Events []eventsv1.Event
}

// statusCommand prints the cluster on one screen.
func (c *cli) statusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status NAME",
		Short: "Show a DatabaseCluster on one screen: members, roles, storage, last backup, conditions, events",
		Long: `Show the DatabaseCluster NAME on one screen:

  - the header: Available (status, reason, message), replicas, image, paused, hibernated,
    the last restart asked for and an Offline backup holding the cluster stopped; with an
    engine (spec.engine etcd or postgresql) also the engine, the primary
    (status.currentPrimary) and a switchover in progress or asked for;
  - MEMBERS: one row per ordinal (spec.replicas, the pods that exist and the claims kept):
    the pod NAME-<i>, its role, containers ready, status, restarts, node, and its data claim
    data-NAME-<i> with the size requested and the capacity the storage reports. Without an
    engine the operator knows no primary or replica, so the role is always "member". With an
    engine the role (primary, replica or unknown) and the replication POSITION are the ones
    the operator last observed (status.members), and a pod whose role label (which the
    Services NAME-rw and NAME-ro route by) says otherwise shows it: "primary (no label)". A
    row whose pod does not exist says "absent" (hibernated, stopped by an Offline backup, or a
    claim kept after a scale-down);
  - BACKUPS: the newest DatabaseBackup of the cluster and, when it is not Completed, the newest
    Completed one, with the ScheduledDatabaseBackup that made it ("-": made otherwise);
  - CONDITIONS, and the last 5 EVENTS the operator recorded about the cluster.

Ages are relative to now, as in kubectl get.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, ns, err := c.target()
			if err != nil {
				return err
			}
			s, err := readState(cmd.Context(), k, ns, args[0])
			if err != nil {
				return err
			}
			return render(cmd.OutOrStdout(), s, c.Now())
		},
	}
}

// readState reads the cluster name of namespace ns and what belongs to it.
func readState(ctx context.Context, k client.Client, ns, name string) (*clusterState, error) {
	s := &clusterState{}
	if err := k.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s.Cluster); err != nil {
		return nil, fmt.Errorf("reading databasecluster %s/%s: %w", ns, name, err)
	}
	dc := &s.Cluster
	var pods corev1.PodList
	if err := k.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(dc.SelectorLabels())); err != nil {
		return nil, fmt.Errorf("listing the pods of %s/%s: %w", ns, name, err)
	}
	for _, pod := range pods.Items {
		if _, ok := ordinalOf(pod.Name, dc.StatefulSetName()+"-"); ok {
			s.Pods = append(s.Pods, pod)
		}
	}
	var claims corev1.PersistentVolumeClaimList
	if err := k.List(ctx, &claims, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing the claims of namespace %s: %w", ns, err)
	}
	for _, claim := range claims.Items {
		if _, ok := ordinalOf(claim.Name, claimPrefix(dc)); ok {
			s.Claims = append(s.Claims, claim)
		}
	}
	var backups databasev1alpha1.DatabaseBackupList
	if err := k.List(ctx, &backups, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing the databasebackups of namespace %s: %w", ns, err)
	}
	for _, b := range backups.Items {
		if b.Spec.ClusterName == name {
			s.Backups = append(s.Backups, b)
		}
	}
	events, err := clusterEvents(ctx, k, dc)
	if err != nil {
		return nil, err
	}
	s.Events = events
	return s, nil
}

// clusterEvents lists the events.k8s.io/v1 events regarding the cluster dc.
func clusterEvents(ctx context.Context, k client.Client, dc *databasev1alpha1.DatabaseCluster) ([]eventsv1.Event, error) {
	var events eventsv1.EventList
	if err := k.List(ctx, &events, client.InNamespace(dc.Namespace), client.MatchingFields{
		"regarding.kind": "DatabaseCluster", "regarding.name": dc.Name,
	}); err != nil {
		return nil, fmt.Errorf("listing the events of %s/%s: %w", dc.Namespace, dc.Name, err)
	}
	var out []eventsv1.Event
	for _, ev := range events.Items {
		// Events of an earlier cluster of the same name are not this one's.
		if ev.Regarding.UID == "" || ev.Regarding.UID == dc.UID {
			out = append(out, ev)
		}
	}
	return out, nil
}

// claimPrefix is what the names of the cluster's data claims start with: data-NAME-.
func claimPrefix(dc *databasev1alpha1.DatabaseCluster) string {
	return databasev1alpha1.DataVolumeName + "-" + dc.StatefulSetName() + "-"
}

// ordinalOf is the ordinal of name when it is prefix followed by a decimal number.
func ordinalOf(name, prefix string) (int32, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" || (len(rest) > 1 && rest[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 32)
	if err != nil || n < 0 {
		return 0, false
	}
	return int32(n), true
}

// member is one row of the members table: an ordinal with its pod and claim, either possibly
// absent.
type member struct {
	ordinal int32
	pod     *corev1.Pod
	claim   *corev1.PersistentVolumeClaim
}

// members pairs pods and claims by ordinal, for every ordinal below spec.replicas and every
// ordinal a pod or claim has, in ordinal order.
func (s *clusterState) members() []member {
	dc := &s.Cluster
	byOrdinal := map[int32]*member{}
	at := func(i int32) *member {
		if m, ok := byOrdinal[i]; ok {
			return m
		}
		m := &member{ordinal: i}
		byOrdinal[i] = m
		return m
	}
	if dc.Spec.Replicas != nil {
		for i := range *dc.Spec.Replicas {
			at(i)
		}
	}
	for i := range s.Pods {
		if n, ok := ordinalOf(s.Pods[i].Name, dc.StatefulSetName()+"-"); ok {
			at(n).pod = &s.Pods[i]
		}
	}
	for i := range s.Claims {
		if n, ok := ordinalOf(s.Claims[i].Name, claimPrefix(dc)); ok {
			at(n).claim = &s.Claims[i]
		}
	}
	// A member the operator still reports (status.members lags a scale-down) has a row too.
	if dc.HasEngine() {
		for _, ms := range dc.Status.Members {
			if n, ok := ordinalOf(ms.Name, dc.StatefulSetName()+"-"); ok {
				at(n)
			}
		}
	}
	out := make([]member, 0, len(byOrdinal))
	for _, m := range byOrdinal {
		out = append(out, *m)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ordinal < out[b].ordinal })
	return out
}
