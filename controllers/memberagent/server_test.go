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
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed1b407122/database-operator/controllers/internal/certs"
)

// memberDNSName is the name in the test agent's serving certificate.
const memberDNSName = "db-0.db-headless.ns.svc"

// authority is a cluster's CA with the agent's serving pair and the operator's client pair.
type authority struct {
	ca, serving, client certs.Pair
}

// newAuthority issues a CA named name, a serving certificate for memberDNSName and the
// operator's client certificate.
func newAuthority(t *testing.T, name string) authority {
	t.Helper()
	now := time.Now()
	ca, err := certs.NewCA(name, now)
	if err != nil {
		t.Fatal(err)
	}
	serving, err := certs.NewServing(ca, []string{memberDNSName}, now)
	if err != nil {
		t.Fatal(err)
	}
	return authority{ca: ca, serving: serving, client: issueClient(t, ca, OperatorClientName, now, ClientValidity)}
}

// issueClient issues a client certificate of ca for commonName.
func issueClient(t *testing.T, ca certs.Pair, commonName string, now time.Time, validity time.Duration) certs.Pair {
	t.Helper()
	pair, err := NewClientCertificate(ca, commonName, now, validity)
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

// writeFiles writes the agent's files (ca.crt, tls.crt, tls.key) of a into dir, as the
// kubelet mounts the Secret.
func writeFiles(t *testing.T, dir string, a authority) {
	t.Helper()
	for name, data := range certs.ServingSecretData(a.serving, a.ca.CertPEM) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// serveAgent runs the agent of engine on 127.0.0.1 with the certificates of dir for the test's
// life, and returns its address.
func serveAgent(t *testing.T, engine Engine, dir string) string {
	t.Helper()
	cfg, err := ServerTLSConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, engine, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	})
	return l.Addr().String()
}

// startAgent runs the agent of engine with the certificates of a; it returns its Agent and a
// client with a's operator certificate.
func startAgent(t *testing.T, engine Engine, a authority) (Agent, *Client) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, a)
	agent := Agent{Address: serveAgent(t, engine, dir), ServerName: memberDNSName}
	return agent, newClient(t, a.ca, a.client)
}

// newClient is NewClient for the CA ca and the client pair.
func newClient(t *testing.T, ca, client certs.Pair) *Client {
	t.Helper()
	c, err := NewClient(ca.CertPEM, client.CertPEM, client.KeyPEM, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEveryEndpointAnswersTheOperator: the operator's client is answered by every endpoint,
// and each action's answer is the member observed after it.
func TestEveryEndpointAnswersTheOperator(t *testing.T) {
	sim := NewSimEngine("db-0", RoleReplica)
	agent, c := startAgent(t, sim, newAuthority(t, "db-ca"))
	ctx := context.Background()
	steps := []struct {
		name  string
		call  func() (Observation, error)
		check func(Observation) bool
	}{
		{"observe", func() (Observation, error) { return c.Observe(ctx, agent) },
			func(o Observation) bool { return o.Member == "db-0" && o.Role == RoleReplica }},
		{"promote", func() (Observation, error) { return c.Promote(ctx, agent) },
			func(o Observation) bool { return o.Role == RolePrimary && o.Writable }},
		{"add member", func() (Observation, error) { return c.AddMember(ctx, agent, "db-1", "https://db-1:2380") },
			func(o Observation) bool { return len(o.Members) == 2 && o.Members[1].Name == "db-1" }},
		{"fence", func() (Observation, error) { return c.Fence(ctx, agent) },
			func(o Observation) bool { return o.Fenced && !o.Writable }},
		{"transfer leadership", func() (Observation, error) { return c.TransferLeadership(ctx, agent, "db-1") },
			func(o Observation) bool { return o.Role == RoleReplica }},
		{"remove member", func() (Observation, error) { return c.RemoveMember(ctx, agent, "db-1") },
			func(o Observation) bool { return len(o.Members) == 1 }},
	}
	for _, step := range steps {
		obs, err := step.call()
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if !step.check(obs) {
			t.Fatalf("%s: observed %+v", step.name, obs)
		}
	}
}

// TestClientVerifiesTheAgent: the client refuses an agent whose certificate does not carry the
// name it was given, or that another CA signed.
func TestClientVerifiesTheAgent(t *testing.T) {
	a := newAuthority(t, "db-ca")
	agent, c := startAgent(t, NewSimEngine("db-0", RoleReplica), a)
	wrongName := Agent{Address: agent.Address, ServerName: "db-1.db-headless.ns.svc"}
	if _, err := c.Observe(context.Background(), wrongName); err == nil {
		t.Fatal("the client trusted a certificate of another member's name")
	}
	other := newAuthority(t, "other-ca")
	if _, err := newClient(t, other.ca, other.client).Observe(context.Background(), agent); err == nil {
		t.Fatal("the client trusted a certificate of another CA")
	}
}

// TestRefusals: only the operator's certificate from the cluster's CA reaches the engine; each
// other caller fails the handshake or is answered 403, and the member stays a replica.
func TestRefusals(t *testing.T) {
	a := newAuthority(t, "db-ca")
	other := newAuthority(t, "other-ca")
	sim := NewSimEngine("db-0", RoleReplica)
	agent, _ := startAgent(t, sim, a)
	now := time.Now()
	expired := issueClient(t, a.ca, OperatorClientName, now.Add(-48*time.Hour), 24*time.Hour)
	cases := []struct {
		name   string
		url    string
		client *certs.Pair
		want   int // 0: the handshake fails.
	}{
		{"no client certificate", "https", nil, 0},
		{"a certificate of another CA", "https", &other.client, 0},
		{"an expired certificate", "https", &expired, 0},
		{"another name from the cluster's CA", "https", ptr(issueClient(t, a.ca, "intruder", now, time.Hour)), http.StatusForbidden},
		{"a member's serving certificate", "https", &a.serving, http.StatusForbidden},
		{"plain HTTP", "http", nil, http.StatusBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, err := post(rawClient(a.ca, tc.client), tc.url+"://"+agent.Address+PromotePath)
			switch {
			case tc.want == 0 && err == nil:
				t.Fatalf("the handshake succeeded: %d", status)
			case tc.want != 0 && status != tc.want:
				t.Fatalf("status %d, %v; want %d", status, err, tc.want)
			}
			if obs, _ := sim.Observe(context.Background()); obs.Role != RoleReplica {
				t.Fatalf("the refused caller promoted the member: %+v", obs)
			}
		})
	}
}

// TestEngineErrors: an action the engine does not have is 501 and ErrUnsupported again at the
// client; a database server that does not run is 503 and ErrStopped again; an engine's other
// error is 500 with its message; a request without its member is 400.
func TestEngineErrors(t *testing.T) {
	a := newAuthority(t, "db-ca")
	sim := NewSimEngine("db-0", RolePrimary)
	agent, c := startAgent(t, sim, a)
	ctx := context.Background()
	sim.Fail(ActionTransferLeadership, fmt.Errorf("%w: no transfer here", ErrUnsupported))
	if _, err := c.TransferLeadership(ctx, agent, "db-1"); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "501") {
		t.Fatalf("TransferLeadership: err = %v, want ErrUnsupported from a 501", err)
	}
	sim.Fail(ActionObserve, fmt.Errorf("connect: %w", ErrStopped))
	if _, err := c.Observe(ctx, agent); !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("Observe: err = %v, want ErrStopped from a 503", err)
	}
	sim.Fail(ActionObserve, errors.New("timeout: the server does not answer"))
	if _, err := c.Observe(ctx, agent); err == nil || errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "500") {
		t.Fatalf("Observe: err = %v, want a 500 that is not ErrStopped", err)
	}
	sim.Fail(ActionFence, errors.New("the disk is gone"))
	if _, err := c.Fence(ctx, agent); err == nil || !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "the disk is gone") {
		t.Fatalf("Fence: err = %v, want a 500 with the engine's message", err)
	}
	if _, err := c.TransferLeadership(ctx, agent, ""); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("TransferLeadership to nobody: err = %v, want a 400", err)
	}
}

