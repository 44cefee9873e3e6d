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
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Agent is where the operator finds one member's agent.
type Agent struct {
	// Address is the host:port the client dials: the pod's IP and Port.
	Address string
	// ServerName is the DNS name the agent's serving certificate must carry: the pod's name in
	// the headless Service (NAME-0.NAME-headless.NAMESPACE.svc). Empty, it is Address's host.
	ServerName string
}

// Client is the operator's side of the agent: it calls an agent over mutual TLS with the
// operator's client certificate, and trusts an agent only if its serving certificate was signed
// by the cluster's CA for the Agent's ServerName.
type Client struct {
	hc *http.Client
}

// dialKey is the context key of the address a request dials.
type dialKey struct{}

// NewClient returns a client that presents the pair clientCertPEM and clientKeyPEM (issued by
// NewClientCertificate for OperatorClientName), trusts the CA caPEM, and gives each call at
// most timeout.
func NewClient(caPEM, clientCertPEM, clientKeyPEM []byte, timeout time.Duration) (*Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("the CA holds no PEM certificate")
	}
	pair, err := tls.X509KeyPair(clientCertPEM, clientKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("the client pair: %w", err)
	}
	dialer := &net.Dialer{Timeout: timeout}
	transport := &http.Transport{
		TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: pool, Certificates: []tls.Certificate{pair},
			ClientSessionCache: tls.NewLRUClientSessionCache(sessionCacheSize)},
		// The request's URL names the agent by its ServerName, which net/http verifies the
		// certificate against; the connection goes to the Address the call put in its context.
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if address, ok := ctx.Value(dialKey{}).(string); ok {
				addr = address
			}
			return dialer.DialContext(ctx, network, addr)
		},
		// A connection kept for a DNS name could outlive the pod behind it; the calls are few,
		// so each makes its own.
		DisableKeepAlives:   true,
		TLSHandshakeTimeout: timeout,
	}
	return &Client{hc: &http.Client{Transport: transport, Timeout: timeout}}, nil
}

// Observe reports the member's role and position.
func (c *Client) Observe(ctx context.Context, a Agent) (Observation, error) {
	return c.do(ctx, a, http.MethodGet, MemberPath, nil)
}

// Promote makes the member the writable primary and reports what it observed after.
func (c *Client) Promote(ctx context.Context, a Agent) (Observation, error) {
	return c.do(ctx, a, http.MethodPost, PromotePath, nil)
}

// Fence stops the member accepting writes and reports what it observed after.
func (c *Client) Fence(ctx context.Context, a Agent) (Observation, error) {
	return c.do(ctx, a, http.MethodPost, FencePath, nil)
}

// TransferLeadership hands the primary role from the member to the member named to, and
// reports what the member observed after.
func (c *Client) TransferLeadership(ctx context.Context, a Agent, to string) (Observation, error) {
	return c.do(ctx, a, http.MethodPost, TransferLeadershipPath, &ActionRequest{To: to})
}

// AddMember adds the member name at peerURL through the member's agent, and reports what the
// member observed after.
func (c *Client) AddMember(ctx context.Context, a Agent, name, peerURL string) (Observation, error) {
	return c.do(ctx, a, http.MethodPost, AddMemberPath, &ActionRequest{Name: name, PeerURL: peerURL})
}

// RemoveMember removes the member name through the member's agent, and reports what the member
// observed after.
func (c *Client) RemoveMember(ctx context.Context, a Agent, name string) (Observation, error) {
	return c.do(ctx, a, http.MethodPost, RemoveMemberPath, &ActionRequest{Name: name})
}

// do calls path on the agent and decodes its Observation. An answer of 501 is returned as
// ErrUnsupported, so that the caller can take another way.
func (c *Client) do(ctx context.Context, a Agent, method, path string, body *ActionRequest) (Observation, error) {
	req, err := c.request(ctx, a, method, path, body)
	if err != nil {
		return Observation{}, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return Observation{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Observation{}, err
	}
	text := strings.TrimSpace(string(answer))
	switch {
	case resp.StatusCode == http.StatusNotImplemented:
		return Observation{}, fmt.Errorf("%w: the agent answered %s: %s", ErrUnsupported, resp.Status, text)
	case resp.StatusCode == http.StatusServiceUnavailable:
		return Observation{}, fmt.Errorf("%w: the agent answered %s: %s", ErrStopped, resp.Status, text)
	case resp.StatusCode != http.StatusOK:
		return Observation{}, fmt.Errorf("the agent answered %s: %s", resp.Status, text)
	}
	var obs Observation
	if err := json.Unmarshal(answer, &obs); err != nil {
		return Observation{}, fmt.Errorf("the agent's answer is not an observation: %w", err)
	}
	return obs, nil
}

// request is the request of path to the agent a, its body encoded.
func (c *Client) request(ctx context.Context, a Agent, method, path string, body *ActionRequest) (*http.Request, error) {
	host, port, err := net.SplitHostPort(a.Address)
	if err != nil {
		return nil, fmt.Errorf("the agent's address %q: %w", a.Address, err)
	}
	if a.ServerName != "" {
		host = a.ServerName
	}
	var reader io.Reader
	if body != nil {
		encoded, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		reader = bytes.NewReader(encoded)
	}
	ctx = context.WithValue(ctx, dialKey{}, a.Address)
	req, err := http.NewRequestWithContext(ctx, method, "https://"+net.JoinHostPort(host, port)+path, reader)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// sessionCacheSize is how many agents' TLS sessions a client keeps: a cluster has at most 9
// members. A resumed session skips the certificates' signatures and their verification, most of
// a handshake's cost, while each read still makes its own connection.
const sessionCacheSize = 16
