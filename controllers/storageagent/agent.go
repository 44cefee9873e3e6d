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

// Package storageagent is the storage agent: a mode of the manager binary ("manager
// storage-agent") that the operator runs as a native sidecar in the pods of a DatabaseCluster
// with spec.storage.autoGrow. It serves the usage of the data file system (statfs) as JSON on
// the pod's IP, so that the operator can measure each member without nodes/proxy (the
// kubelet's stats) or pods/exec (df in the pod), both node-admin grade. It reads nothing but
// the file system's counters, writes nothing, and needs no credentials.
package storageagent

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// Command is the first argument that runs the manager binary as the storage agent.
const Command = "storage-agent"

// UsagePath is the agent's one endpoint.
const UsagePath = "/usage"

// Usage is what the agent serves: the data file system's counters, in bytes.
type Usage struct {
	// UsedBytes is what the file system holds (its size minus its free blocks).
	UsedBytes int64 `json:"usedBytes"`
	// CapacityBytes is what the database can use: used plus available to unprivileged users
	// (ext4 keeps a share of the blocks for root, which a non-root database never gets).
	CapacityBytes int64 `json:"capacityBytes"`
}

// StatFunc measures the file system that holds path.
type StatFunc func(path string) (Usage, error)

// Handler serves GET UsagePath with the usage of the file system of path, as stat measures it.
func Handler(path string, stat StatFunc) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+UsagePath, func(w http.ResponseWriter, _ *http.Request) {
		usage, err := stat(path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(usage)
	})
	return mux
}

// Serve serves Handler(path, stat) on l until ctx is done, then shuts down within a second.
func Serve(ctx context.Context, l net.Listener, path string, stat StatFunc) error {
	srv := &http.Server{Handler: Handler(path, stat), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	}
}

// Main runs the agent with the command-line arguments that follow Command and returns the
// process's exit code: --path (the data mount) and --listen (host:port) are required.
func Main(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet(Command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("path", "", "the mount whose file system is measured")
	listen := fs.String("listen", "", "the address to serve "+UsagePath+" on, host:port")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" || *listen == "" {
		_, _ = fmt.Fprintln(stderr, "storage-agent: --path and --listen are required")
		return 2
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "storage-agent:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := Serve(ctx, l, *path, Statfs); err != nil && !errors.Is(err, http.ErrServerClosed) {
		_, _ = fmt.Fprintln(stderr, "storage-agent:", err)
		return 1
	}
	return 0
}

// Read asks the agent at addr (host:port) for its usage with hc, whose timeout bounds the call.
func Read(ctx context.Context, hc *http.Client, addr string) (Usage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+UsagePath, nil)
	if err != nil {
		return Usage{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Usage{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return Usage{}, err
	}
	if resp.StatusCode != http.StatusOK {
		// An answer without a body is told by its status alone: no ": " left before nothing.
		if text := strings.TrimSpace(string(body)); text != "" {
			return Usage{}, fmt.Errorf("the agent answered %s: %s", resp.Status, text)
		}
		return Usage{}, fmt.Errorf("the agent answered %s", resp.Status)
	}
	var u Usage
	if err := json.Unmarshal(body, &u); err != nil {
		return Usage{}, fmt.Errorf("the agent's answer is not its usage: %w", err)
	}
	if u.CapacityBytes <= 0 || u.UsedBytes < 0 {
		return Usage{}, fmt.Errorf("the agent reports used %d of capacity %d bytes", u.UsedBytes, u.CapacityBytes)
	}
	return u, nil
}
