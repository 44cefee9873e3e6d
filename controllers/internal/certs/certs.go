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

// Package certs is the certificate authority a DatabaseCluster runs for itself (as CloudNativePG
// does): it issues the cluster's CA and the serving certificate of its members, decides when one
// must be reissued, checks a certificate the user names (what cert-manager writes), and computes
// the checksum that rolls the pods when what they mount changes.
//
// It is pure: PEM bytes and Secret data in, PEM bytes, decisions and errors out. It makes no API
// call and reads no clock; the caller passes the time, so that a test can stand at any instant
// of a certificate's life.
//
// Both Secrets it fills are of type kubernetes.io/tls (tls.crt, tls.key): the CA's as well, which
// is the shape cert-manager's CA issuer reads. The serving Secret also carries ca.crt, the CA's
// certificate only: the CA's private key never leaves the CA's Secret.
package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// KeyType is the key of every certificate this package issues: ECDSA on the NIST P-256 curve.
// Every TLS stack the operands use accepts it (Go's crypto/tls for etcd, OpenSSL for PostgreSQL),
// its signatures are small and fast, and it is what CloudNativePG issues.
const KeyType = "ECDSA P-256"

// CAValidity is how long the cluster's CA certificate is valid: 3650 days (ten years, kubeadm's
// choice for its CAs). The CA is long-lived on purpose: a client that copied ca.crt out of the
// cluster (an application's trust store) must be given the new one when the CA changes, while the
// serving certificate can change every few weeks without anyone noticing. Its key never leaves
// its Secret, whose compromise is the namespace's compromise whatever the lifetime. When the CA is
// renewed (RenewAt, two thirds in, leaving more than three years) RenewCA keeps its key and
// subject, so every certificate it signed still verifies against the new one and peers in the
// middle of a roll keep trusting each other.
const CAValidity = 3650 * 24 * time.Hour

// ServingValidity is how long a serving certificate is valid: 90 days, renewed once two thirds
// of its lifetime have passed (RenewAt), about 30 days before it expires. Thirty days leave room
// for a renewal that fails or waits (a quorum that cannot lose a member, an operator that is
// down for a while) to be noticed and fixed before clients see an expired certificate; it is
// also cert-manager's default renewal point.
const ServingValidity = 90 * 24 * time.Hour

// ClockSkew is how far in the past a certificate's NotBefore is set: five minutes, the tolerance
// Kerberos uses by default. A node whose clock runs behind the operator's would otherwise refuse
// a certificate issued "in its future" right after a renewal; nodes kept by NTP are within
// seconds, so five minutes covers a badly kept clock without widening the validity by much.
const ClockSkew = 5 * time.Minute

// CACertKey is the key of the CA's certificate in the serving Secret (cert-manager's name).
const CACertKey = "ca.crt"

// PEM block types.
const (
	certificateBlock = "CERTIFICATE"
	// PKCS#8 ("PRIVATE KEY") rather than SEC1 ("EC PRIVATE KEY"): it names its algorithm, so it
	// stays valid if the key type ever changes, and it is the form the stricter clients need
	// (Java's PgJDBC reads only PKCS#8). OpenSSL and Go read both.
	privateKeyBlock = "PRIVATE KEY"
)

// Pair is a certificate and its private key, both PEM-encoded. CertPEM may hold a chain: the leaf
// first, then intermediates.
type Pair struct {
	CertPEM []byte
	KeyPEM  []byte
}

// SecretData is the data of a kubernetes.io/tls Secret holding the pair: tls.crt and tls.key.
func (p Pair) SecretData() map[string][]byte {
	return map[string][]byte{corev1.TLSCertKey: p.CertPEM, corev1.TLSPrivateKeyKey: p.KeyPEM}
}

// ServingSecretData is the data of the serving Secret: the serving pair and the CA's certificate
// under ca.crt, so that a member and its clients verify each other with what they mount. It
// takes the CA's certificate only, never its pair, so that the CA's key cannot end up here.
func ServingSecretData(serving Pair, caCertPEM []byte) map[string][]byte {
	data := serving.SecretData()
	data[CACertKey] = caCertPEM
	return data
}

