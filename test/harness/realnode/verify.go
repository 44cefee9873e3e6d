//go:build linux

package realnode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
)

// RegistryKeyFile is the public key beside the registry list (registry.txt) that every image of
// the list must be signed with: make node-images generates the pair into NODE_IMAGES_DIR and
// signs each image it lists (hack/node/build-images.sh, image-tool sign).
const RegistryKeyFile = "cosign.pub"

// defaultRegistryKey is cosign.pub beside listFile.
func defaultRegistryKey(listFile string) string {
	return filepath.Join(filepath.Dir(listFile), RegistryKeyFile)
}

// verifyArgs are image-tool's arguments that verify every image of listFile (not the
// signatures it also lists) as served by the registry addr, against key.
func verifyArgs(key, listFile, addr string) []string {
	return []string{"verify", "--key", key, "--list", listFile, "--registry", addr, "--insecure"}
}

// VerifyImages checks, with imageTool (image-tool verify), every image of listFile as the
// registry at addr serves it: the manifest, config and layers have their digests (a tampered
// layer is refused), a signature verifies with key (a wrong key is refused) and names the
// digest, and an SLSA provenance attestation, signed with the same key, names the source commit
// and the build command. It returns image-tool's output, and an error on the first image
// refused.
func VerifyImages(ctx context.Context, imageTool, key, listFile, addr string) (string, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, imageTool, verifyArgs(key, listFile, addr)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("verifying the images of %s against %s: %w\n%s", listFile, key, err, out.String())
	}
	return out.String(), nil
}

// verifyRegistry verifies every image of n.Registry, each list against its key, before the node
// installs anything.
func (n *Node) verifyRegistry(ctx context.Context, imageTool string) error {
	for _, l := range n.Registry.Lists {
		out, err := VerifyImages(ctx, imageTool, l.Key, l.File, n.Registry.Addr)
		if err != nil {
			return err
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		n.printf("Registry images of %s verified: %s", l.File, lines[len(lines)-1])
	}
	return nil
}

// TamperingProxy serves target's registry API on 127.0.0.1 with one byte flipped in the content
// of the blobs it was given (manifests pass unchanged), as a compromised registry or mirror
// would serve a changed layer under its old digest. Close it when done.
type TamperingProxy struct {
	*httptest.Server
	tampered atomic.Int64
}

// NewTamperingProxy starts a TamperingProxy in front of the registry at target (host:port, plain
// HTTP) that changes the blobs with these digests (sha256:...).
func NewTamperingProxy(target string, digests ...string) *TamperingProxy {
	p := &TamperingProxy{}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: target})
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method != http.MethodGet || resp.StatusCode != http.StatusOK ||
			!slices.ContainsFunc(digests, func(d string) bool { return strings.HasSuffix(resp.Request.URL.Path, "/blobs/"+d) }) {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if len(body) > 0 {
			body[len(body)/2] ^= 0xff
			p.tampered.Add(1)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return nil
	}
	p.Server = httptest.NewServer(rp)
	return p
}

// Addr is the proxy's host:port.
func (p *TamperingProxy) Addr() string { return strings.TrimPrefix(p.URL, "http://") }

// Tampered is the number of blobs the proxy changed.
func (p *TamperingProxy) Tampered() int64 { return p.tampered.Load() }

// LayoutLayers returns the layer digests of the single image of an OCI layout (image-tool's).
func LayoutLayers(layout string) ([]string, error) {
	var index struct {
		Manifests []struct {
			Digest string `json:"digest"`
		} `json:"manifests"`
	}
	if err := readJSON(filepath.Join(layout, "index.json"), &index); err != nil {
		return nil, err
	}
	if len(index.Manifests) != 1 {
		return nil, fmt.Errorf("%s: %d manifests, want 1", layout, len(index.Manifests))
	}
	var manifest struct {
		Layers []struct {
			Digest string `json:"digest"`
		} `json:"layers"`
	}
	if err := readJSON(blobPath(layout, index.Manifests[0].Digest), &manifest); err != nil {
		return nil, err
	}
	var digests []string
	for _, l := range manifest.Layers {
		digests = append(digests, l.Digest)
	}
	return digests, nil
}

// blobPath is where an OCI layout keeps the blob of digest (sha256:HEX).
func blobPath(layout, digest string) string {
	alg, hex, _ := strings.Cut(digest, ":")
	return filepath.Join(layout, "blobs", alg, hex)
}

func readJSON(file string, v any) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}
