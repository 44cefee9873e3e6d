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
	"net"
	"testing"
	"time"
)

func TestNeedsRenewal(t *testing.T) {
	ca := mustCA(t, "team/db CA", t0)
	other := mustCA(t, "other CA", t0)
	names := ServingDNSNames("db", "team", 3)
	leaf := mustServing(t, ca, names, t0).CertPEM
	oneMember := mustServing(t, ca, ServingDNSNames("db", "team", 1), t0).CertPEM
	pastRenewal := "the certificate's renewal point 2026-04-30T11:58:20Z has passed"
	for _, tc := range []struct {
		name       string
		cert       []byte
		want       []string
		ca         []byte
		now        time.Time
		wantRenew  bool
		wantReason string
	}{
		{"fresh", leaf, names, ca.CertPEM, t0, false, ""},
		{"a second before the renewal point", leaf, names, ca.CertPEM, wantServingRenew.Add(-time.Second), false, ""},
		{"at the renewal point", leaf, names, ca.CertPEM, wantServingRenew, true, pastRenewal},
		{"a second after the renewal point", leaf, names, ca.CertPEM, wantServingRenew.Add(time.Second), true, pastRenewal},
		{"expired", leaf, names, ca.CertPEM, wantServingExpiry.Add(time.Hour), true, pastRenewal},
		{"not valid yet", leaf, names, ca.CertPEM, wantNotBefore.Add(-time.Second), true,
			"the certificate is not valid before 2026-03-01T11:55:00Z"},
		{"scaled up: the wildcard covers the new members", leaf, ServingDNSNames("db", "team", 5), ca.CertPEM, t0, false, ""},
		{"scaled down: the wanted wildcard covers the old members", leaf, ServingDNSNames("db", "team", 1), ca.CertPEM, t0, false, ""},
		{"a name added", leaf, append(ServingDNSNames("db", "team", 3), "db.example.com"), ca.CertPEM, t0, true,
			"the certificate does not cover db.example.com"},
		{"a name no longer wanted", leaf, names[:len(names)-1], ca.CertPEM, t0, true,
			"the certificate covers names no longer wanted: localhost"},
		{"another namespace", oneMember, ServingDNSNames("db", "prod", 1), ca.CertPEM, t0, true,
			"the certificate does not cover db.prod, db.prod.svc, db.prod.svc.cluster.local, " +
				"db-headless.prod, db-headless.prod.svc, db-headless.prod.svc.cluster.local, " +
				"*.db-headless.prod.svc, *.db-headless.prod.svc.cluster.local, " +
				"db-0.db-headless.prod.svc, db-0.db-headless.prod.svc.cluster.local"},
		{"another CA", leaf, names, other.CertPEM, t0, true,
			"the certificate is not signed by the CA \"other CA\": x509: ECDSA verification failure"},
		{"no certificate", nil, names, ca.CertPEM, t0, true, "there is no certificate"},
		{"garbage", []byte("garbage"), names, ca.CertPEM, t0, true, "the certificate does not parse: no PEM certificate"},
		{"a broken certificate block", []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), names, ca.CertPEM, t0, true,
			"the certificate does not parse: certificate 1: x509: malformed certificate"},
		{"a garbage CA", leaf, names, []byte("garbage"), t0, true, "the CA's certificate does not parse: no PEM certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			renew, reason := NeedsRenewal(tc.cert, tc.want, tc.ca, tc.now)
			if renew != tc.wantRenew || reason != tc.wantReason {
				t.Errorf("NeedsRenewal = %v, %q; want %v, %q", renew, reason, tc.wantRenew, tc.wantReason)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"db.team.svc", "db.team.svc", true},
		{"DB.Team.svc", "db.team.SVC", true},
		{"db.team.svc", "db.team", false},
		{"*.db-headless.team.svc", "db-4.db-headless.team.svc", true},
		{"*.db-headless.team.svc", "DB-4.db-headless.team.svc", true},
		{"*.db-headless.team.svc", "a.db-4.db-headless.team.svc", false},
		{"*.db-headless.team.svc", "db-headless.team.svc", false},
		{"*.db-headless.team.svc", ".db-headless.team.svc", false},
		{"*.db-headless.team.svc", "*.db-headless.team.svc", true},
		{"*.team.svc", "*.db-headless.team.svc", false},
		{"db-4.db-headless.team.svc", "*.db-headless.team.svc", false},
	} {
		if got := matches(tc.pattern, tc.name); got != tc.want {
			t.Errorf("matches(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestIPsReason(t *testing.T) {
	for _, tc := range []struct {
		name string
		have []net.IP
		want string
	}{
		{"the loopback addresses", []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}, ""},
		{"none", nil, "the certificate covers the IPs [], not [127.0.0.1 ::1]"},
		{"a pod IP too", []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.0.0.7")},
			"the certificate covers the IPs [127.0.0.1 ::1 10.0.0.7], not [127.0.0.1 ::1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ipsReason(tc.have, LoopbackIPs()); got != tc.want {
				t.Errorf("ipsReason = %q, want %q", got, tc.want)
			}
		})
	}
}