// PairFromSecretData reads a pair from a kubernetes.io/tls Secret's data (the CA's, before it
// signs) and checks that the key matches the certificate.
func PairFromSecretData(data map[string][]byte) (Pair, error) {
	p := Pair{CertPEM: data[corev1.TLSCertKey], KeyPEM: data[corev1.TLSPrivateKeyKey]}
	if _, _, err := p.parse(); err != nil {
		return Pair{}, err
	}
	return p, nil
}

// NewCA issues a self-signed CA valid for CAValidity from now (NotBefore backdated by ClockSkew).
// It signs end-entity certificates only (MaxPathLen 0).
func NewCA(commonName string, now time.Time) (Pair, error) {
	if commonName == "" {
		return Pair{}, errors.New("the CA needs a common name")
	}
	key, err := newKey()
	if err != nil {
		return Pair{}, err
	}
	template, err := caTemplate(pkix.Name{CommonName: commonName}, now)
	if err != nil {
		return Pair{}, err
	}
	return issue(template, template, key, key)
}

// RenewCA reissues the CA's certificate, valid for CAValidity from now, with the same key and
// subject: certificates the old one signed verify against the new one, so a CA renewal needs no
// new serving certificate and never splits the trust between members.
func RenewCA(ca Pair, now time.Time) (Pair, error) {
	cert, key, err := ca.parseCA()
	if err != nil {
		return Pair{}, err
	}
	template, err := caTemplate(cert.Subject, now)
	if err != nil {
		return Pair{}, err
	}
	// The same key identifier, which the certificates it signed name as their AuthorityKeyId.
	// crypto/x509 would derive the same one from the key; set, it does not rest on that.
	template.SubjectKeyId = cert.SubjectKeyId
	certPEM, err := sign(template, template, key.Public(), key)
	if err != nil {
		return Pair{}, err
	}
	return Pair{CertPEM: certPEM, KeyPEM: ca.KeyPEM}, nil
}

// NewServing issues a serving certificate signed by ca for dnsNames (ServingDNSNames) and the
// loopback addresses (LoopbackIPs), valid for ServingValidity from now.
func NewServing(ca Pair, dnsNames []string, now time.Time) (Pair, error) {
	return NewServingValidFor(ca, dnsNames, now, ServingValidity)
}

// NewServingValidFor is NewServing with another validity: a test that must see a renewal uses
// minutes rather than ServingValidity. The certificate is valid from now - ClockSkew to now +
// validity, never past the CA's own expiry (it would not verify after it). Its key usages serve
// both ends of a TLS connection (ServerAuth and ClientAuth): etcd members present the same
// certificate to each other as peers.
func NewServingValidFor(ca Pair, dnsNames []string, now time.Time, validity time.Duration) (Pair, error) {
	if len(dnsNames) == 0 {
		return Pair{}, errors.New("a serving certificate needs at least one DNS name")
	}
	// Shorter than the backdating, the renewal point would lie before the issue time: every
	// reconcile would reissue.
	if validity < ClockSkew {
		return Pair{}, fmt.Errorf("validity %s is shorter than the clock skew allowance %s", validity, ClockSkew)
	}
	caCert, caKey, err := ca.parseCA()
	if err != nil {
		return Pair{}, err
	}
	key, err := newKey()
	if err != nil {
		return Pair{}, err
	}
	template, err := servingTemplate(dnsNames, now, earlier(now.Add(validity), caCert.NotAfter))
	if err != nil {
		return Pair{}, err
	}
	return issue(template, caCert, key, caKey)
}

// servingTemplate is the serving certificate for dnsNames, valid from now - ClockSkew to notAfter.
func servingTemplate(dnsNames []string, now, notAfter time.Time) (*x509.Certificate, error) {
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	return &x509.Certificate{
		SerialNumber: serial,
		// Verifiers read the SANs; the common name is only what tools display.
		Subject:               pkix.Name{CommonName: dnsNames[0]},
		NotBefore:             now.UTC().Truncate(time.Second).Add(-ClockSkew),
		NotAfter:              notAfter.UTC().Truncate(time.Second),
		BasicConstraintsValid: true,
		// DigitalSignature only: KeyEncipherment is for RSA key transport, not an ECDSA key.
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    dnsNames,
		IPAddresses: LoopbackIPs(),
	}, nil
}

