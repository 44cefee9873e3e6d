//go:build linux && node

package nodee2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

const etcdTLSSampleFile = "database_v1alpha1_databasecluster_etcd_tls.yaml"

// renewalNudgeAnnotation is an annotation of no meaning to the operator: changing it brings the
// operator back to the cluster, which it otherwise does only when the certificate is due (it
// watches no Secret, so it does not see NAME-tls deleted; docs/usage.md says so).
const renewalNudgeAnnotation = "nodee2e.example.com/renewal-requested-at"

// etcdTLSStory, one ordered story: the TLS etcd sample as it is, with the operator's own CA;
// clients over TLS through the client Service, the members over mutual TLS; then a new
// certificate (the Secret NAME-tls deleted) rolls the members while keys are written.
func etcdTLSStory() {
	var (
		dc *databasev1alpha1.DatabaseCluster
		db *etcdClient
	)

	It("runs the TLS etcd sample as it is: members over mutual TLS, keys written and read over TLS through the client Service", func(ctx SpecContext) {
		ns := newNamespace(ctx, "etcd-tls")
		dc = sampleCluster(ns, etcdTLSSampleFile)
		Expect(dc.Spec.TLS).NotTo(BeNil())
		Expect(dc.Spec.Args).To(ContainElements("--peer-client-cert-auth=true", "--cert-file=/etc/database/tls/tls.crt"))
		began := time.Now()
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		report("etcd TLS sample: create -> Available (3 members over mutual TLS, real node)", waitAvailable(ctx, dc, began))
		expectQuorumBudget(ctx, dc)
		serving := servingSecret(ctx, dc)
		Expect(dc.Status.CertificateNotAfter).NotTo(BeNil())
		Expect(dc.Status.CertificateNotAfter.Time).To(BeTemporally("~", leafCertificate(serving[corev1.TLSCertKey]).NotAfter, time.Second))

		db = &etcdClient{dc: dc.DeepCopy(), ca: caPool(serving)}
		Eventually(func(g Gomega) { g.Expect(db.put(ctx, "probe", "1")).To(Succeed()) }).WithContext(ctx).Should(Succeed())
		// The client Service and each member present the Secret's certificate under their names.
		svc := db.targets(ctx)[0]
		Expect(servedCertificate(ctx, svc, db.ca)).To(Equal(leafCertificate(serving[corev1.TLSCertKey]).Raw), "the client Service's certificate")
		for _, member := range db.members(ctx) {
			Expect(servedCertificate(ctx, member, db.ca)).To(Equal(leafCertificate(serving[corev1.TLSCertKey]).Raw), member.serverName)
		}
		// TLS only: plain HTTP to the client port gets no answer from etcd.
		plain := &etcdClient{dc: dc.DeepCopy(), serviceOnly: true}
		Expect(plain.put(ctx, "plain", "1")).NotTo(Succeed(), "etcd answered plain HTTP")
		// A client that does not trust the cluster's CA is refused by its own check.
		stranger := &etcdClient{dc: dc.DeepCopy(), ca: x509.NewCertPool(), serviceOnly: true}
		Expect(stranger.put(ctx, "stranger", "1")).To(MatchError(ContainSubstring("certificate signed by unknown authority")))

		db.writeThroughService(ctx, fmt.Sprintf("etcd TLS: %d keys written over TLS through the client Service", etcdKeys))
	}, NodeTimeout(6*time.Minute))

	It("renews the certificate when NAME-tls is deleted: a new one issued, the members rolled one at a time, no key lost", func(ctx SpecContext) {
		oldSecret := servingSecret(ctx, dc)
		oldCert := leafCertificate(oldSecret[corev1.TLSCertKey])
		oldCA := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.CASecretName()}, oldCA)).To(Succeed())
		oldChecksum := statefulSet(ctx, Default, dc).Spec.Template.Annotations[databasev1alpha1.InputsChecksumAnnotation]
		Expect(oldChecksum).NotTo(BeEmpty())
		before := podsOf(ctx, dc)
		Expect(before).To(HaveLen(etcdMembers))

		db.acknowledged = []string{}
		var replaced []string
		began := time.Now()
		rolled := db.duringChange(ctx, func() {
			Expect(k8s.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: dc.Namespace, Name: dc.GeneratedTLSSecretName()}})).To(Succeed())
			update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) {
				if dc.Annotations == nil {
					dc.Annotations = map[string]string{}
				}
				dc.Annotations[renewalNudgeAnnotation] = time.Now().UTC().Format(time.RFC3339Nano)
			})
			// The roll: at most one member away at any time, highest ordinal first.
			Eventually(func(g Gomega) {
				pods := podsOf(ctx, dc)
				away := 0
				for i := range etcdMembers {
					name := dc.StatefulSetName() + "-" + strconv.Itoa(i)
					p, ok := pods[name]
					if !ok || p.DeletionTimestamp != nil || !isReady(&p) {
						away++
					}
					if ok && p.UID != before[name].UID && !slices.Contains(replaced, name) {
						replaced = append(replaced, name)
					}
				}
				if away > 1 {
					StopTrying(fmt.Sprintf("%d of %d members away at once during the roll", away, etcdMembers)).Now()
				}
				g.Expect(replaced).To(HaveLen(etcdMembers))
				sts := statefulSet(ctx, g, dc)
				g.Expect(sts.Spec.Template.Annotations[databasev1alpha1.InputsChecksumAnnotation]).NotTo(Equal(oldChecksum))
			}).WithContext(ctx).WithPolling(100 * time.Millisecond).Should(Succeed())
			waitAvailable(ctx, dc, began)
		})
		report("etcd TLS: NAME-tls deleted -> new certificate, 3 members rolled, Available", time.Since(began))
		Expect(rolled).To(BeNumerically(">", 0))
		Expect(replaced).To(Equal([]string{dc.StatefulSetName() + "-2", dc.StatefulSetName() + "-1", dc.StatefulSetName() + "-0"}),
			"the members were replaced one at a time, highest ordinal first")

		newSecret := servingSecret(ctx, dc)
		newCert := leafCertificate(newSecret[corev1.TLSCertKey])
		Expect(newCert.Raw).NotTo(Equal(oldCert.Raw), "the certificate was issued again")
		Expect(newCert.SerialNumber).NotTo(Equal(oldCert.SerialNumber))
		Expect(newSecret[corev1.TLSPrivateKeyKey]).NotTo(Equal(oldSecret[corev1.TLSPrivateKeyKey]), "a new key")
		ca := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(oldCA), ca)).To(Succeed())
		Expect(ca.UID).To(Equal(oldCA.UID))
		Expect(ca.Data).To(Equal(oldCA.Data), "the CA stays: clients keep trusting the new certificate")
		Expect(newSecret[caKey]).To(Equal(oldSecret[caKey]))
		newChecksum := statefulSet(ctx, Default, dc).Spec.Template.Annotations[databasev1alpha1.InputsChecksumAnnotation]
		Expect(newChecksum).NotTo(Equal(oldChecksum))
		for name, p := range podsOf(ctx, dc) {
			Expect(p.UID).NotTo(Equal(before[name].UID), "member %s was not rolled", name)
			Expect(p.Annotations).To(HaveKeyWithValue(databasev1alpha1.InputsChecksumAnnotation, newChecksum), name)
		}
		// Every rolled member and the client Service serve the new certificate.
		for _, target := range append(db.members(ctx), db.targets(ctx)[0]) {
			Expect(servedCertificate(ctx, target, db.ca)).To(Equal(newCert.Raw), target.serverName)
		}
		Expect(dc.Status.CertificateNotAfter.Time).To(BeTemporally("~", newCert.NotAfter, time.Second))

		db.expectAll(ctx)
		lost := db.missing(ctx, db.acknowledged)
		reportCount("etcd TLS: writes acknowledged during the renewal roll", len(db.acknowledged))
		reportCount("etcd TLS: keys lost (of the 3,000 and of the writes during the roll)", len(lost))
		Expect(lost).To(BeEmpty())
	}, NodeTimeout(8*time.Minute))

	It("deletes the TLS sample with its certificate Secrets", func(ctx SpecContext) {
		Expect(k8s.Delete(ctx, dc)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), &databasev1alpha1.DatabaseCluster{})).NotTo(Succeed())
			g.Expect(podsOf(ctx, dc)).To(BeEmpty())
			for _, name := range []string{dc.CASecretName(), dc.GeneratedTLSSecretName()} {
				err := k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: name}, &corev1.Secret{})
				g.Expect(err).To(HaveOccurred(), "Secret %s is left", name)
			}
		}).WithContext(ctx).Should(Succeed())
	}, NodeTimeout(3*time.Minute))
}