// TestCertificatesAreReread: when the mounted files change to another CA's, the agent serves
// the new certificate and trusts the new CA's operator only, without a restart.
func TestCertificatesAreReread(t *testing.T) {
	before, after := newAuthority(t, "db-ca"), newAuthority(t, "db-ca-renewed")
	dir := t.TempDir()
	writeFiles(t, dir, before)
	agent := Agent{Address: serveAgent(t, NewSimEngine("db-0", RoleReplica), dir), ServerName: memberDNSName}
	ctx := context.Background()
	if _, err := newClient(t, before.ca, before.client).Observe(ctx, agent); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, after)
	if _, err := newClient(t, after.ca, after.client).Observe(ctx, agent); err != nil {
		t.Fatalf("after the change: %v", err)
	}
	if _, err := newClient(t, before.ca, before.client).Observe(ctx, agent); err == nil {
		t.Fatal("after the change, the old CA's operator was still answered")
	}
	// A broken set (a key that is not the certificate's) leaves the last good one served.
	if err := os.WriteFile(filepath.Join(dir, corev1.TLSPrivateKeyKey), before.serving.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := newClient(t, after.ca, after.client).Observe(ctx, agent); err != nil {
		t.Fatalf("with a broken set: %v", err)
	}
}

// TestServeRequiresMutualTLS: the agent refuses to start on a configuration that does not
// require a client certificate, and stops within a second when its context ends.
func TestServeRequiresMutualTLS(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	a := newAuthority(t, "db-ca")
	cfg, err := ServerConfig(a.ca.CertPEM, a.serving.CertPEM, a.serving.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientAuth = tls.VerifyClientCertIfGiven
	if err := Serve(context.Background(), l, NewSimEngine("db-0", RoleReplica), cfg); err == nil {
		t.Fatal("Serve started without mutual TLS")
	}
	cfg.ClientAuth = tls.RequireAndVerifyClientCert
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, NewSimEngine("db-0", RoleReplica), cfg) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve after cancel: %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Serve still runs a second after its context ended")
	}
}

// rawClient is an HTTP client that trusts ca and presents client if not nil.
func rawClient(ca certs.Pair, client *certs.Pair) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM)
	cfg := &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: pool, ServerName: memberDNSName}
	if client != nil {
		pair, err := tls.X509KeyPair(client.CertPEM, client.KeyPEM)
		if err != nil {
			panic(err)
		}
		// Sent whatever CAs the agent names: Go's client would otherwise keep back a
		// certificate of a CA the agent does not name, and the agent would never see it.
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 5 * time.Second}
}

// post posts an empty body to url and returns the status.
func post(hc *http.Client, url string) (int, error) {
	resp, err := hc.Post(url, "application/json", nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// ptr is a pointer to v.
func ptr[T any](v T) *T { return &v }
