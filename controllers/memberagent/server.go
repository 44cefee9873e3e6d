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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/seed1b407122/database-operator/controllers/internal/httpserve"
)

// Port is the agent's port on the pod's IP (the storage agent's is 9190).
const Port = 9191

// The agent's endpoints. GET MemberPath answers the member's Observation; every POST acts, then
// answers the Observation read after acting, so that the operator sees what the action did.
const (
	MemberPath             = "/v1/member"
	PromotePath            = "/v1/promote"
	FencePath              = "/v1/fence"
	TransferLeadershipPath = "/v1/transfer-leadership"
	AddMemberPath          = "/v1/members/add"
	RemoveMemberPath       = "/v1/members/remove"
)

// RequestTimeout bounds each request's work on the engine. It is longer than the longest wait
// an engine makes on purpose (PostgreSQL's promotion waits up to 60 seconds), so that the
// engine's own error is the one reported.
const RequestTimeout = 75 * time.Second

// maxRequestBytes bounds a request's body: the largest holds a name and a URL.
const maxRequestBytes = 64 << 10

// ActionRequest is the body of the POST endpoints; each reads the fields it needs.
type ActionRequest struct {
	// To is the member that TransferLeadershipPath hands the primary role to.
	To string `json:"to,omitempty"`
	// Name is the member that AddMemberPath adds or RemoveMemberPath removes.
	Name string `json:"name,omitempty"`
	// PeerURL is where the other members reach the member that AddMemberPath adds.
	PeerURL string `json:"peerURL,omitempty"`
}

// badRequest is a request that names no member where it must: 400 Bad Request.
type badRequest string

func (b badRequest) Error() string { return string(b) }

// Handler serves engine's endpoints to the operator only: a request whose client certificate
// does not have the CommonName OperatorClientName is refused with 403 Forbidden. It relies on
// the TLS configuration to have verified the certificate against the cluster's CA.
func Handler(engine Engine) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+MemberPath, func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), RequestTimeout)
		defer cancel()
		answer(ctx, w, engine)
	})
	mux.Handle("POST "+PromotePath, action(engine, func(ctx context.Context, _ ActionRequest) error {
		return engine.Promote(ctx)
	}))
	mux.Handle("POST "+FencePath, action(engine, func(ctx context.Context, _ ActionRequest) error {
		return engine.Fence(ctx)
	}))
	mux.Handle("POST "+TransferLeadershipPath, action(engine, func(ctx context.Context, req ActionRequest) error {
		if req.To == "" {
			return badRequest(`"to" names no member`)
		}
		return engine.TransferLeadership(ctx, req.To)
	}))
	mux.Handle("POST "+AddMemberPath, action(engine, func(ctx context.Context, req ActionRequest) error {
		if req.Name == "" || req.PeerURL == "" {
			return badRequest(`"name" and "peerURL" are required`)
		}
		return engine.AddMember(ctx, req.Name, req.PeerURL)
	}))
	mux.Handle("POST "+RemoveMemberPath, action(engine, func(ctx context.Context, req ActionRequest) error {
		if req.Name == "" {
			return badRequest(`"name" names no member`)
		}
		return engine.RemoveMember(ctx, req.Name)
	}))
	return operatorOnly(mux)
}

// operatorOnly lets through the requests whose verified client certificate is the operator's.
func operatorOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "a client certificate is required", http.StatusForbidden)
			return
		}
		if name := r.TLS.PeerCertificates[0].Subject.CommonName; name != OperatorClientName {
			http.Error(w, fmt.Sprintf("%q may not act on this member", name), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// action is the handler of one POST endpoint: it reads the request, runs act on it within
// RequestTimeout, and answers the member's Observation after it.
func action(engine Engine, act func(context.Context, ActionRequest) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), RequestTimeout)
		defer cancel()
		req, err := readRequest(w, r)
		if err == nil {
			err = act(ctx, req)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		answer(ctx, w, engine)
	})
}

// readRequest decodes the request's body, which may be empty.
func readRequest(w http.ResponseWriter, r *http.Request) (ActionRequest, error) {
	var req ActionRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil && !errors.Is(err, io.EOF) {
		return ActionRequest{}, badRequest("the body is not an action request: " + err.Error())
	}
	return req, nil
}

// answer writes the member's Observation.
func answer(ctx context.Context, w http.ResponseWriter, engine Engine) {
	obs, err := engine.Observe(ctx)
	if err != nil {
		writeError(w, fmt.Errorf("observe the member: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(obs)
}

// writeError answers err: 400 for a bad request, 501 for an action the engine does not have,
// 503 for a database server that does not run, 500 with the engine's message for anything else.
func writeError(w http.ResponseWriter, err error) {
	var bad badRequest
	switch {
	case errors.As(err, &bad):
		http.Error(w, err.Error(), http.StatusBadRequest)
	case errors.Is(err, ErrUnsupported):
		http.Error(w, err.Error(), http.StatusNotImplemented)
	case errors.Is(err, ErrStopped):
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	default:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// Serve serves Handler(engine) on l over tlsConfig until ctx is done, then shuts down within a
// second. tlsConfig must require and verify a client certificate (ServerTLSConfig,
// ServerConfig): the agent never serves without mutual TLS, and refuses to start otherwise.
func Serve(ctx context.Context, l net.Listener, engine Engine, tlsConfig *tls.Config) error {
	if tlsConfig == nil || tlsConfig.ClientAuth != tls.RequireAndVerifyClientCert {
		return errors.New("the member agent serves over mutual TLS only: the TLS configuration must require and verify a client certificate")
	}
	srv := &http.Server{
		Handler:           Handler(engine),
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      RequestTimeout + 5*time.Second,
		IdleTimeout:       time.Minute,
	}
	// An action still running a second after ctx is done (a promotion that waits) is cut off.
	return httpserve.Serve(ctx, srv, tls.NewListener(l, tlsConfig))
}