// caKey is the key of the CA's certificate in a certificate Secret.
const caKey = "ca.crt"

// servingSecret waits for the cluster's serving certificate Secret NAME-tls and returns its data.
func servingSecret(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) map[string][]byte {
	GinkgoHelper()
	secret := &corev1.Secret{}
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.GeneratedTLSSecretName()}, secret)).To(Succeed())
		g.Expect(secret.DeletionTimestamp).To(BeNil())
		g.Expect(secret.Data).To(HaveKey(corev1.TLSCertKey))
		g.Expect(secret.Data).To(HaveKey(caKey))
	}).WithContext(ctx).Should(Succeed())
	return secret.Data
}

// caPool holds the CA certificate of a certificate Secret's data: what a client of the cluster
// trusts.
func caPool(data map[string][]byte) *x509.CertPool {
	GinkgoHelper()
	pool := x509.NewCertPool()
	Expect(pool.AppendCertsFromPEM(data[caKey])).To(BeTrue(), "ca.crt holds no certificate")
	return pool
}

// leafCertificate parses the first certificate of a PEM bundle.
func leafCertificate(pemData []byte) *x509.Certificate {
	GinkgoHelper()
	block, _ := pem.Decode(pemData)
	Expect(block).NotTo(BeNil(), "no PEM block")
	cert, err := x509.ParseCertificate(block.Bytes)
	Expect(err).NotTo(HaveOccurred())
	return cert
}

