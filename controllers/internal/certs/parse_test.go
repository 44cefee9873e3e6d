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

package certs

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValidateTLSSecret(t *testing.T) {
	ca := mustCA(t, "team/db CA", t0)
	leaf := mustServing(t, ca, []string{"db.team.svc"}, t0)
	other := mustServing(t, ca, []string{"db.team.svc"}, t0)
	secret := func(typ corev1.SecretType, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-tls", Namespace: "team"}, Type: typ, Data: data}
	}
	for _, tc := range []struct {
		name   string
		secret *corev1.Secret
		want   string
	}{
		{"valid", secret(corev1.SecretTypeTLS, ServingSecretData(leaf, ca.CertPEM)), ""},
		{"Opaque", secret(corev1.SecretTypeOpaque, leaf.SecretData()),
			"the Secret team/db-tls is of type \"Opaque\", not \"kubernetes.io/tls\""},
		{"no tls.crt", secret(corev1.SecretTypeTLS, map[string][]byte{"tls.key": leaf.KeyPEM}),
			"the Secret team/db-tls: no tls.crt"},
		{"no tls.key", secret(corev1.SecretTypeTLS, map[string][]byte{"tls.crt": leaf.CertPEM}),
			"the Secret team/db-tls: no tls.key"},
		{"a tls.crt that is not PEM", secret(corev1.SecretTypeTLS, map[string][]byte{"tls.crt": []byte("x"), "tls.key": leaf.KeyPEM}),
			"the Secret team/db-tls: tls.crt: no PEM certificate"},
		{"the key of another certificate", secret(corev1.SecretTypeTLS, map[string][]byte{"tls.crt": leaf.CertPEM, "tls.key": other.KeyPEM}),
			"the Secret team/db-tls: tls.key does not match tls.crt: tls: private key does not match public key"},
		{"a tls.key that is not PEM", secret(corev1.SecretTypeTLS, map[string][]byte{"tls.crt": leaf.CertPEM, "tls.key": []byte("x")}),
			"the Secret team/db-tls: tls.key: no PEM private key"},
		{"a tls.key block that does not parse", secret(corev1.SecretTypeTLS, map[string][]byte{"tls.crt": leaf.CertPEM,
			"tls.key": []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")}),
			"the Secret team/db-tls: tls.key: the PRIVATE KEY block is not a PKCS#8 key"},
		{"a tls.crt that is the CA's", secret(corev1.SecretTypeTLS, map[string][]byte{"tls.crt": ca.CertPEM, "tls.key": leaf.KeyPEM}),
			"the Secret team/db-tls: tls.key does not match tls.crt: tls: private key does not match public key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expiry, err := ValidateTLSSecret(tc.secret)
			if tc.want == "" {
				if err != nil || !expiry.Equal(wantServingExpiry) {
					t.Errorf("ValidateTLSSecret = %s, %v; want %s, nil", expiry, err, wantServingExpiry)
				}
				return
			}
			if err == nil || err.Error() != tc.want || !expiry.Equal(time.Time{}) {
				t.Errorf("ValidateTLSSecret = %s, %v; want the zero time and\n%s", expiry, err, tc.want)
			}
		})
	}
}

// TestValidateTLSSecretSEC1 accepts a key in the other common form, "EC PRIVATE KEY" (SEC 1),
// which older tools and CloudNativePG write.
func TestValidateTLSSecretSEC1(t *testing.T) {
	ca := mustCA(t, "team/db CA", t0)
	leaf := mustServing(t, ca, []string{"db.team.svc"}, t0)
	_, key, err := leaf.parse()
	if err != nil {
		t.Fatal(err)
	}
	sec1, err := x509.MarshalECPrivateKey(key.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	data := map[string][]byte{"tls.crt": leaf.CertPEM, "tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1})}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-tls", Namespace: "team"}, Type: corev1.SecretTypeTLS, Data: data}
	if expiry, err := ValidateTLSSecret(s); err != nil || !expiry.Equal(wantServingExpiry) {
		t.Errorf("ValidateTLSSecret = %s, %v; want %s, nil", expiry, err, wantServingExpiry)
	}
}

func TestParseCertificates(t *testing.T) {
	ca := mustCA(t, "team/db CA", t0)
	leaf := mustServing(t, ca, []string{"db.team.svc"}, t0)
	// A key block between the certificates is skipped, as crypto/tls does.
	mixed := append(append(append([]byte{}, leaf.CertPEM...), leaf.KeyPEM...), ca.CertPEM...)
	certs, err := ParseCertificates(mixed)
	if err != nil || len(certs) != 2 || certs[0].Subject.CommonName != "db.team.svc" || certs[1].Subject.CommonName != "team/db CA" {
		t.Fatalf("ParseCertificates = %d certificates, %v; want the leaf then the CA", len(certs), err)
	}
	if first, err := ParseCertificate(mixed); err != nil || first.Subject.CommonName != "db.team.svc" {
		t.Errorf("ParseCertificate = %v; want the leaf", err)
	}
	if _, err := ParseCertificates(leaf.KeyPEM); err == nil || err.Error() != "no PEM certificate" {
		t.Errorf("ParseCertificates of a key: %v, want no PEM certificate", err)
	}
}
