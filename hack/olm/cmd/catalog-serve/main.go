// Command catalog-serve serves a file-based catalog to OLM over gRPC, listening on 127.0.0.1
// only. It is "opm serve DIR" (operator-registry v1.74.0, cmd/opm/serve) with one difference:
// opm listens on ":PORT", every interface, and has no flag to change that, while the catalogs
// this project serves from the host (make run-bundle, the OLM e2e) must never be reachable
// from outside the machine. The registry code is opm's own: the same cache, the same
// Registry, ExperimentalRegistry and Health services.
//
//	catalog-serve --port 0 --address-file DIR/address --cache-dir DIR/cache CATALOG_DIR
//
// With --address-file, the address actually bound (127.0.0.1:PORT, useful with --port 0) is
// written to that file once the server accepts connections; its presence means "ready".
// SIGTERM or SIGINT stops the server gracefully.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/operator-framework/operator-registry/pkg/api"
	"github.com/operator-framework/operator-registry/pkg/cache"
	"github.com/operator-framework/operator-registry/pkg/server"
	"github.com/sirupsen/logrus"
	"google.golang.org/grpc"
	health "google.golang.org/grpc/health/grpc_health_v1"
)

func main() {
	port := flag.Int("port", 0, "Port on 127.0.0.1 to serve on; 0 picks a free one.")
	addressFile := flag.String("address-file", "", "Write the bound address (127.0.0.1:PORT) to this file once serving.")
	cacheDir := flag.String("cache-dir", "", "Directory of the registry cache (default: a temporary directory, removed on exit).")
	flag.Usage = func() {
		_, _ = fmt.Fprintf(flag.CommandLine.Output(), "Usage: catalog-serve [flags] CATALOG_DIR\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := serve(ctx, flag.Arg(0), *port, *addressFile, *cacheDir); err != nil {
		fmt.Fprintf(os.Stderr, "catalog-serve: %v\n", err)
		os.Exit(1)
	}
}

// serve loads the catalog, listens on 127.0.0.1:port and serves until ctx ends.
func serve(ctx context.Context, dir string, port int, addressFile, cacheDir string) error {
	log := logrus.NewEntry(logrus.New()).WithField("configs", dir)
	if cacheDir == "" {
		tmp, err := os.MkdirTemp("", "catalog-serve-cache-")
		if err != nil {
			return fmt.Errorf("creating a cache directory: %w", err)
		}
		defer func() { _ = os.RemoveAll(tmp) }()
		cacheDir = tmp
	}
	store, err := cache.New(cacheDir, cache.WithLog(log))
	if err != nil {
		return fmt.Errorf("opening the cache %s: %w", cacheDir, err)
	}
	defer func() { _ = store.Close() }()
	if err := cache.LoadOrRebuild(ctx, store, os.DirFS(dir)); err != nil {
		return fmt.Errorf("loading the catalog %s: %w", dir, err)
	}

	lis, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	grpcServer := grpc.NewServer()
	api.RegisterRegistryServer(grpcServer, server.NewRegistryServer(store))
	api.RegisterExperimentalRegistryServer(grpcServer, server.NewExperimentalRegistryServer(store))
	health.RegisterHealthServer(grpcServer, server.NewHealthServer())

	address := lis.Addr().String()
	if addressFile != "" {
		// Written after Listen: connections queue in the backlog until Serve accepts them.
		if err := writeAtomically(addressFile, address); err != nil {
			_ = lis.Close()
			return err
		}
	}
	log.WithField("address", address).Info("serving registry")
	go func() {
		<-ctx.Done()
		log.Info("shutting down server")
		grpcServer.GracefulStop()
	}()
	if err := grpcServer.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}

// writeAtomically writes content to path through a rename, so a reader never sees half of it.
func writeAtomically(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".address-")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_, err = tmp.WriteString(content)
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