// servedCertificate connects to a target over TLS, verifying its certificate against ca under
// the target's name, and returns the DER of the certificate it presented.
func servedCertificate(ctx context.Context, target etcdTarget, ca *x509.CertPool) []byte {
	GinkgoHelper()
	req, err := http.NewRequest(http.MethodGet, target.url, nil)
	Expect(err).NotTo(HaveOccurred())
	var raw []byte
	Eventually(func(g Gomega) {
		dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 3 * time.Second}, Config: &tls.Config{
			RootCAs: ca, ServerName: target.serverName, MinVersion: tls.VersionTLS12,
		}}
		conn, err := dialer.DialContext(ctx, "tcp", req.URL.Host)
		g.Expect(err).NotTo(HaveOccurred())
		defer func() { _ = conn.Close() }()
		state := conn.(*tls.Conn).ConnectionState()
		g.Expect(state.PeerCertificates).NotTo(BeEmpty())
		raw = state.PeerCertificates[0].Raw
	}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	return raw
}

// missing returns the keys of keys that the cluster does not hold (a linearizable read each).
func (e *etcdClient) missing(ctx context.Context, keys []string) []string {
	GinkgoHelper()
	var lost []string
	for _, key := range keys {
		var out struct {
			Kvs []struct {
				Value string `json:"value"`
			} `json:"kvs"`
		}
		Eventually(func(g Gomega) {
			g.Expect(e.call(ctx, "/v3/kv/range", map[string]any{"key": b64(key)}, &out)).To(Succeed())
		}).WithContext(ctx).Should(Succeed())
		if len(out.Kvs) != 1 || out.Kvs[0].Value != b64("x") {
			lost = append(lost, key)
		}
	}
	return lost
}
