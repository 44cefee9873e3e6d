//go:build linux

package realnode

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadRegistryList(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "registry.txt")
	list := "layouts/opm quay.io/operator-framework/opm:v1 quay.io/operator-framework/opm@sha256:aa\n" +
		"# a comment\n\n" +
		"/abs/bundle quay.io/org/bundle:v2 quay.io/org/bundle@sha256:bb\n"
	if err := os.WriteFile(file, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readRegistryList(file)
	if err != nil {
		t.Fatal(err)
	}
	want := []RegistryImage{
		{Layout: filepath.Join(dir, "layouts/opm"), Tag: "quay.io/operator-framework/opm:v1", Digest: "quay.io/operator-framework/opm@sha256:aa"},
		{Layout: "/abs/bundle", Tag: "quay.io/org/bundle:v2", Digest: "quay.io/org/bundle@sha256:bb"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("readRegistryList = %+v, want %+v", got, want)
	}
	r := &Registry{Images: got}
	if ref, err := r.Digest("quay.io/org/bundle:v2"); err != nil || ref != "quay.io/org/bundle@sha256:bb" {
		t.Errorf("Digest = %q, %v", ref, err)
	}
	if _, err := r.Digest("quay.io/org/bundle:v3"); err == nil || !strings.Contains(err.Error(), "no image tagged quay.io/org/bundle:v3") {
		t.Errorf("Digest of an unknown tag: %v", err)
	}
	if hosts := registryHosts(got); !reflect.DeepEqual(hosts, []string{"quay.io"}) {
		t.Errorf("registryHosts = %v", hosts)
	}

	for _, bad := range []string{"layout quay.io/org/x:v1\n", "layout quay.io/org/x:v1 quay.io/org/x:v1\n"} {
		if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readRegistryList(file); err == nil || !strings.Contains(err.Error(), "want <layout> <ref:tag> <ref@sha256:digest>") {
			t.Errorf("line %q: err %v", bad, err)
		}
	}
}

func TestWriteMirrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs.d")
	r := &Registry{Addr: "10.89.0.1:5000", Hosts: []string{"quay.io", "gcr.io"}}
	if err := writeMirrors(dir, r); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "quay.io", "hosts.toml"))
	if err != nil {
		t.Fatal(err)
	}
	want := "server = \"https://quay.io\"\n\n[host.\"http://10.89.0.1:5000\"]\n  capabilities = [\"pull\", \"resolve\"]\n"
	if string(data) != want {
		t.Errorf("quay.io/hosts.toml:\n%s\nwant:\n%s", data, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "gcr.io", "hosts.toml")); err != nil {
		t.Error(err)
	}
	empty := filepath.Join(t.TempDir(), "none")
	if err := writeMirrors(empty, nil); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("mirrors without a registry: %v", entries)
	}
	if !strings.Contains(containerdConfig("/x"), "config_path = \"/x/certs.d\"") {
		t.Error("containerd's config does not read the mirrors")
	}
}

// TestReadImageList: images.txt lines ("<tarball> <ref>") keep their fields, the tarball resolved
// against the list's directory; comments and blank lines are left out, a missing list fails.
func TestReadImageList(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "images.txt")
	list := "# tarball ref\n\n  pause.tar database-operator.test/pause:v1\n/abs/etcd.tar quay.io/coreos/etcd:v3 extra\n"
	if err := os.WriteFile(file, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readImageList(file)
	if err != nil {
		t.Fatal(err)
	}
	want := []imageListLine{
		{text: "  pause.tar database-operator.test/pause:v1", fields: []string{filepath.Join(dir, "pause.tar"), "database-operator.test/pause:v1"}},
		{text: "/abs/etcd.tar quay.io/coreos/etcd:v3 extra", fields: []string{"/abs/etcd.tar", "quay.io/coreos/etcd:v3", "extra"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("readImageList = %+v, want %+v", got, want)
	}
	if _, err := readImageList(filepath.Join(dir, "none.txt")); err == nil {
		t.Error("readImageList of a missing file: no error")
	}
}
