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
	"net"
	"net/http"
	"time"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/httpserve"
)

// ReadyPath is the kubelet's readiness check of the database, which the member agent serves in
// plain HTTP on its health port: 200 while the database answers an observation within
// ReadyTimeout, 503 otherwise. It runs in the agent's container, so it answers for a database
// whose own container is frozen (an exec probe there would hang with it, and a TCP check of the
// database's port passes: the kernel still takes the connection). It says nothing but whether
// the database answers: the role and position are the mutual-TLS endpoint's.
const ReadyPath = databasev1alpha1.MemberAgentReadyPath

// ReadyTimeout bounds the observation of one readiness check.
const ReadyTimeout = databasev1alpha1.MemberAgentReadyTimeoutSeconds * time.Second

// ReadinessHandler serves ReadyPath for engine.
func ReadinessHandler(engine Engine) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+ReadyPath, func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), ReadyTimeout)
		defer cancel()
		if _, err := engine.Observe(ctx); err != nil {
			http.Error(w, "the database does not answer", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("the database answers\n"))
	})
	return mux
}

// ServeReadiness serves ReadinessHandler(engine) on l in plain HTTP until ctx is done.
func ServeReadiness(ctx context.Context, l net.Listener, engine Engine) error {
	srv := &http.Server{
		Handler:           ReadinessHandler(engine),
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      ReadyTimeout + 5*time.Second,
		IdleTimeout:       time.Minute,
	}
	return httpserve.Serve(ctx, srv, l)
}
