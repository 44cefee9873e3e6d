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

package memberagent

import (
	"bytes"
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
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed1b407122/database-operator/controllers/internal/certs"
)

// OperatorClientName is the CommonName of the operator's client certificate: the one name the
// agent acts for. A member's serving certificate comes from the same CA and may authenticate
// clients too (etcd's peers use it so), so the CA alone does not tell the operator from a member.
const OperatorClientName = "database-operator"

// ClientValidity is how long the operator's client certificate is valid: as long as a serving
// certificate (certs.ServingValidity), renewed the same way.
const ClientValidity = certs.ServingValidity

// NewClientCertificate issues a client certificate (ExtKeyUsageClientAuth only) for commonName
// signed by ca, valid from now - certs.ClockSkew for validity. The operator's has the name
// OperatorClientName. certs issues CAs and serving certificates only, so this builds its own
// template and signs it with the CA's pair as crypto/tls reads it.
func NewClientCertificate(ca certs.Pair, commonName string, now time.Time, validity time.Duration) (certs.Pair, error) {
	caPair, err := tls.X509KeyPair(ca.CertPEM, ca.KeyPEM)
	if err != nil {
		return certs.Pair{}, fmt.Errorf("the CA: %w", err)
	}
	signer, ok := caPair.PrivateKey.(crypto.Signer)
	if !ok || caPair.Leaf == nil || !caPair.Leaf.IsCA {
		return certs.Pair{}, errors.New("the CA: not a CA's certificate and signing key")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return certs.Pair{}, fmt.Errorf("generate the key: %w", err)
	}
	template, err := clientTemplate(commonName, now, validity)
	if err != nil {
		return certs.Pair{}, err
	}
	der, err := x509.CreateCertificate(rand.Reader, template, caPair.Leaf, key.Public(), signer)
	if err != nil {
		return certs.Pair{}, fmt.Errorf("create the certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return certs.Pair{}, fmt.Errorf("encode the key: %w", err)
	}
	return certs.Pair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// clientTemplate is the client certificate of commonName, valid from now - certs.ClockSkew for
// validity.
func clientTemplate(commonName string, now time.Time, validity time.Duration) (*x509.Certificate, error) {
	if commonName == "" {
		return nil, errors.New("a client certificate needs a common name")
	}
	// A random serial of up to 128 bits, never zero, as certs issues them.
	limit := new(big.Int).Lsh(big.NewInt(1), 128)
	serial, err := rand.Int(rand.Reader, limit.Sub(limit, big.NewInt(1)))
	if err != nil {
		return nil, fmt.Errorf("generate the serial number: %w", err)
	}
	now = now.UTC().Truncate(time.Second)
	return &x509.Certificate{
		SerialNumber:          serial.Add(serial, big.NewInt(1)),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-certs.ClockSkew),
		NotAfter:              now.Add(validity),
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, nil
}

// ServerConfig is the agent's TLS configuration for its serving pair and the cluster's CA:
// TLS 1.3 only, and a client certificate signed by the CA required of every connection.
func ServerConfig(caPEM, certPEM, keyPEM []byte) (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s holds no PEM certificate", certs.CACertKey)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("the serving pair: %w", err)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{pair},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
	}, nil
}

// ServerTLSConfig is ServerConfig for the files of dir, the mounted Secret: ca.crt, tls.crt and
// tls.key. It reads them now, failing if they do not make a configuration, and again at every
// handshake: a handshake that finds other bytes builds a new configuration, so a renewed
// certificate or CA is served without a restart. The files are small and handshakes are few (the
// operator's calls), so reading them is cheaper than watching them; comparing bytes rather than
// modification times also sees the kubelet's atomic swap of the Secret's files. A set that does
// not make a configuration (read in the middle of a change) leaves the last good one in use.
func ServerTLSConfig(dir string) (*tls.Config, error) {
	files := &certFiles{dir: dir}
	if _, err := files.config(); err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		ClientAuth: tls.RequireAndVerifyClientCert,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return files.config()
		},
	}, nil
}

// certFiles is the configuration built from the files of a directory, rebuilt when they change.
type certFiles struct {
	dir string

	mu   sync.Mutex
	read [][]byte
	last *tls.Config
}

// config is the configuration of the files as they are now, or the last good one.
func (f *certFiles) config() (*tls.Config, error) {
	read, err := f.readFiles()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil && f.last != nil && sameFiles(read, f.read) {
		return f.last, nil
	}
	if err == nil {
		var cfg *tls.Config
		if cfg, err = ServerConfig(read[0], read[1], read[2]); err == nil {
			f.read, f.last = read, cfg
			return cfg, nil
		}
	}
	if f.last != nil {
		return f.last, nil
	}
	return nil, fmt.Errorf("the certificates in %s: %w", f.dir, err)
}

// readFiles reads ca.crt, tls.crt and tls.key, in this order.
func (f *certFiles) readFiles() ([][]byte, error) {
	var read [][]byte
	for _, name := range []string{certs.CACertKey, corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
		data, err := os.ReadFile(filepath.Join(f.dir, name))
		if err != nil {
			return nil, err
		}
		read = append(read, data)
	}
	return read, nil
}

// sameFiles tells whether a and b hold the same bytes.
func sameFiles(a, b [][]byte) bool {
	return slices.EqualFunc(a, b, bytes.Equal)
}
