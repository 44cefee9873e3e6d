package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1b407122/database-operator/hack/images"
	"github.com/seed1b407122/database-operator/hack/images/sbom"
)

// TestAttachRelease runs "attach-release" on a release's image list as make release writes it
// (layouts relative to the list): the image an SBOM of --dir describes (by digest) gets it
// attached where the release pushed it (the registry, the repository without its host); the
// image no SBOM describes gets one made from its layout; other lines are passed over; a listed
// image whose layout holds another image is an error.
func TestAttachRelease(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "program")
	must(t, os.WriteFile(bin, []byte("#!/bin/sh\necho hi\n"), 0o755))
	var refs []string
	reg, err := images.ServeRegistry("127.0.0.1:0", nil)
	must(t, err)
	defer func() { must(t, reg.Close()) }()
	for i, user := range []string{"65532:65532", "1001"} {
		img, err := images.StaticImage([]images.File{{Source: bin, Path: "/bin/program"}}, images.Config{User: user}, time.Unix(0, 0))
		must(t, err)
		layout := filepath.Join(dir, "images", string(rune('a'+i)))
		must(t, images.WriteLayout(layout, img, "quay.io/org/program:v1"))
		ref, err := reg.PushLayout(t.Context(), layout, "org/program:v"+string(rune('1'+i)))
		must(t, err)
		refs = append(refs, ref)
		if i == 0 {
			bom, err := sbom.Image(img, "quay.io/org/program", "1.0.0")
			must(t, err)
			must(t, sbom.WriteFile(filepath.Join(dir, "sbom", "program.cdx.json"), bom))
		}
	}
	list := filepath.Join(dir, "images.txt")
	lines := []string{
		"images/a quay.io/org/program:v1 quay.io/" + refs[0],
		"images/b quay.io/org/program:v2 quay.io/" + refs[1],
		"signatures/a.sig something else",
	}
	must(t, os.WriteFile(list, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	must(t, attachRelease([]string{"--registry", reg.Addr, "--list", list, "--dir", filepath.Join(dir, "sbom")}))

	for i, file := range []string{"program.cdx.json", "b.cdx.json"} {
		got, err := images.Referrers(t.Context(), reg.Addr+"/"+refs[i], sbom.MediaType, false)
		must(t, err)
		if len(got) != 1 || got[0].Layers[0].Annotations[images.TitleAnnotation] != file {
			t.Errorf("%s: %d SBOMs attached (%+v), want %s", refs[i], len(got), got, file)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "sbom", "b.cdx.json"))
	must(t, err)
	bom, err := sbom.Decode(strings.NewReader(string(data)))
	must(t, err)
	if _, digest, _ := strings.Cut(refs[1], "@"); bom.Metadata.Component.Version != digest {
		t.Errorf("the SBOM made from images/b describes %s, want %s", bom.Metadata.Component.Version, digest)
	}
	// images/a listed with b's digest: its layout holds another image.
	_, digestB, _ := strings.Cut(refs[1], "@")
	must(t, os.RemoveAll(filepath.Join(dir, "sbom", "b.cdx.json")))
	must(t, os.WriteFile(list, []byte("images/a quay.io/org/program:v2 quay.io/org/program@"+digestB+"\n"), 0o644))
	if err := attachRelease([]string{"--registry", reg.Addr, "--list", list, "--dir", filepath.Join(dir, "sbom")}); err == nil {
		t.Error("attach-release of an image whose layout holds another image succeeded")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
