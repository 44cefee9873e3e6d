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
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"maps"
	"net"
	"slices"
	"testing"
	"time"
)

// t0 is the issue time of the tests: a half second past, which the certificates drop (X.509
// times have whole seconds).
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 500_000_000, time.UTC)

// The validity the tests expect at t0, written out rather than computed from the constants.
var (
	wantNotBefore     = time.Date(2026, 3, 1, 11, 55, 0, 0, time.UTC)
	wantServingExpiry = time.Date(2026, 5, 30, 12, 0, 0, 0, time.UTC)
	wantServingRenew  = time.Date(2026, 4, 30, 11, 58, 20, 0, time.UTC)
	wantCAExpiry      = time.Date(2036, 2, 27, 12, 0, 0, 0, time.UTC)
	wantCARenew       = time.Date(2032, 10, 28, 19, 58, 20, 0, time.UTC)
)

func mustCA(t *testing.T, commonName string, now time.Time) Pair {
	t.Helper()
	ca, err := NewCA(commonName, now)
	if err != nil {
		t.Fatalf("NewCA: %v", err)
	}
	return ca
}

func mustServing(t *testing.T, ca Pair, names []string, now time.Time) Pair {
	t.Helper()
	p, err := NewServing(ca, names, now)
	if err != nil {
		t.Fatalf("NewServing: %v", err)
	}
	return p
}

func mustParse(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	cert, err := ParseCertificate(certPEM)
	if err != nil {
		t.Fatalf("ParseCertificate: %v", err)
	}
	return cert
}

// checkKey fails unless keyPEM is one PKCS#8 block holding an ECDSA P-256 key that matches
// certPEM's public key.
func checkKey(t *testing.T, certPEM, keyPEM []byte) {
	t.Helper()
	block, rest := pem.Decode(keyPEM)
	if block == nil || block.Type != "PRIVATE KEY" || len(rest) != 0 {
		t.Fatalf("key PEM: want one PRIVATE KEY block, got %q", keyPEM)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatalf("ParsePKCS8PrivateKey: %v", err)
	}
	ecKey, ok := key.(*ecdsa.PrivateKey)
	if !ok || ecKey.Curve != elliptic.P256() {
		t.Fatalf("key: want ECDSA P-256, got %T", key)
	}
	pub, ok := mustParse(t, certPEM).PublicKey.(*ecdsa.PublicKey)
	if !ok || !pub.Equal(ecKey.Public()) {
		t.Fatal("the certificate's public key is not the key's")
	}
}

func checkSerial(t *testing.T, cert *x509.Certificate) {
	t.Helper()
	if cert.SerialNumber.Sign() <= 0 || cert.SerialNumber.BitLen() > 128 {
		t.Errorf("serial %s: want positive, at most 128 bits", cert.SerialNumber)
	}
}

func TestNewCA(t *testing.T) {
	ca := mustCA(t, "team/db CA", t0)
	cert := mustParse(t, ca.CertPEM)
	checkKey(t, ca.CertPEM, ca.KeyPEM)
	checkSerial(t, cert)
	if !cert.IsCA || !cert.BasicConstraintsValid {
		t.Errorf("IsCA %v, BasicConstraintsValid %v: want both", cert.IsCA, cert.BasicConstraintsValid)
	}
	if cert.MaxPathLen != 0 || !cert.MaxPathLenZero {
		t.Errorf("MaxPathLen %d, MaxPathLenZero %v: want 0, true", cert.MaxPathLen, cert.MaxPathLenZero)
	}
	if want := x509.KeyUsageCertSign | x509.KeyUsageCRLSign; cert.KeyUsage != want {
		t.Errorf("KeyUsage %v, want %v", cert.KeyUsage, want)
	}
	if cert.Subject.CommonName != "team/db CA" || cert.Issuer.CommonName != "team/db CA" {
		t.Errorf("subject %q, issuer %q: want team/db CA", cert.Subject, cert.Issuer)
	}
	if err := cert.CheckSignatureFrom(cert); err != nil {
		t.Errorf("not self-signed: %v", err)
	}
	if !cert.NotBefore.Equal(wantNotBefore) || !cert.NotAfter.Equal(wantCAExpiry) {
		t.Errorf("valid %s to %s, want %s to %s", cert.NotBefore, cert.NotAfter, wantNotBefore, wantCAExpiry)
	}
	if got := RenewAt(cert); !got.Equal(wantCARenew) {
		t.Errorf("RenewAt %s, want %s", got, wantCARenew)
	}
	if other := mustParse(t, mustCA(t, "team/db CA", t0).CertPEM); other.SerialNumber.Cmp(cert.SerialNumber) == 0 {
		t.Errorf("two CAs share the serial %s", cert.SerialNumber)
	}
	if _, err := NewCA("", t0); err == nil || err.Error() != "the CA needs a common name" {
		t.Errorf("NewCA without a name: %v", err)
	}
}

