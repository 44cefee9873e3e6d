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
	"crypto/x509/pkix"
	"errors"
	"testing"
	"time"
)

func TestVerifyChain(t *testing.T) {
	ca := mustCA(t, "team/db CA", t0)
	other := mustCA(t, "other CA", t0)
	leaf := mustServing(t, ca, []string{"db.team.svc", "db-0.db-headless.team.svc"}, t0)
	bundle := append(append([]byte{}, other.CertPEM...), ca.CertPEM...)
	for _, tc := range []struct {
		name  string
		leaf  []byte
		ca    []byte
		host  string
		now   time.Time
		want  string
		check func(error) bool
	}{
		{name: "valid", leaf: leaf.CertPEM, ca: ca.CertPEM, host: "db.team.svc", now: t0},
		{name: "valid by an IP", leaf: leaf.CertPEM, ca: ca.CertPEM, host: "127.0.0.1", now: t0},
		{name: "the CA in a bundle", leaf: leaf.CertPEM, ca: bundle, host: "db-0.db-headless.team.svc", now: t0},
		{name: "a name it does not cover", leaf: leaf.CertPEM, ca: ca.CertPEM, host: "db.prod.svc", now: t0,
			want: "the certificate \"db.team.svc\" does not verify for db.prod.svc: " +
				"x509: certificate is valid for db.team.svc, db-0.db-headless.team.svc, not db.prod.svc",
			check: isHostnameError},
		{name: "another CA", leaf: leaf.CertPEM, ca: other.CertPEM, host: "db.team.svc", now: t0,
			want:  "the certificate \"db.team.svc\" does not verify for db.team.svc: x509: certificate signed by unknown authority",
			check: isUnknownAuthority},
		{name: "expired", leaf: leaf.CertPEM, ca: ca.CertPEM, host: "db.team.svc", now: wantServingExpiry.Add(time.Second),
			want: "the certificate \"db.team.svc\" does not verify for db.team.svc: x509: certificate has expired or is not yet valid: " +
				"current time 2026-05-30T12:00:01Z is after 2026-05-30T12:00:00Z",
			check: isExpired},
		{name: "no certificate", leaf: nil, ca: ca.CertPEM, host: "db.team.svc", now: t0,
			want: "the certificate: no PEM certificate"},
		{name: "no CA", leaf: leaf.CertPEM, ca: []byte("garbage"), host: "db.team.svc", now: t0,
			want: "the CA: no PEM certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyChain(tc.leaf, tc.ca, tc.host, tc.now)
			if tc.want == "" {
				if err != nil {
					t.Errorf("VerifyChain: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Errorf("VerifyChain error:\n%v\nwant\n%s", err, tc.want)
			}
			if tc.check != nil && !tc.check(err) {
				t.Errorf("VerifyChain error %#v: errors.As does not find the x509 error", err)
			}
		})
	}
}

func isHostnameError(err error) bool { var h x509.HostnameError; return errors.As(err, &h) }

func isUnknownAuthority(err error) bool { var u x509.UnknownAuthorityError; return errors.As(err, &u) }

func isExpired(err error) bool {
	var c x509.CertificateInvalidError
	return errors.As(err, &c) && c.Reason == x509.Expired
}

// TestVerifyChainIntermediate: a chain in tls.crt (leaf, then intermediate), as cert-manager
// writes it when an intermediate CA issues; and the cluster's own CA, which may not sign a CA
// (MaxPathLen 0), refused at the top of such a chain.
func TestVerifyChainIntermediate(t *testing.T) {
	for _, tc := range []struct {
		name string
		root Pair
		want string
	}{
		{"under a root that allows it", mustCAWithPathLen(t, "root CA", 1), ""},
		{"under the cluster's CA", mustCA(t, "root CA", t0),
			"the certificate \"db.team.svc\" does not verify for db.team.svc: x509: too many intermediates for path length constraint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			intermediate := mustSignedCA(t, tc.root, "intermediate CA")
			leaf := mustServing(t, intermediate, []string{"db.team.svc"}, t0)
			chain := append(append([]byte{}, leaf.CertPEM...), intermediate.CertPEM...)
			err := VerifyChain(chain, tc.root.CertPEM, "db.team.svc", t0)
			if (tc.want == "" && err != nil) || (tc.want != "" && (err == nil || err.Error() != tc.want)) {
				t.Errorf("VerifyChain with the intermediate: %v, want %q", err, tc.want)
			}
			if err := VerifyChain(leaf.CertPEM, tc.root.CertPEM, "db.team.svc", t0); err == nil {
				t.Error("VerifyChain without the intermediate: want an error")
			}
		})
	}
}

// mustCAWithPathLen is a self-signed CA that may sign pathLen levels of CAs below it.
func mustCAWithPathLen(t *testing.T, commonName string, pathLen int) Pair {
	t.Helper()
	key, err := newKey()
	if err != nil {
		t.Fatal(err)
	}
	template, err := caTemplate(pkix.Name{CommonName: commonName}, t0)
	if err != nil {
		t.Fatal(err)
	}
	template.MaxPathLen, template.MaxPathLenZero = pathLen, false
	p, err := issue(template, template, key, key)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// mustSignedCA is a CA signed by parent (as cert-manager's CA issuer would make an intermediate).
func mustSignedCA(t *testing.T, parent Pair, commonName string) Pair {
	t.Helper()
	parentCert, parentKey, err := parent.parse()
	if err != nil {
		t.Fatal(err)
	}
	key, err := newKey()
	if err != nil {
		t.Fatal(err)
	}
	template, err := caTemplate(pkix.Name{CommonName: commonName}, t0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := issue(template, parentCert, key, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
