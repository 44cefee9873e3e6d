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
	"fmt"
	"time"
)

// VerifyChain checks that the certificate leafPEM (a chain: the leaf, then intermediates) is
// valid at now for dnsName (a DNS name or an IP address) as a server, up to a CA of caPEM (one
// certificate or a bundle), as a TLS client would. The error says what is wrong, in crypto/x509's
// words (x509.HostnameError lists the names the certificate is valid for; errors.As finds it).
// The controller uses it to report a user's Secret that does not cover the cluster's names.
func VerifyChain(leafPEM, caPEM []byte, dnsName string, now time.Time) error {
	chain, err := ParseCertificates(leafPEM)
	if err != nil {
		return fmt.Errorf("the certificate: %w", err)
	}
	cas, err := ParseCertificates(caPEM)
	if err != nil {
		return fmt.Errorf("the CA: %w", err)
	}
	opts := x509.VerifyOptions{
		DNSName:       dnsName,
		Roots:         x509.NewCertPool(),
		Intermediates: x509.NewCertPool(),
		CurrentTime:   now,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, ca := range cas {
		opts.Roots.AddCert(ca)
	}
	for _, intermediate := range chain[1:] {
		opts.Intermediates.AddCert(intermediate)
	}
	if _, err := chain[0].Verify(opts); err != nil {
		return fmt.Errorf("the certificate %q does not verify for %s: %w", chain[0].Subject.CommonName, dnsName, err)
	}
	return nil
}