func TestNewServing(t *testing.T) {
	ca := mustCA(t, "team/db CA", t0)
	names := ServingDNSNames("db", "team", 3)
	leaf := mustServing(t, ca, names, t0)
	cert := mustParse(t, leaf.CertPEM)
	caCert := mustParse(t, ca.CertPEM)
	checkKey(t, leaf.CertPEM, leaf.KeyPEM)
	checkSerial(t, cert)
	if cert.IsCA || !cert.BasicConstraintsValid {
		t.Errorf("IsCA %v, BasicConstraintsValid %v: want false, true", cert.IsCA, cert.BasicConstraintsValid)
	}
	if cert.KeyUsage != x509.KeyUsageDigitalSignature {
		t.Errorf("KeyUsage %v, want DigitalSignature only", cert.KeyUsage)
	}
	if want := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}; !slices.Equal(cert.ExtKeyUsage, want) {
		t.Errorf("ExtKeyUsage %v, want %v", cert.ExtKeyUsage, want)
	}
	if !slices.Equal(cert.DNSNames, names) {
		t.Errorf("DNSNames %q, want %q", cert.DNSNames, names)
	}
	if want := []net.IP{net.IPv4(127, 0, 0, 1).To4(), net.IPv6loopback}; !slices.EqualFunc(cert.IPAddresses, want, net.IP.Equal) {
		t.Errorf("IPAddresses %v, want %v", cert.IPAddresses, want)
	}
	if cert.Subject.CommonName != "db" || cert.Issuer.CommonName != "team/db CA" {
		t.Errorf("subject %q, issuer %q: want db, team/db CA", cert.Subject, cert.Issuer)
	}
	if !bytes.Equal(cert.AuthorityKeyId, caCert.SubjectKeyId) || len(cert.AuthorityKeyId) == 0 {
		t.Errorf("AuthorityKeyId %x, want the CA's SubjectKeyId %x", cert.AuthorityKeyId, caCert.SubjectKeyId)
	}
	// 90 days from the issue time, plus the backdating.
	if !cert.NotBefore.Equal(wantNotBefore) || !cert.NotAfter.Equal(wantServingExpiry) {
		t.Errorf("valid %s to %s, want %s to %s", cert.NotBefore, cert.NotAfter, wantNotBefore, wantServingExpiry)
	}
	if got, want := cert.NotAfter.Sub(cert.NotBefore), 90*24*time.Hour+5*time.Minute; got != want {
		t.Errorf("lifetime %s, want %s", got, want)
	}
	if got := RenewAt(cert); !got.Equal(wantServingRenew) {
		t.Errorf("RenewAt %s, want %s", got, wantServingRenew)
	}
	if got := cert.NotAfter.Sub(RenewAt(cert)); got != 30*24*time.Hour+100*time.Second {
		t.Errorf("renewal %s before expiry, want 30 days and 100 s", got)
	}
}

