//go:build linux

package realnode

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestVerifyArgs(t *testing.T) {
	if got := defaultRegistryKey("/images/registry.txt"); got != "/images/cosign.pub" {
		t.Errorf("defaultRegistryKey = %s", got)
	}
	want := []string{"verify", "--key", "/k.pub", "--list", "/r.txt", "--registry", "10.89.0.1:5000", "--insecure"}
	if got := verifyArgs("/k.pub", "/r.txt", "10.89.0.1:5000"); !reflect.DeepEqual(got, want) {
		t.Errorf("verifyArgs = %q, want %q", got, want)
	}
}

// TestVerifyImages runs the verification Start runs before it installs anything, with
// image-tool ($IMAGE_TOOL, make node-images-test sets it), on an image signed as make
// node-images signs the node's images and served as the node's registry serves them: it
// passes, and it refuses the image with another key, with a layer changed by the registry,
// and without signatures.
func TestVerifyImages(t *testing.T) {
	tool := os.Getenv("IMAGE_TOOL")
	if tool == "" {
		t.Skip("IMAGE_TOOL is not set (make node-images-test sets it)")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	run := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, tool, args...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("image-tool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	program := filepath.Join(dir, "program")
	if err := os.WriteFile(program, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	layout := filepath.Join(dir, "layouts", "program")
	run(nil, "static", "--file", program+":/program", "--tag", "quay.io/org/program:v1", "--layout", layout)
	digest := strings.TrimSpace(run(nil, "digest", "--from", layout))
	unsigned := filepath.Join(dir, "unsigned.txt")
	line := layout + " quay.io/org/program:v1 quay.io/org/program@" + digest + "\n"
	if err := os.WriteFile(unsigned, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	password := []string{"COSIGN_PASSWORD="}
	run(password, "keygen", "--dir", dir)
	sigs := run(password, "sign", "--key", filepath.Join(dir, "cosign.key"), "--commit", strings.Repeat("a", 40),
		"--command", "make node-images", "--out-dir", filepath.Join(dir, "signatures"), "--list", unsigned)
	list := filepath.Join(dir, "registry.txt")
	if err := os.WriteFile(list, []byte(line+sigs), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := serveList(ctx, t, tool, list)
	key := defaultRegistryKey(list)

	out, err := VerifyImages(ctx, tool, key, list, addr)
	if err != nil {
		t.Fatalf("VerifyImages of a signed image: %v", err)
	}
	if !strings.Contains(out, "1 images verified") {
		t.Errorf("VerifyImages output %q", out)
	}

	otherDir := filepath.Join(dir, "other")
	run(password, "keygen", "--dir", otherDir)
	_, err = VerifyImages(ctx, tool, filepath.Join(otherDir, "cosign.pub"), list, addr)
	expectRefusal(t, "another key", err, "does not verify with the key")

	layers, err := LayoutLayers(layout)
	if err != nil || len(layers) != 1 {
		t.Fatalf("LayoutLayers = %v, %v", layers, err)
	}
	proxy := NewTamperingProxy(addr, layers[0])
	defer proxy.Close()
	_, err = VerifyImages(ctx, tool, key, list, proxy.Addr())
	expectRefusal(t, "a tampered layer", err, "layer 0", "error verifying sha256 checksum")
	if proxy.Tampered() == 0 {
		t.Error("the proxy changed no blob")
	}

	unsignedAddr := serveList(ctx, t, tool, unsigned)
	_, err = VerifyImages(ctx, tool, key, unsigned, unsignedAddr)
	expectRefusal(t, "an unsigned image", err, "no sig image")
}

func expectRefusal(t *testing.T, what string, err error, substrings ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: verified; want a refusal", what)
		return
	}
	for _, s := range substrings {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: refusal %q does not mention %q", what, err, s)
		}
	}
	t.Logf("%s: refused: %v", what, err)
}

// serveList starts image-tool registry on 127.0.0.1 with every layout of list pushed, as
// startRegistry does, and returns its address; the test's end stops it.
func serveList(ctx context.Context, t *testing.T, tool, list string) string {
	t.Helper()
	images, err := readRegistryList(list)
	if err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(t.TempDir(), "ready")
	args := []string{"registry", "--addr", "127.0.0.1:0", "--ready", ready}
	for _, img := range images {
		_, repo, _ := strings.Cut(img.Tag, "/")
		args = append(args, "--push", img.Layout+"="+repo)
	}
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for {
		if data, err := os.ReadFile(ready); err == nil {
			addr, _, _ := strings.Cut(string(data), "\n")
			return addr
		}
		select {
		case <-ctx.Done():
			t.Fatal("the registry did not start")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
