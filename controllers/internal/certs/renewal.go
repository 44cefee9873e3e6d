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
	"cmp"
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"
)

// RenewAt is when cert is due for renewal: once two thirds of its lifetime (NotBefore to
// NotAfter) have passed. For a certificate of NewServing that is 30 days and 100 seconds before
// it expires (its lifetime is ServingValidity plus the ClockSkew backdating); for the CA, more
// than three years. The controller requeues for the earlier of the CA's and the serving
// certificate's.
func RenewAt(cert *x509.Certificate) time.Time {
	lifetime := cert.NotAfter.Sub(cert.NotBefore)
	return cert.NotAfter.Add(-lifetime / 3)
}

// NeedsRenewal says whether the serving certificate certPEM must be reissued at now, and why:
// when it is missing or does not parse, is not valid yet or past its renewal point (RenewAt),
// does not cover the same names as wantDNSNames (ServingDNSNames) or the same IPs as
// LoopbackIPs, or was not signed by the key of the CA caPEM (the CA was replaced). Names are
// compared by coverage, wildcards included: a member a scale-up adds is covered by the
// wildcard and one a scale-down removes by the wanted wildcard, so only a change of the cluster's
// names (or of this package's name policy) reissues. The reason is empty when it returns false.
// It judges the serving certificate only: the controller loads the CA first (PairFromSecretData)
// and renews it at its own RenewAt with RenewCA, since a leaf reissued by a broken CA fails too.
func NeedsRenewal(certPEM []byte, wantDNSNames []string, caPEM []byte, now time.Time) (bool, string) {
	if len(certPEM) == 0 {
		return true, "there is no certificate"
	}
	cert, err := ParseCertificate(certPEM)
	if err != nil {
		return true, fmt.Sprintf("the certificate does not parse: %v", err)
	}
	// The first reason, in this order; all are cheap.
	if reason := cmp.Or(
		timeReason(cert, now),
		namesReason(cert.DNSNames, wantDNSNames),
		ipsReason(cert.IPAddresses, LoopbackIPs()),
		issuerReason(cert, caPEM),
	); reason != "" {
		return true, reason
	}
	return false, ""
}

// timeReason says why cert is due at now, or "".
func timeReason(cert *x509.Certificate, now time.Time) string {
	switch renewAt := RenewAt(cert); {
	case now.Before(cert.NotBefore):
		return "the certificate is not valid before " + cert.NotBefore.UTC().Format(time.RFC3339)
	case !now.Before(renewAt):
		return "the certificate's renewal point " + renewAt.UTC().Format(time.RFC3339) + " has passed"
	}
	return ""
}

// namesReason says which names the certificate lacks or has beyond the wanted ones, or "".
func namesReason(have, want []string) string {
	if missing := uncovered(want, have); len(missing) > 0 {
		return "the certificate does not cover " + strings.Join(missing, ", ")
	}
	if extra := uncovered(have, want); len(extra) > 0 {
		return "the certificate covers names no longer wanted: " + strings.Join(extra, ", ")
	}
	return ""
}

// uncovered are the names that no pattern of patterns matches, in order.
func uncovered(names, patterns []string) []string {
	var out []string
	for _, name := range names {
		if !slices.ContainsFunc(patterns, func(p string) bool { return matches(p, name) }) {
			out = append(out, name)
		}
	}
	return out
}

// matches says whether the SAN pattern covers name, as TLS clients match (RFC 6125): equal but
// for case, or a wildcard "*.REST" standing for exactly one leftmost label. A wildcard name is
// covered only by the same wildcard.
func matches(pattern, name string) bool {
	pattern, name = strings.ToLower(pattern), strings.ToLower(name)
	if pattern == name {
		return true
	}
	rest, wildcard := strings.CutPrefix(pattern, "*.")
	if !wildcard || strings.HasPrefix(name, "*.") {
		return false
	}
	label, nameRest, ok := strings.Cut(name, ".")
	return ok && label != "" && nameRest == rest
}

// ipsReason says how the certificate's IP SANs differ from the wanted ones, or "".
func ipsReason(have, want []net.IP) string {
	if slices.EqualFunc(have, want, net.IP.Equal) {
		return ""
	}
	return fmt.Sprintf("the certificate covers the IPs %v, not %v", have, want)
}

// issuerReason says why cert was not signed by the key of the first certificate of caPEM, or "".
func issuerReason(cert *x509.Certificate, caPEM []byte) string {
	ca, err := ParseCertificate(caPEM)
	if err != nil {
		return fmt.Sprintf("the CA's certificate does not parse: %v", err)
	}
	if err := cert.CheckSignatureFrom(ca); err != nil {
		return fmt.Sprintf("the certificate is not signed by the CA %q: %v", ca.Subject.CommonName, err)
	}
	return ""
}