// TestNewServingVerifies checks the certificate as clients will: for every SAN, as a server and
// as a client (etcd peers), and not for a name it does not carry.
func TestNewServingVerifies(t *testing.T) {
	ca := mustCA(t, "team/db CA", t0)
	leaf := mustServing(t, ca, ServingDNSNames("db", "team", 3), t0)
	// The wildcards are checked with a member that a scale-up would add.
	hosts := []string{"db-7.db-headless.team.svc", "db-7.db-headless.team.svc.cluster.local", "127.0.0.1", "::1"}
	for _, name := range ServingDNSNames("db", "team", 3) {
		if name[0] != '*' {
			hosts = append(hosts, name)
		}
	}
	if len(hosts) != 19 {
		t.Fatalf("%d hosts, want 19", len(hosts))
	}
	for _, host := range hosts {
		if err := VerifyChain(leaf.CertPEM, ca.CertPEM, host, t0); err != nil {
			t.Errorf("VerifyChain(%s): %v", host, err)
		}
	}
	roots := x509.NewCertPool()
	roots.AddCert(mustParse(t, ca.CertPEM))
	asClient := x509.VerifyOptions{Roots: roots, CurrentTime: t0, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if _, err := mustParse(t, leaf.CertPEM).Verify(asClient); err != nil {
		t.Errorf("as a client: %v", err)
	}
	for _, host := range []string{"db-0.db-headless.prod.svc", "a.b.db-headless.team.svc", "db.team.svc.example.com"} {
		if err := VerifyChain(leaf.CertPEM, ca.CertPEM, host, t0); err == nil {
			t.Errorf("VerifyChain(%s): want an error", host)
		}
	}
}

// TestServingHandshake runs mutual TLS between two members holding the same certificate, the way
// etcd peers do, over an in-memory connection.
func TestServingHandshake(t *testing.T) {
	ca := mustCA(t, "team/db CA", t0)
	leaf := mustServing(t, ca, ServingDNSNames("db", "team", 3), t0)
	pair, err := tls.X509KeyPair(leaf.CertPEM, leaf.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(mustParse(t, ca.CertPEM))
	clock := func() time.Time { return t0 }
	serverConn, clientConn := net.Pipe()
	// A failed handshake's alert that no one reads would block the pipe for good.
	for _, conn := range []net.Conn{serverConn, clientConn} {
		if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	server := tls.Server(serverConn, &tls.Config{
		Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, Time: clock,
	})
	client := tls.Client(clientConn, &tls.Config{
		Certificates: []tls.Certificate{pair}, RootCAs: pool, ServerName: "db-1.db-headless.team.svc", Time: clock,
	})
	done := make(chan error, 1)
	go func() { done <- server.Handshake() }()
	if err := client.Handshake(); err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server handshake: %v", err)
	}
	if got := server.ConnectionState().PeerCertificates[0].Subject.CommonName; got != "db" {
		t.Errorf("the server saw the client %q, want db", got)
	}
	// The pipes, not the TLS connections: net.Pipe does not buffer, so a close_notify that no one
	// reads would wait for tls.Conn.Close's deadline.
	_ = clientConn.Close()
	_ = serverConn.Close()
}

// TestNewServingNeverOutlivesTheCA: a certificate valid after its CA would not verify then.
func TestNewServingNeverOutlivesTheCA(t *testing.T) {
	// A CA issued ten days short of its whole validity ago expires ten days after t0.
	ca := mustCA(t, "team/db CA", t0.Add(-CAValidity+10*24*time.Hour))
	cert := mustParse(t, mustServing(t, ca, []string{"db"}, t0).CertPEM)
	want := time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC)
	if !cert.NotAfter.Equal(want) || !cert.NotAfter.Equal(mustParse(t, ca.CertPEM).NotAfter) {
		t.Errorf("NotAfter %s, want the CA's %s", cert.NotAfter, want)
	}
}

func TestNewServingValidFor(t *testing.T) {
	ca := mustCA(t, "team/db CA", t0)
	p, err := NewServingValidFor(ca, []string{"db"}, t0, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	cert := mustParse(t, p.CertPEM)
	// 20 minutes of lifetime: due 13 min 20 s in, 8 min 20 s after the issue time.
	if want := time.Date(2026, 3, 1, 12, 8, 20, 0, time.UTC); !RenewAt(cert).Equal(want) {
		t.Errorf("RenewAt %s, want %s", RenewAt(cert), want)
	}
}

func TestNewServingRefuses(t *testing.T) {
	ca := mustCA(t, "team/db CA", t0)
	other := mustCA(t, "other CA", t0)
	leaf := mustServing(t, ca, []string{"db"}, t0)
	for _, tc := range []struct {
		name     string
		ca       Pair
		names    []string
		validity time.Duration
		want     string
	}{
		{"no names", ca, nil, ServingValidity, "a serving certificate needs at least one DNS name"},
		{"validity below the skew", ca, []string{"db"}, 4 * time.Minute,
			"validity 4m0s is shorter than the clock skew allowance 5m0s"},
		{"CA without a key", Pair{CertPEM: ca.CertPEM}, []string{"db"}, ServingValidity, "the CA: no tls.key"},
		{"CA key of another CA", Pair{CertPEM: ca.CertPEM, KeyPEM: other.KeyPEM}, []string{"db"}, ServingValidity,
			"the CA: tls.key does not match tls.crt: tls: private key does not match public key"},
		{"a leaf as the CA", leaf, []string{"db"}, ServingValidity, "the CA: its certificate is not a CA's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewServingValidFor(tc.ca, tc.names, t0, tc.validity)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestRenewCA: the renewed CA has the same key and subject, so what the old one signed still
// verifies and needs no renewal.
func TestRenewCA(t *testing.T) {
	ca := mustCA(t, "team/db CA", t0)
	names := ServingDNSNames("db", "team", 3)
	leaf := mustServing(t, ca, names, t0)
	later := t0.Add(7 * 24 * time.Hour)
	renewed, err := RenewCA(ca, later)
	if err != nil {
		t.Fatal(err)
	}
	old, cert := mustParse(t, ca.CertPEM), mustParse(t, renewed.CertPEM)
	if !bytes.Equal(renewed.KeyPEM, ca.KeyPEM) || !old.PublicKey.(*ecdsa.PublicKey).Equal(cert.PublicKey) {
		t.Error("the renewed CA has another key")
	}
	if cert.Subject.String() != old.Subject.String() || !bytes.Equal(cert.SubjectKeyId, old.SubjectKeyId) {
		t.Errorf("subject %q key id %x, want %q %x", cert.Subject, cert.SubjectKeyId, old.Subject, old.SubjectKeyId)
	}
	if cert.SerialNumber.Cmp(old.SerialNumber) == 0 {
		t.Error("the renewed CA has the old serial")
	}
	if want := time.Date(2036, 3, 5, 12, 0, 0, 0, time.UTC); !cert.NotAfter.Equal(want) {
		t.Errorf("NotAfter %s, want %s", cert.NotAfter, want)
	}
	if !cert.IsCA || !cert.MaxPathLenZero || cert.KeyUsage != x509.KeyUsageCertSign|x509.KeyUsageCRLSign {
		t.Error("the renewed CA lost its constraints")
	}
	if err := VerifyChain(leaf.CertPEM, renewed.CertPEM, "db.team.svc", later); err != nil {
		t.Errorf("the old leaf against the renewed CA: %v", err)
	}
	if renew, reason := NeedsRenewal(leaf.CertPEM, names, renewed.CertPEM, later); renew {
		t.Errorf("NeedsRenewal after the CA's renewal: %s", reason)
	}
	if _, err := RenewCA(leaf, later); err == nil || err.Error() != "the CA: its certificate is not a CA's" {
		t.Errorf("RenewCA of a leaf: %v", err)
	}
}

func TestSecretData(t *testing.T) {
	ca := mustCA(t, "team/db CA", t0)
	leaf := mustServing(t, ca, []string{"db"}, t0)
	data := ServingSecretData(leaf, ca.CertPEM)
	if len(data) != 3 || !bytes.Equal(data["tls.crt"], leaf.CertPEM) || !bytes.Equal(data["tls.key"], leaf.KeyPEM) ||
		!bytes.Equal(data["ca.crt"], ca.CertPEM) {
		t.Errorf("ServingSecretData has keys %v, want tls.crt, tls.key and ca.crt with the pairs' bytes", slices.Sorted(maps.Keys(data)))
	}
	for key, value := range data {
		if bytes.Equal(value, ca.KeyPEM) {
			t.Errorf("the serving Secret holds the CA's key under %s", key)
		}
	}
	back, err := PairFromSecretData(ca.SecretData())
	if err != nil || !bytes.Equal(back.CertPEM, ca.CertPEM) || !bytes.Equal(back.KeyPEM, ca.KeyPEM) {
		t.Errorf("PairFromSecretData(SecretData()) = %v, want the CA's pair", err)
	}
	if _, err := PairFromSecretData(map[string][]byte{"tls.crt": ca.CertPEM, "tls.key": leaf.KeyPEM}); err == nil {
		t.Error("PairFromSecretData with a key of another pair: want an error")
	}
}
