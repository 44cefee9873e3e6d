package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"time"
)

// The polling case's certificates, as controllers/internal/certs issues them for a cluster
// (which hack/bench may not import): an ECDSA P-256 CA that signs end-entity certificates only,
// and each member's P-256 serving certificate for its DNS name and the loopback addresses, keys
// in PKCS#8. What a read costs depends on these kinds, so they are the operator's.

// pemPair is a certificate and its key, PEM-encoded; key is the parsed key, for signing.
type pemPair struct {
	certPEM, keyPEM []byte
	cert            *x509.Certificate
	key             *ecdsa.PrivateKey
}

// newPollingCA issues a self-signed CA named name, valid a day.
func newPollingCA(name string, now time.Time) (pemPair, error) {
	return issuePair(&x509.Certificate{Subject: pkix.Name{CommonName: name}, BasicConstraintsValid: true, IsCA: true,
		MaxPathLen: 0, MaxPathLenZero: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}, nil, now)
}

// newPollingServing issues a serving certificate for dnsName signed by ca, valid a day.
func newPollingServing(ca pemPair, dnsName string, now time.Time) (pemPair, error) {
	return issuePair(&x509.Certificate{Subject: pkix.Name{CommonName: dnsName}, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    []string{dnsName}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}}, &ca, now)
}

// issuePair signs template for a new key, by parent (nil: self-signed).
func issuePair(template *x509.Certificate, parent *pemPair, now time.Time) (pemPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return pemPair{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return pemPair{}, err
	}
	template.SerialNumber = serial.Add(serial, big.NewInt(1))
	template.NotBefore, template.NotAfter = now.Add(-5*time.Minute), now.Add(24*time.Hour)
	signerCert, signerKey := template, key
	if parent != nil {
		signerCert, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, signerCert, key.Public(), signerKey)
	if err != nil {
		return pemPair{}, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return pemPair{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return pemPair{}, err
	}
	return pemPair{certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), cert: cert, key: key}, nil
}
