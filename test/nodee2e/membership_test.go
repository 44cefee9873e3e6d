//go:build linux && node

package nodee2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// etcdListed is one entry of etcd's member list as its JSON gateway answers.
type etcdListed struct {
	Name      string   `json:"name"`
	PeerURLs  []string `json:"peerURLs"`
	IsLearner bool     `json:"isLearner"`
}

// scaleEtcdMembers scales dc, a 3-member etcd with engine etcd, to 5 and back to 3 through the
// scale subresource, as an autoscaler would, with db's keys written before: each new member is
// added (a learner, then promoted) before its etcd starts, each removed member leaves etcd's
// member list before its pod goes, and every member holds every key.
func scaleEtcdMembers(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, db *etcdClient) {
	GinkgoHelper()
	db.writeThroughService(ctx, "etcd membership: the keys written before the scale")
	began := time.Now()
	scaleTo(ctx, dc, 5)
	report("etcd membership: scale 3 -> 5 -> Available (two members added, announced, started, promoted)", waitAvailable(ctx, dc, began))
	expectVoters(ctx, db, dc, 5)
	expectKeysOnEachMember(ctx, db, 5)

	shrunk := time.Now()
	scaleTo(ctx, dc, 3)
	report("etcd membership: scale 5 -> 3 -> Available (two members removed before their pods went)", waitAvailable(ctx, dc, shrunk))
	expectVoters(ctx, db, dc, 3)
	Expect(podsOf(ctx, dc)).To(HaveLen(3))
	expectKeysOnEachMember(ctx, db, 3)

	member := func(i int) string { return dc.StatefulSetName() + "-" + strconv.Itoa(i) }
	Eventually(func() []string { return membershipEvents(ctx, dc, began) }).WithContext(ctx).Should(Equal([]string{
		"MemberAdded " + member(3), "MemberPromoted " + member(3), "MemberAdded " + member(4), "MemberPromoted " + member(4),
		"MemberRemoved " + member(4), "MemberRemoved " + member(3),
	}), "each member added, then promoted, one at a time; removed from the highest ordinal down")
}

// scaleTo sets dc's replicas through its scale subresource.
func scaleTo(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, replicas int32) {
	GinkgoHelper()
	scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
	Expect(k8s.SubResource("scale").Update(ctx, dc, client.WithSubResourceBody(scale))).To(Succeed())
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
	Expect(*dc.Spec.Replicas).To(Equal(replicas))
}

// expectVoters checks that etcd lists exactly the members dc-0 .. dc-(n-1), each started and
// voting.
func expectVoters(ctx context.Context, db *etcdClient, dc *databasev1alpha1.DatabaseCluster, n int) {
	GinkgoHelper()
	var want []string
	for i := range n {
		want = append(want, dc.StatefulSetName()+"-"+strconv.Itoa(i))
	}
	Eventually(func(g Gomega) []string {
		var out struct {
			Members []etcdListed `json:"members"`
		}
		g.Expect(db.call(ctx, "/v3/cluster/member/list", map[string]any{}, &out)).To(Succeed())
		var names []string
		for _, m := range out.Members {
			g.Expect(m.IsLearner).To(BeFalse(), "%s is still a learner", m.Name)
			names = append(names, m.Name)
		}
		slices.Sort(names)
		return names
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Equal(want))
}

// expectKeysOnEachMember reads the count of db's keys from each of the n members' own data (a
// serializable read, answered by the member alone): a new member has them all.
func expectKeysOnEachMember(ctx context.Context, db *etcdClient, n int) {
	GinkgoHelper()
	Eventually(func(g Gomega) map[string]string {
		counts := map[string]string{}
		body := fmt.Sprintf(`{"key":%q,"range_end":%q,"count_only":true,"serializable":true}`,
			base64.StdEncoding.EncodeToString([]byte(etcdPrefix)), base64.StdEncoding.EncodeToString([]byte(prefixEnd(etcdPrefix))))
		targets := db.members(ctx)
		g.Expect(targets).To(HaveLen(n))
		for _, t := range targets {
			var out struct {
				Count string `json:"count"`
			}
			g.Expect(db.try(ctx, t, "/v3/kv/range", []byte(body), &out)).To(Succeed())
			counts[t.serverName] = out.Count
		}
		return counts
	}).WithContext(ctx).WithTimeout(time.Minute).Should(HaveEach(Equal(strconv.Itoa(etcdKeys))))
	GinkgoWriter.Printf("Each of the %d members holds the %d keys\n", n, etcdKeys)
}

// membershipEvents are the operator's membership events about dc since since, oldest first, as
// "Reason member".
func membershipEvents(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, since time.Time) []string {
	GinkgoHelper()
	var list eventsv1.EventList
	Expect(k8s.List(ctx, &list, client.InNamespace(dc.Namespace))).To(Succeed())
	events := slices.DeleteFunc(list.Items, func(e eventsv1.Event) bool {
		return e.Regarding.Kind != "DatabaseCluster" || e.Regarding.Name != dc.Name || e.EventTime.Time.Before(since) ||
			!slices.Contains([]string{"MemberAdded", "MemberPromoted", "MemberRemoved"}, e.Reason)
	})
	slices.SortFunc(events, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
	var out []string
	for _, e := range events {
		for range max(1, seriesCount(e)) {
			out = append(out, e.Reason+" "+memberOf(e.Note))
		}
	}
	return out
}

func seriesCount(e eventsv1.Event) int {
	if e.Series == nil {
		return 1
	}
	return int(e.Series.Count)
}

// memberOf is the member an event's note names: its word after "Added", "Promoted" or "Removed".
func memberOf(note string) string {
	var verb, member string
	_, _ = fmt.Sscanf(note, "%s %s", &verb, &member)
	return member
}
