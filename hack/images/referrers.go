package images

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// EmptyJSON is the OCI 1.1 empty descriptor's content and media type: the config of an
// artifact manifest whose artifactType says what it is.
const (
	EmptyJSON          = "{}"
	EmptyJSONMediaType = types.MediaType("application/vnd.oci.empty.v1+json")
)

// TitleAnnotation names a layer's file (as oras does).
const TitleAnnotation = "org.opencontainers.image.title"

// Attach pushes data as an OCI 1.1 artifact that refers to subject (a reference by digest,
// repo@sha256:..., in a registry): an image manifest with artifactType and subject set, the
// empty config, and one layer of mediaType artifactType holding data (titled title). It
// returns the artifact's reference by digest. Registries that answer the referrers API list it
// there; for others go-containerregistry also updates the referrers tag (sha256-<digest>) of
// the distribution spec's fallback.
func Attach(ctx context.Context, subject, artifactType, title string, data []byte, insecure bool) (name.Digest, error) {
	sub, err := ParseDigest(subject, insecure)
	if err != nil {
		return name.Digest{}, err
	}
	opts := []remote.Option{remote.WithContext(ctx)}
	desc, err := remote.Head(sub, opts...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("subject %s: %w", sub, err)
	}
	config := static.NewLayer([]byte(EmptyJSON), EmptyJSONMediaType)
	layer := static.NewLayer(data, types.MediaType(artifactType))
	for _, l := range []v1.Layer{config, layer} {
		if err := remote.WriteLayer(sub.Context(), l, opts...); err != nil {
			return name.Digest{}, fmt.Errorf("push blob to %s: %w", sub.Context(), err)
		}
	}
	cd, err := descriptor(config)
	if err != nil {
		return name.Digest{}, err
	}
	ld, err := descriptor(layer)
	if err != nil {
		return name.Digest{}, err
	}
	if title != "" {
		ld.Annotations = map[string]string{TitleAnnotation: title}
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  artifactType,
		Config:        cd,
		Layers:        []v1.Descriptor{ld},
		Subject:       &v1.Descriptor{MediaType: desc.MediaType, Digest: desc.Digest, Size: desc.Size},
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return name.Digest{}, err
	}
	h, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return name.Digest{}, err
	}
	ref := sub.Context().Digest(h.String())
	if err := remote.Put(ref, rawManifest{raw: raw, mediaType: types.OCIManifestSchema1}, opts...); err != nil {
		return name.Digest{}, fmt.Errorf("push artifact manifest %s: %w", ref, err)
	}
	return ref, nil
}

// Referrer is an artifact that refers to an image.
type Referrer struct {
	// Ref is the artifact manifest, repo@sha256:...
	Ref name.Digest
	// ArtifactType is the manifest's artifactType (or its config's media type without one).
	ArtifactType string
	// Layers are the manifest's layers.
	Layers []v1.Descriptor
}

// Referrers returns the artifacts of artifactType ("" for every type) that refer to subject
// (repo@sha256:..., or repo:tag, resolved first), through the registry's referrers API (or the
// fallback tag). The artifact type is read from each artifact's own manifest: some registries
// (go-containerregistry's pkg/registry among them) report the config's media type in the
// referrers index instead of the manifest's artifactType.
func Referrers(ctx context.Context, subject, artifactType string, insecure bool) ([]Referrer, error) {
	sub, err := ResolveDigest(ctx, subject, insecure)
	if err != nil {
		return nil, err
	}
	opts := []remote.Option{remote.WithContext(ctx)}
	idx, err := remote.Referrers(sub, opts...)
	if err != nil {
		return nil, fmt.Errorf("referrers of %s: %w", sub, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out []Referrer
	for _, d := range im.Manifests {
		ref := sub.Context().Digest(d.Digest.String())
		got, err := remote.Get(ref, opts...)
		if err != nil {
			return nil, fmt.Errorf("referrer %s: %w", ref, err)
		}
		var m v1.Manifest
		if err := json.Unmarshal(got.Manifest, &m); err != nil {
			return nil, fmt.Errorf("referrer %s: %w", ref, err)
		}
		at := m.ArtifactType
		if at == "" {
			at = string(m.Config.MediaType)
		}
		if artifactType != "" && at != artifactType {
			continue
		}
		out = append(out, Referrer{Ref: ref, ArtifactType: at, Layers: m.Layers})
	}
	return out, nil
}

// FetchBlob returns the content of the blob d of repository repo.
func FetchBlob(ctx context.Context, repo name.Repository, d v1.Descriptor) ([]byte, error) {
	l, err := remote.Layer(repo.Digest(d.Digest.String()), remote.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	return io.ReadAll(rc)
}

// ParseDigest parses repo@sha256:... (plain HTTP for loopback, or when insecure).
func ParseDigest(ref string, insecure bool) (name.Digest, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	d, err := name.NewDigest(ref, opts...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("%q: want a reference by digest, repo@sha256:...: %w", ref, err)
	}
	return d, nil
}

// ResolveDigest returns ref by digest: ref itself when it is one, else the digest its tag has
// in the registry.
func ResolveDigest(ctx context.Context, ref string, insecure bool) (name.Digest, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return name.Digest{}, err
	}
	if d, ok := r.(name.Digest); ok {
		return d, nil
	}
	desc, err := remote.Head(r, remote.WithContext(ctx))
	if err != nil {
		return name.Digest{}, fmt.Errorf("%s: %w", r, err)
	}
	return r.Context().Digest(desc.Digest.String()), nil
}

// descriptor is the descriptor of a static layer.
func descriptor(l v1.Layer) (v1.Descriptor, error) {
	d, err := l.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	sz, err := l.Size()
	if err != nil {
		return v1.Descriptor{}, err
	}
	mt, err := l.MediaType()
	if err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: mt, Digest: d, Size: sz}, nil
}

// rawManifest is a manifest to remote.Put as it is.
type rawManifest struct {
	raw       []byte
	mediaType types.MediaType
}

func (m rawManifest) RawManifest() ([]byte, error)        { return m.raw, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return m.mediaType, nil }
