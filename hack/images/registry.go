package images

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// Registry is an OCI registry (go-containerregistry's pkg/registry, blobs in memory) served
// over plain HTTP on one address until Close. It answers the OCI 1.1 referrers API
// (GET /v2/<repo>/referrers/<digest>: the SBOMs Attach pushes), with one gap: the index it
// returns gives each artifact its config's media type as artifactType, not the manifest's
// artifactType (Referrers reads the manifests instead).
type Registry struct {
	// Addr is host:port, e.g. 10.89.0.1:41234.
	Addr   string
	server *http.Server
	done   chan error
}

// ServeRegistry listens on addr (host:port; port 0 picks one) and serves a new, empty
// registry. logs receives one line per request (nil: discarded).
func ServeRegistry(addr string, logs io.Writer) (*Registry, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	if logs == nil {
		logs = io.Discard
	}
	r := &Registry{
		Addr: ln.Addr().String(),
		server: &http.Server{
			Handler:           registry.New(registry.Logger(log.New(logs, "registry: ", log.LstdFlags)), registry.WithReferrersSupport(true)),
			ReadHeaderTimeout: 30 * time.Second,
		},
		done: make(chan error, 1),
	}
	go func() { r.done <- r.server.Serve(ln) }()
	return r, nil
}

// Close stops the registry and closes every connection at once. (A graceful Shutdown can wait
// out its deadline: net/http counts a connection accepted less than 5 s ago that has not sent a
// request yet as active, and opm leaves such connections behind.)
func (r *Registry) Close() error {
	err := r.server.Close()
	if served := <-r.done; !errors.Is(served, http.ErrServerClosed) {
		err = errors.Join(err, served)
	}
	return err
}

// PushLayout pushes the image of an OCI layout written by WriteLayout to repo (a repository
// path such as seed1b407122/database-operator-bundle, optionally with :tag) of r, and returns
// the pushed reference by digest, repo@sha256:...
func (r *Registry) PushLayout(ctx context.Context, layoutDir, repo string) (string, error) {
	img, err := ReadLayout(layoutDir)
	if err != nil {
		return "", err
	}
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	name, tag, _ := strings.Cut(repo, ":")
	if tag == "" {
		tag = "latest"
	}
	if _, err := Push(ctx, img, r.Addr+"/"+name+":"+tag, true); err != nil {
		return "", err
	}
	return name + "@" + digest.String(), nil
}
