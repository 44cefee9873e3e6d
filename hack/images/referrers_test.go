package images_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/seed1b407122/database-operator/hack/images"
)

const cycloneDX = "application/vnd.cyclonedx+json"

// TestAttachAndDiscoverReferrers pushes an image to ServeRegistry's registry, attaches two
// artifacts to it (an SBOM and another type), and finds them again: the registry answers the
// OCI 1.1 referrers API itself (GET /v2/<repo>/referrers/<digest>, not the fallback tag), the
// artifact manifest has artifactType, subject and the empty config, and Referrers filters by
// type and gives back the content.
func TestAttachAndDiscoverReferrers(t *testing.T) {
	img := programImage(t, "#!/bin/sh\necho hi\n")
	layout := filepath.Join(t.TempDir(), "layout")
	must(t, images.WriteLayout(layout, img, "quay.io/org/program:v1"))
	reg, err := images.ServeRegistry("127.0.0.1:0", nil)
	must(t, err)
	defer func() { must(t, reg.Close()) }()
	ref, err := reg.PushLayout(t.Context(), layout, "org/program:v1")
	must(t, err)
	subject := reg.Addr + "/" + ref
	digest, err := img.Digest()
	must(t, err)

	sbomData := []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6","version":1}`)
	art, err := images.Attach(t.Context(), subject, cycloneDX, "program.cdx.json", sbomData, false)
	must(t, err)
	other, err := images.Attach(t.Context(), subject, "application/vnd.example.other", "", []byte("other"), false)
	must(t, err)

	// The referrers API, asked directly.
	resp, err := http.Get("http://" + reg.Addr + "/v2/org/program/referrers/" + digest.String())
	must(t, err)
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET referrers: %s, want 200 (the registry does not answer the referrers API)", resp.Status)
	}
	var idx v1.IndexManifest
	must(t, json.NewDecoder(resp.Body).Decode(&idx))
	listed := map[string]bool{}
	for _, d := range idx.Manifests {
		listed[d.Digest.String()] = true
	}
	if !listed[art.DigestStr()] || !listed[other.DigestStr()] || len(idx.Manifests) != 2 {
		t.Errorf("referrers index lists %v, want %s and %s", idx.Manifests, art.DigestStr(), other.DigestStr())
	}

	// The artifact manifest.
	got, err := images.Pull(t.Context(), art.String(), false)
	if err == nil {
		m, err := got.Manifest()
		must(t, err)
		if m.ArtifactType != cycloneDX || m.Subject == nil || m.Subject.Digest != digest ||
			m.Config.MediaType != images.EmptyJSONMediaType || len(m.Layers) != 1 || string(m.Layers[0].MediaType) != cycloneDX {
			t.Errorf("artifact manifest: %+v", m)
		}
	} else {
		t.Errorf("pull %s: %v", art, err)
	}

	// Discovery, by digest and by tag, filtered by type.
	for _, s := range []string{subject, reg.Addr + "/org/program:v1"} {
		refs, err := images.Referrers(t.Context(), s, cycloneDX, false)
		must(t, err)
		if len(refs) != 1 || refs[0].Ref != art || refs[0].ArtifactType != cycloneDX {
			t.Fatalf("Referrers(%s, %s) = %+v, want only %s", s, cycloneDX, refs, art)
		}
		data, err := images.FetchBlob(t.Context(), refs[0].Ref.Context(), refs[0].Layers[0])
		must(t, err)
		if string(data) != string(sbomData) {
			t.Errorf("fetched SBOM %q, want %q", data, sbomData)
		}
		if title := refs[0].Layers[0].Annotations[images.TitleAnnotation]; title != "program.cdx.json" {
			t.Errorf("layer title %q", title)
		}
	}
	all, err := images.Referrers(t.Context(), subject, "", false)
	must(t, err)
	if len(all) != 2 {
		t.Errorf("Referrers(any type) = %d artifacts, want 2", len(all))
	}

	// An image nothing refers to has none; a subject that is not in the registry is an error.
	if _, err := images.Attach(t.Context(), reg.Addr+"/org/program@sha256:"+zeros, cycloneDX, "", sbomData, false); err == nil {
		t.Error("attaching to a missing image succeeded")
	}
}

const zeros = "0000000000000000000000000000000000000000000000000000000000000000"
