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
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// ParseCertificates parses every CERTIFICATE block of certPEM, in order (a chain: the leaf first;
// or a CA bundle). Blocks of other types are skipped, as crypto/tls does; no certificate at all is
// an error.
func ParseCertificates(certPEM []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for rest := certPEM; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != certificateBlock {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", len(certs)+1, err)
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM certificate")
	}
	return certs, nil
}

// ParseCertificate parses the first certificate of certPEM: the leaf of a chain.
func ParseCertificate(certPEM []byte) (*x509.Certificate, error) {
	certs, err := ParseCertificates(certPEM)
	if err != nil {
		return nil, err
	}
	return certs[0], nil
}

// ValidateTLSSecret checks a Secret the user names for the serving certificate (what
// cert-manager writes): of type kubernetes.io/tls, with tls.crt and tls.key, the key matching the
// certificate. It returns the certificate's expiry, for the status. The error names the Secret
// and what is wrong; whether the certificate covers the cluster's names is VerifyChain's question.
func ValidateTLSSecret(secret *corev1.Secret) (time.Time, error) {
	if secret.Type != corev1.SecretTypeTLS {
		return time.Time{}, fmt.Errorf("the Secret %s/%s is of type %q, not %q",
			secret.Namespace, secret.Name, secret.Type, corev1.SecretTypeTLS)
	}
	pair := Pair{CertPEM: secret.Data[corev1.TLSCertKey], KeyPEM: secret.Data[corev1.TLSPrivateKeyKey]}
	cert, _, err := pair.parse()
	if err != nil {
		return time.Time{}, fmt.Errorf("the Secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	return cert.NotAfter, nil
}
