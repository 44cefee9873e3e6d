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

// TestAttachRelease runs "attach-release" on a release's image list as make release writes it:
// the image an SBOM of --dir describes (by digest) gets it attached where the release pushed it
// (the registry, the repository without its host); an image without an SBOM and the other lines
// are passed over; a list with no image to attach to is an error.
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
		layout := filepath.Join(dir, "layout", string(rune('a'+i)))
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

	for i, want := range []int{1, 0} {
		got, err := images.Referrers(t.Context(), reg.Addr+"/"+refs[i], sbom.MediaType, false)
		must(t, err)
		if len(got) != want {
			t.Errorf("%s: %d SBOMs attached, want %d", refs[i], len(got), want)
		}
	}
	must(t, os.WriteFile(list, []byte(lines[1]+"\n"), 0o644))
	if err := attachRelease([]string{"--registry", reg.Addr, "--list", list, "--dir", filepath.Join(dir, "sbom")}); err == nil {
		t.Error("attach-release with no image to attach to succeeded")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