// caTemplate is the CA certificate for subject, valid for CAValidity from now.
func caTemplate(subject pkix.Name, now time.Time) (*x509.Certificate, error) {
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now = now.UTC().Truncate(time.Second)
	return &x509.Certificate{
		SerialNumber:          serial,
		Subject:               subject,
		NotBefore:             now.Add(-ClockSkew),
		NotAfter:              now.Add(CAValidity),
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLen:            0,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}, nil
}

// issue signs template with signer (parent's key) for a new key and returns both, encoded.
func issue(template, parent *x509.Certificate, key *ecdsa.PrivateKey, signer crypto.Signer) (Pair, error) {
	certPEM, err := sign(template, parent, key.Public(), signer)
	if err != nil {
		return Pair{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Pair{}, fmt.Errorf("encode the key: %w", err)
	}
	return Pair{CertPEM: certPEM, KeyPEM: pem.EncodeToMemory(&pem.Block{Type: privateKeyBlock, Bytes: der})}, nil
}

// sign creates the certificate of template for pub, signed by signer (parent's key), PEM-encoded.
func sign(template, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) ([]byte, error) {
	der, err := x509.CreateCertificate(rand.Reader, template, parent, pub, signer)
	if err != nil {
		return nil, fmt.Errorf("create the certificate: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: certificateBlock, Bytes: der}), nil
}

// newKey generates an ECDSA P-256 key.
func newKey() (*ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate the key: %w", err)
	}
	return key, nil
}

// newSerial is a random serial number of up to 128 bits from crypto/rand, never zero: RFC 5280
// asks for a positive serial, and 128 random bits make two certificates of one CA sharing a
// serial a practical impossibility.
func newSerial() (*big.Int, error) {
	limit := new(big.Int).Lsh(big.NewInt(1), 128)
	limit.Sub(limit, big.NewInt(1))
	n, err := rand.Int(rand.Reader, limit)
	if err != nil {
		return nil, fmt.Errorf("generate the serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

// parse checks that the pair's key matches its certificate and returns both.
func (p Pair) parse() (*x509.Certificate, crypto.Signer, error) {
	if len(p.CertPEM) == 0 {
		return nil, nil, fmt.Errorf("no %s", corev1.TLSCertKey)
	}
	if len(p.KeyPEM) == 0 {
		return nil, nil, fmt.Errorf("no %s", corev1.TLSPrivateKeyKey)
	}
	cert, err := ParseCertificate(p.CertPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", corev1.TLSCertKey, err)
	}
	// Parsed apart first, so that a broken key is not reported as a mismatch.
	if _, err := parsePrivateKey(p.KeyPEM); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", corev1.TLSPrivateKeyKey, err)
	}
	// What a TLS server loading the pair will check.
	pair, err := tls.X509KeyPair(p.CertPEM, p.KeyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("%s does not match %s: %w", corev1.TLSPrivateKeyKey, corev1.TLSCertKey, err)
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("%s holds a key that cannot sign", corev1.TLSPrivateKeyKey)
	}
	return cert, signer, nil
}

// parsePrivateKey parses the first private key block of keyPEM in the forms TLS Secrets hold it:
// PKCS#8 ("PRIVATE KEY"), SEC 1 ("EC PRIVATE KEY") or PKCS#1 ("RSA PRIVATE KEY"). Its error
// names the block and the form; the ASN.1 detail behind it would tell a user nothing more.
func parsePrivateKey(keyPEM []byte) (crypto.PrivateKey, error) {
	for rest := keyPEM; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return nil, errors.New("no PEM private key")
		}
		var key crypto.PrivateKey
		var err error
		var form string
		switch block.Type {
		case privateKeyBlock:
			form = "PKCS#8"
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			form = "SEC 1"
			key, err = x509.ParseECPrivateKey(block.Bytes)
		case "RSA PRIVATE KEY":
			form = "PKCS#1"
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("the %s block is not a %s key", block.Type, form)
		}
		return key, nil
	}
}

// parseCA is parse for a CA's pair: its certificate must be a CA's.
func (p Pair) parseCA() (*x509.Certificate, crypto.Signer, error) {
	cert, key, err := p.parse()
	if err != nil {
		return nil, nil, fmt.Errorf("the CA: %w", err)
	}
	if !cert.IsCA {
		return nil, nil, errors.New("the CA: its certificate is not a CA's")
	}
	return cert, key, nil
}

// earlier is the earlier of a and b.
func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
