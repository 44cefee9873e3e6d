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

package roles

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// etcdNames are db-0 .. db-(n-1).
func etcdNames(n int) []string {
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("db-%d", i))
	}
	return names
}

func etcdPeerURLs(n int) map[string][]string {
	urls := map[string][]string{}
	for _, name := range etcdNames(n) {
		urls[name] = []string{"https://" + name + ".db-headless.ns.svc:2380"}
	}
	return urls
}

// voters are db-0 .. db-(n-1), started and voting.
func voters(n int) []ListedMember {
	var list []ListedMember
	for i, name := range etcdNames(n) {
		list = append(list, ListedMember{Name: name, Ordinal: i, Started: true, PeerURLs: etcdPeerURLs(n)[name]})
	}
	return list
}

// pods are the pods of db-0 .. db-(n-1), existing, announced when announced says so.
func pods(n int, announced bool) []MemberPod {
	var list []MemberPod
	for i, name := range etcdNames(n) {
		list = append(list, MemberPod{Name: name, Ordinal: i, Exists: true, Announced: announced})
	}
	return list
}

func healthy(names ...string) map[string]bool {
	h := map[string]bool{}
	for _, n := range names {
		h[n] = true
	}
	return h
}

// cluster is the initial cluster of db-0 .. db-(n-1).
func cluster(n int) string {
	var entries []string
	for _, name := range etcdNames(n) {
		entries = append(entries, name+"="+etcdPeerURLs(n)[name][0])
	}
	return strings.Join(entries, ",")
}

