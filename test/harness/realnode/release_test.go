//go:build linux

package realnode

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestRegistryListsOfARelease: with a release directory, the registry serves the release's
// images under the release's key, and of the node's own list only what the release does not
// replace: not an image of the same tag, not one of the same digest under another tag (a
// candidate's tags), not a signature whose tag the release holds.
func TestRegistryListsOfARelease(t *testing.T) {
	dir := t.TempDir()
	nodeDir := filepath.Join(dir, "node-images")
	releaseDir := filepath.Join(dir, "release", "0.4.0-rc.1")
	work := filepath.Join(dir, "work")
	for _, d := range []string{nodeDir, releaseDir, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(file, text string) {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(nodeDir, "registry.txt"),
		"layouts/olm quay.io/operator-framework/olm:v1 quay.io/operator-framework/olm@sha256:01\n"+
			"layouts/operator-0.3.0 quay.io/org/op:v0.3.0 quay.io/org/op@sha256:03\n"+
			"layouts/operator-0.4.0 quay.io/org/op:v0.4.0 quay.io/org/op@sha256:04\n"+
			"layouts/catalog quay.io/org/catalog:v0.4.0 quay.io/org/catalog@sha256:c1\n"+
			"signatures/op-04.sig quay.io/org/op:sha256-04.sig quay.io/org/op@sha256:s4\n"+
			"signatures/op-03.sig quay.io/org/op:sha256-03.sig quay.io/org/op@sha256:s3\n")
	write(filepath.Join(releaseDir, ReleaseImagesFile),
		"images/operator quay.io/org/op:v0.4.0-rc.1 quay.io/org/op@sha256:04\n"+
			"images/catalog quay.io/org/catalog:v0.4.0-rc.1 quay.io/org/catalog@sha256:c2\n"+
			"signatures/op-04.sig quay.io/org/op:sha256-04.sig quay.io/org/op@sha256:r4\n")

	opts := Options{
		RegistryFile: filepath.Join(nodeDir, "registry.txt"), RegistryKey: filepath.Join(nodeDir, RegistryKeyFile),
		ReleaseDir: releaseDir,
	}
	lists, err := registryLists(opts, work)
	if err != nil {
		t.Fatal(err)
	}
	want := []RegistryList{
		{File: filepath.Join(releaseDir, ReleaseImagesFile), Key: filepath.Join(releaseDir, RegistryKeyFile)},
		{File: filepath.Join(work, "node-registry.txt"), Key: filepath.Join(nodeDir, RegistryKeyFile)},
	}
	if !reflect.DeepEqual(lists, want) {
		t.Fatalf("registryLists = %+v, want %+v", lists, want)
	}
	images, err := readRegistryLists(lists)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, img := range images {
		got = append(got, img.Tag+" "+img.List.Key)
	}
	releaseKey, nodeKey := want[0].Key, want[1].Key
	wantTags := []string{
		"quay.io/org/op:v0.4.0-rc.1 " + releaseKey,
		"quay.io/org/catalog:v0.4.0-rc.1 " + releaseKey,
		"quay.io/org/op:sha256-04.sig " + releaseKey,
		"quay.io/operator-framework/olm:v1 " + nodeKey,
		"quay.io/org/op:v0.3.0 " + nodeKey,
		// The node's catalog:v0.4.0 has another digest and tag than the release's: kept, and
		// verified under the node's key (the specs use the release's tag).
		"quay.io/org/catalog:v0.4.0 " + nodeKey,
		"quay.io/org/op:sha256-03.sig " + nodeKey,
	}
	if !reflect.DeepEqual(got, wantTags) {
		t.Errorf("served:\n%q\nwant:\n%q", got, wantTags)
	}
	if images[3].Layout != filepath.Join(nodeDir, "layouts/olm") {
		t.Errorf("a kept image's layout = %s, want it under the node's directory", images[3].Layout)
	}

	opts.ReleaseDir = ""
	lists, err = registryLists(opts, work)
	if err != nil || !reflect.DeepEqual(lists, []RegistryList{{File: opts.RegistryFile, Key: opts.RegistryKey}}) {
		t.Errorf("without a release: %+v, %v", lists, err)
	}
	opts.ReleaseDir = filepath.Join(dir, "no-such-release")
	if _, err := registryLists(opts, work); err == nil {
		t.Error("a release directory without images.txt: no error")
	}
}
