// Command testdb is the database of the real-node tests, the entrypoint of the image
// database-operator.test/testdb:v1 (make node-images): a single-member key/value store that
// speaks a line protocol over TCP and keeps its data in an append-only log on its volume (see
// package test/harness/operands/testdb for the protocol and the client).
//
//	testdb [--listen :9000] [--data-dir /var/lib/database]
//
// --listen defaults to ":$PORT" when PORT is set. The process runs as user 65532 in the image:
// the data directory must be writable by it (a volume with fsGroup 65532, or a hostPath
// directory made writable). It exits 0 on SIGTERM or SIGINT.
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/seed1b407122/database-operator/test/harness/operands/testdb"
)

func main() {
	defaultListen := ":9000"
	if p := os.Getenv("PORT"); p != "" {
		defaultListen = ":" + p
	}
	listen := flag.String("listen", defaultListen, "TCP address to serve (default :$PORT when PORT is set)")
	dataDir := flag.String("data-dir", "/var/lib/database", "directory of the append-only log "+testdb.LogFile)
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.LUTC)
	log.SetPrefix("testdb: ")

	st, info, err := testdb.Open(*dataDir)
	if err != nil {
		log.Fatalf("Failed to open the store: %v", err)
	}
	defer func() { _ = st.Close() }()
	if info.TornBytes > 0 {
		log.Printf("Dropped a torn last record of %d bytes from %s", info.TornBytes, info.Path)
	}
	log.Printf("Loaded %d keys (%d records) from %s", info.Keys, info.Records, info.Path)

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("Failed to listen: %v", err)
	}
	log.Printf("Listening on %s", ln.Addr())
	// PID 1 in a container ignores SIGTERM without a handler: the kubelet's stop must not wait
	// for the grace period to end in a SIGKILL.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := testdb.Serve(ctx, ln, st); err != nil {
		log.Fatalf("Serve failed: %v", err)
	}
	log.Printf("Stopped")
}
