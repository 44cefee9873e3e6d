//go:build linux && node

package nodee2e

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/operands/testdb"
)

// testdbImage is the single-member store of test/harness/operands/images/testdb.
const testdbImage = "database-operator.test/testdb:v1"

// testdbKeys is how many keys each member gets.
const testdbKeys = 500

// testdbStory: a store that keeps each member's data on its own claim, scaled up and down.
func testdbStory() {
	var dc *databasev1alpha1.DatabaseCluster

	It("becomes Available with a restricted pod that writes its volume", func(ctx SpecContext) {
		ns := newNamespace(ctx, "testdb")
		dc = newCluster(ns, "kv", withImage(testdbImage), withPort(9000))
		began := time.Now()
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		report("testdb: create -> Available (1 replica, real node)", waitAvailable(ctx, dc, began))
		putKeys(ctx, dc, 0, testdbKeys)
	}, NodeTimeout(5*time.Minute))

	It("keeps the data of retained claims through scale 1 -> 3 -> 1 -> 3 (whenScaled: Retain)", func(ctx SpecContext) {
		scale(ctx, dc, 3)
		for ordinal := 1; ordinal <= 2; ordinal++ {
			putKeys(ctx, dc, ordinal, testdbKeys)
		}
		scale(ctx, dc, 1)
		Eventually(func(g Gomega) {
			g.Expect(podsOf(ctx, dc)).To(HaveLen(1))
		}).WithContext(ctx).Should(Succeed())
		var claims corev1.PersistentVolumeClaimList
		Expect(k8s.List(ctx, &claims, client.InNamespace(dc.Namespace))).To(Succeed())
		Expect(claims.Items).To(HaveLen(3), "claims of the removed members are retained")
		scale(ctx, dc, 3)
		read := 0
		for ordinal := range 3 {
			read += expectKeys(ctx, dc, ordinal, testdbKeys)
		}
		reportCount("testdb keys written", 3*testdbKeys)
		reportCount("testdb keys read back after scale 1->3->1->3", read)
		reportCount("testdb keys lost", 3*testdbKeys-read)
	}, NodeTimeout(8*time.Minute))
}

// scale sets the replicas and waits for Available.
func scale(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, replicas int32) {
	GinkgoHelper()
	began := time.Now()
	update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Replicas = &replicas })
	report(fmt.Sprintf("testdb: scale to %d -> Available", replicas), waitAvailable(ctx, dc, began))
}

// dialMember connects to the member with the given ordinal.
func dialMember(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, ordinal int) *testdb.Client {
	GinkgoHelper()
	ip := podIP(ctx, dc.Namespace, fmt.Sprintf("%s-%d", dc.StatefulSetName(), ordinal))
	var c *testdb.Client
	Eventually(func(g Gomega) {
		var err error
		c, err = testdb.DialContext(ctx, net.JoinHostPort(ip, strconv.Itoa(int(dc.DatabasePort()))))
		g.Expect(err).NotTo(HaveOccurred())
	}).WithContext(ctx).Should(Succeed())
	return c
}

// putKeys writes n keys into one member.
func putKeys(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, ordinal, n int) {
	GinkgoHelper()
	c := dialMember(ctx, dc, ordinal)
	defer func() { _ = c.Close() }()
	for i := range n {
		Expect(c.Put(memberKey(ordinal, i), memberValue(ordinal, i))).To(Succeed())
	}
}

// expectKeys reads every key of one member back and returns how many it found intact.
func expectKeys(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, ordinal, n int) int {
	GinkgoHelper()
	c := dialMember(ctx, dc, ordinal)
	defer func() { _ = c.Close() }()
	found := 0
	for i := range n {
		v, ok, err := c.Get(memberKey(ordinal, i))
		Expect(err).NotTo(HaveOccurred())
		if ok && v == memberValue(ordinal, i) {
			found++
		}
	}
	Expect(found).To(Equal(n), "member %d lost keys", ordinal)
	count, err := c.Count()
	Expect(err).NotTo(HaveOccurred())
	Expect(count).To(Equal(n))
	return found
}

func memberKey(ordinal, i int) string   { return fmt.Sprintf("m%d-k%05d", ordinal, i) }
func memberValue(ordinal, i int) string { return fmt.Sprintf("v-%d-%d", ordinal, i) }