func TestPlanMembership(t *testing.T) {
	all := healthy(etcdNames(5)...)
	learner3 := append(voters(3), ListedMember{Name: "db-3", Ordinal: 3, Learner: true, PeerURLs: etcdPeerURLs(5)["db-3"]})
	started3 := append(voters(3), ListedMember{Name: "db-3", Ordinal: 3, Learner: true, Started: true, PeerURLs: etcdPeerURLs(5)["db-3"]})
	foreign := append(voters(3), ListedMember{Name: "outsider", Ordinal: -1, Started: true, PeerURLs: []string{"https://outsider:2380"}})
	for _, tc := range []struct {
		name string
		in   MembershipInput
		want MembershipDecision
	}{{
		name: "a new cluster: every pod announced the desired members, state new",
		in:   MembershipInput{Desired: 3, Pods: pods(3, false), Names: etcdNames(3), PeerURLs: etcdPeerURLs(3)},
		want: MembershipDecision{Replicas: 3, Announce: map[string]Announcement{
			"db-0": {cluster(3), StateNew}, "db-1": {cluster(3), StateNew}, "db-2": {cluster(3), StateNew}}},
	}, {
		name: "a cluster that formed before, no list: announced existing (its members start from their data), and it waits",
		in:   MembershipInput{Desired: 3, Pods: pods(3, false), Names: etcdNames(3), PeerURLs: etcdPeerURLs(3), FormedBefore: true},
		want: MembershipDecision{Replicas: 3, Waiting: "no member's agent answered with etcd's member list", Announce: map[string]Announcement{
			"db-0": {cluster(3), StateExisting}, "db-1": {cluster(3), StateExisting}, "db-2": {cluster(3), StateExisting}}},
	}, {
		name: "no list while scaled down: every pod kept, none beyond the desired announced",
		in:   MembershipInput{Desired: 3, Pods: pods(5, false), Names: etcdNames(5), PeerURLs: etcdPeerURLs(5), FormedBefore: true},
		want: MembershipDecision{Replicas: 5, Waiting: "no member's agent answered with etcd's member list", Announce: map[string]Announcement{
			"db-0": {cluster(3), StateExisting}, "db-1": {cluster(3), StateExisting}, "db-2": {cluster(3), StateExisting}}},
	}, {
		name: "a stopped cluster (desired 0): nothing removed, nothing announced",
		in:   MembershipInput{Desired: 0, Pods: pods(3, true), ListKnown: true, Listed: voters(3), Names: etcdNames(3), PeerURLs: etcdPeerURLs(3), Primary: "db-0", Healthy: all},
		want: MembershipDecision{Replicas: 0, Announce: map[string]Announcement{}},
	}, {
		name: "in line: nothing to do",
		in:   MembershipInput{Desired: 3, Pods: pods(3, true), ListKnown: true, Listed: voters(3), Names: etcdNames(3), PeerURLs: etcdPeerURLs(3), Primary: "db-1", Healthy: all},
		want: MembershipDecision{Replicas: 3, Announce: map[string]Announcement{}},
	}, {
		name: "a recreated pod of a listed member: announced the list, existing",
		in: MembershipInput{Desired: 3, Pods: []MemberPod{{"db-0", 0, true, true}, {"db-1", 1, true, false}, {"db-2", 2, true, true}},
			ListKnown: true, Listed: voters(3), Names: etcdNames(3), PeerURLs: etcdPeerURLs(3), Primary: "db-0", Healthy: all},
		want: MembershipDecision{Replicas: 3, Announce: map[string]Announcement{"db-1": {cluster(3), StateExisting}}},
	}, {
		name: "scale 3 -> 5: db-3 added through the primary, announced once added; db-4 waits",
		in:   MembershipInput{Desired: 5, Pods: pods(5, false)[3:], ListKnown: true, Listed: voters(3), Names: etcdNames(5), PeerURLs: etcdPeerURLs(5), Primary: "db-1", Healthy: all},
		want: MembershipDecision{Replicas: 5, Announce: map[string]Announcement{},
			Action:        MembershipAction{Kind: MembershipAdd, Member: "db-3", PeerURLs: etcdPeerURLs(5)["db-3"], Via: "db-1", Alternates: []string{"db-0", "db-2"}},
			AnnounceAfter: map[string]Announcement{"db-3": {cluster(4), StateExisting}}},
	}, {
		name: "db-3 added, not started: it is announced, db-4 waits for it",
		in:   MembershipInput{Desired: 5, Pods: pods(5, false)[3:], ListKnown: true, Listed: learner3, Names: etcdNames(5), PeerURLs: etcdPeerURLs(5), Primary: "db-1", Healthy: all},
		want: MembershipDecision{Replicas: 5, Announce: map[string]Announcement{"db-3": {cluster(4), StateExisting}}, Waiting: "adding db-4 waits for db-3 to join"},
	}, {
		name: "db-3 started as a learner: promoted through the primary",
		in:   MembershipInput{Desired: 5, Pods: pods(5, true), ListKnown: true, Listed: started3, Names: etcdNames(5), PeerURLs: etcdPeerURLs(5), Primary: "db-1", Healthy: all},
		want: MembershipDecision{Replicas: 5, Announce: map[string]Announcement{},
			Action: MembershipAction{Kind: MembershipPromote, Member: "db-3", PeerURLs: etcdPeerURLs(5)["db-3"], Via: "db-1", Alternates: []string{"db-0", "db-2"}}},
	}, {
		name: "scale 5 -> 3: db-4 removed first through the primary, its pod kept until then",
		in:   MembershipInput{Desired: 3, Pods: pods(5, true), ListKnown: true, Listed: voters(5), Names: etcdNames(5), PeerURLs: etcdPeerURLs(5), Primary: "db-0", Healthy: all},
		want: MembershipDecision{Replicas: 5, Announce: map[string]Announcement{},
			Action: MembershipAction{Kind: MembershipRemove, Member: "db-4", Via: "db-0", Alternates: []string{"db-1", "db-2", "db-3"}}},
	}, {
		name: "scale 5 -> 3 with db-4 leading: its leadership moves to the lowest healthy voter first",
		in:   MembershipInput{Desired: 3, Pods: pods(5, true), ListKnown: true, Listed: voters(5), Names: etcdNames(5), PeerURLs: etcdPeerURLs(5), Primary: "db-4", Healthy: all},
		want: MembershipDecision{Replicas: 5, Announce: map[string]Announcement{},
			Action: MembershipAction{Kind: MembershipTransfer, Member: "db-4", Via: "db-4", Target: "db-0"}},
	}, {
		name: "scale 5 -> 3 without a healthy majority of the others: no removal",
		in:   MembershipInput{Desired: 3, Pods: pods(5, true), ListKnown: true, Listed: voters(5), Names: etcdNames(5), PeerURLs: etcdPeerURLs(5), Primary: "db-0", Healthy: healthy("db-0", "db-4")},
		want: MembershipDecision{Replicas: 5, Announce: map[string]Announcement{}, Waiting: "removing db-4 waits: 1 of the 4 other voting members answer, a majority must"},
	}, {
		name: "a member that is not one of the cluster's pods is never removed, and is announced",
		in:   MembershipInput{Desired: 3, Pods: []MemberPod{{"db-2", 2, true, false}}, ListKnown: true, Listed: foreign, Names: etcdNames(3), PeerURLs: etcdPeerURLs(3), Primary: "db-0", Healthy: all},
		want: MembershipDecision{Replicas: 3, Announce: map[string]Announcement{"db-2": {cluster(3) + ",outsider=https://outsider:2380", StateExisting}}},
	}, {
		name: "the member to remove has no healthy voter to act through: it waits",
		in: MembershipInput{Desired: 1, Pods: pods(2, true), ListKnown: true, Listed: voters(2), Names: etcdNames(2), PeerURLs: etcdPeerURLs(2), Primary: "db-1",
			Healthy: healthy("db-1")},
		want: MembershipDecision{Replicas: 2, Announce: map[string]Announcement{}, Waiting: "removing db-1 waits: 0 of the 1 other voting members answer, a majority must"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanMembership(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("PlanMembership:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
