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
	"maps"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/certs"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

func withTLS(spec databasev1alpha1.TLSSpec) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.TLS = &spec }
}

var _ = Describe("DatabaseCluster TLS", Ordered, Label("integration"), func() {
	clock := clocktesting.NewFakePassiveClock(time.Now())
	k8s := testenv.StartInBeforeAll(func(mgr ctrl.Manager) error {
		return (&Reconciler{ReconcilerBase: testenv.ReconcilerBase(mgr), PodReadyTimeout: podReadyTimeout, Clock: clock}).SetupWithManager(mgr)
	})
	clusters := testenv.Kind[*databasev1alpha1.DatabaseCluster, *appsv1.StatefulSet]{
		Env: k8s, Name: "DatabaseCluster", ChildName: (*databasev1alpha1.DatabaseCluster).StatefulSetName,
	}
	secret := func(ctx SpecContext, dc *databasev1alpha1.DatabaseCluster, name string) func(Gomega) *corev1.Secret {
		return testenv.Read[*corev1.Secret](ctx, k8s, client.ObjectKey{Namespace: dc.Namespace, Name: name})
	}
	checksum := func(sts *appsv1.StatefulSet) string {
		return sts.Spec.Template.Annotations[databasev1alpha1.InputsChecksumAnnotation]
	}

	It("runs a CA of the cluster's own and a serving certificate for every name of the cluster, the CA's key kept in its Secret", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "tls-")), withTLS(databasev1alpha1.TLSSpec{}))
		sts := clusters.Create(ctx, dc)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		ca, serving := secret(ctx, dc, "db-ca")(Default), secret(ctx, dc, "db-tls")(Default)
		Expect(ca.Type).To(Equal(corev1.SecretTypeTLS))
		Expect(metav1.IsControlledBy(ca, dc) && metav1.IsControlledBy(serving, dc)).To(BeTrue())
		Expect(slices.Sorted(maps.Keys(serving.Data))).To(Equal([]string{"ca.crt", "tls.crt", "tls.key"}), "no CA key in what the pods mount")
		Expect(serving.Data["ca.crt"]).To(Equal(ca.Data["tls.crt"]))
		for _, name := range []string{"db", "db." + dc.Namespace + ".svc", "db-2.db-headless." + dc.Namespace + ".svc.cluster.local", "localhost"} {
			Expect(certs.VerifyChain(serving.Data["tls.crt"], ca.Data["tls.crt"], name, clock.Now())).To(Succeed(), name)
		}
		Expect(certs.VerifyChain(serving.Data["tls.crt"], ca.Data["tls.crt"], "db-0.other-headless."+dc.Namespace+".svc", clock.Now())).NotTo(Succeed())
		cert, err := certs.ParseCertificate(serving.Data["tls.crt"])
		Expect(err).NotTo(HaveOccurred())
		Expect(cert.NotAfter.Sub(clock.Now())).To(BeNumerically("~", 90*24*time.Hour, time.Minute))

		Expect(checksum(sts)).To(HaveLen(64))
		Expect(sts.Spec.Template.Spec.Containers[0].VolumeMounts).To(ContainElement(
			corev1.VolumeMount{Name: "tls", MountPath: "/etc/database/tls", ReadOnly: true}))
		Eventually(func(g Gomega) int64 {
			notAfter := clusters.Current(ctx, dc)(g).Status.CertificateNotAfter
			g.Expect(notAfter).NotTo(BeNil())
			return notAfter.Unix()
		}).Should(Equal(cert.NotAfter.Unix()))
	})

	It("renews the serving certificate at two thirds of its life, keeps the CA, and rolls the pods by checksum only", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "renew-")),
			withTLS(databasev1alpha1.TLSSpec{CertificateDuration: &metav1.Duration{Duration: time.Hour}}))
		sts := clusters.Create(ctx, dc)
		ca, before := secret(ctx, dc, "db-ca")(Default), secret(ctx, dc, "db-tls")(Default)

		clock.SetTime(clock.Now().Add(38 * time.Minute))
		clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Annotations = map[string]string{"touch": "1"} })
		Consistently(func(g Gomega) []byte { return secret(ctx, dc, "db-tls")(g).Data["tls.crt"] }, time.Second).
			Should(Equal(before.Data["tls.crt"]), "not before two thirds of its 65 minutes (valid from 5 minutes back): 38m20s after it was issued")

		clock.SetTime(clock.Now().Add(time.Minute))
		clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Annotations = map[string]string{"touch": "2"} })
		Eventually(func(g Gomega) []byte { return secret(ctx, dc, "db-tls")(g).Data["tls.crt"] }).ShouldNot(Equal(before.Data["tls.crt"]))
		Expect(secret(ctx, dc, "db-ca")(Default).Data).To(Equal(ca.Data), "the CA is years from its renewal")
		after := clusters.Child(ctx, dc)
		Eventually(func(g Gomega) string { return checksum(after(g)) }).ShouldNot(Equal(checksum(sts)))
		rolled := after(Default).Spec.Template.DeepCopy()
		delete(rolled.Annotations, databasev1alpha1.InputsChecksumAnnotation)
		Expect(rolled.Spec).To(Equal(sts.Spec.Template.Spec), "only the checksum changes")
	})

	It("serves a kubernetes.io/tls Secret of the user's, says what is wrong with it, and issues nothing", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "usertls-")
		dc := newCluster("db", withNamespace(ns), withTLS(databasev1alpha1.TLSSpec{ServerSecretName: "db-cert"}))
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(Equal([]string{"True", "InputMissing",
			"spec.tls.serverSecretName names the Secret db-cert, which does not exist in namespace " + ns + ": no pod is changed until it does"}))

		issuer, err := certs.NewCA("cert-manager test CA", clock.Now())
		Expect(err).NotTo(HaveOccurred())
		leaf, err := certs.NewServing(issuer, []string{"db." + ns + ".svc"}, clock.Now())
		Expect(err).NotTo(HaveOccurred())
		user := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-cert"}, Type: corev1.SecretTypeTLS,
			Data: leaf.SecretData()}
		Expect(k8s.Create(ctx, user)).To(Succeed())
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(Equal([]string{"True", "InputMissing",
			"the Secret db-cert of spec.tls has no key ca.crt: clients and members need the CA that signed tls.crt"}))

		testenv.Update(ctx, k8s, user, func(s *corev1.Secret) { s.Data["ca.crt"] = issuer.CertPEM })
		sts := clusters.Child(ctx, dc)
		Eventually(func(g Gomega) string { return sts(g).Spec.Template.Spec.Volumes[0].Secret.SecretName }).Should(Equal("db-cert"))
		for _, name := range []string{"db-ca", "db-tls"} {
			Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{}))).To(BeTrue(), name)
		}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(user), user)).To(Succeed())
		Expect(user.OwnerReferences).To(BeEmpty())
	})
})
