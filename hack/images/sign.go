package images

import (
	"bytes"
	"context"
	"crypto"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/dsse"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// Signatures and attestations are stored as cosign stores them (its "legacy" tag scheme, which
// every cosign release verifies): in the image's repository, the image with digest sha256:HEX
// has
//
//   - tag sha256-HEX.sig: an OCI image whose layers are simple-signing payloads
//     (SimpleSigningMediaType) naming the digest, each with its base64 ECDSA P-256/SHA-256
//     signature in the annotation SignatureAnnotation;
//   - tag sha256-HEX.att: an OCI image whose layers are DSSE envelopes (DSSEMediaType) of an
//     in-toto Statement v1 with an SLSA provenance v1 predicate, signed with the same key
//     (annotation predicateType; SignatureAnnotation empty, as cosign writes it).
//
// So "cosign verify --key cosign.pub --insecure-ignore-tlog IMAGE@DIGEST" and "cosign
// verify-attestation --key cosign.pub --insecure-ignore-tlog --type slsaprovenance1
// IMAGE@DIGEST" verify what Sign pushes, and Verify verifies what cosign signs with a key.
const (
	SimpleSigningMediaType  types.MediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	DSSEMediaType           types.MediaType = "application/vnd.dsse.envelope.v1+json"
	SignatureAnnotation                     = "dev.cosignproject.cosign/signature"
	PredicateTypeAnnotation                 = "predicateType"
	// InTotoPayloadType is the DSSE payload type of an in-toto Statement.
	InTotoPayloadType = "application/vnd.in-toto+json"
	// KeyFile and PublicKeyFile are the names "cosign generate-key-pair" gives the key pair.
	KeyFile       = "cosign.key"
	PublicKeyFile = "cosign.pub"
	// PasswordEnv holds the private key's password, as for cosign (empty is a password too).
	PasswordEnv = "COSIGN_PASSWORD"
)

// GenerateKeyPair writes an ECDSA P-256 key pair into dir as cosign does: KeyFile, the PKCS#8
// private key encrypted with password (scrypt + NaCl secretbox, PEM "ENCRYPTED SIGSTORE PRIVATE
// KEY", mode 0600), and PublicKeyFile (PEM "PUBLIC KEY"). It refuses to overwrite a key.
func GenerateKeyPair(dir string, password []byte) error {
	if password == nil {
		password = []byte{}
	}
	priv, pub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc(password))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, KeyFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("writing the private key: %w", err)
	}
	_, werr := f.Write(priv)
	if err := errors.Join(werr, f.Close()); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, PublicKeyFile), pub, 0o644)
}

// LoadSigner reads a private key written by GenerateKeyPair (or "cosign generate-key-pair").
func LoadSigner(keyFile string, password []byte) (signature.SignerVerifier, error) {
	if password == nil {
		password = []byte{}
	}
	sv, err := signature.LoadSignerVerifierFromPEMFile(keyFile, crypto.SHA256, cryptoutils.StaticPasswordFunc(password))
	if err != nil {
		return nil, fmt.Errorf("loading the private key %s: %w", keyFile, err)
	}
	return sv, nil
}

// LoadVerifier reads a PEM public key (cosign.pub).
func LoadVerifier(pubFile string) (signature.Verifier, error) {
	v, err := signature.LoadVerifierFromPEMFile(pubFile, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("loading the public key %s: %w", pubFile, err)
	}
	return v, nil
}

// SignatureTag returns the tag cosign gives the signatures (suffix "sig") or attestations
// ("att") of the image with digest d: sha256-HEX.sig.
func SignatureTag(d v1.Hash, suffix string) string {
	return d.Algorithm + "-" + d.Hex + "." + suffix
}

// emptySignatures is cosign's base for .sig and .att images: no layers, OCI media types.
func emptySignatures() v1.Image {
	return mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
}

// SignatureImage returns the .sig image of the image digest d, its identity (docker-reference)
// identity (a repository, e.g. quay.io/org/name): one simple-signing payload signed with s.
func SignatureImage(identity string, d v1.Hash, s signature.Signer) (v1.Image, error) {
	repo, err := name.NewRepository(identity)
	if err != nil {
		return nil, err
	}
	p, err := json.Marshal(payload.Cosign{Image: repo.Digest(d.String())})
	if err != nil {
		return nil, err
	}
	sig, err := s.SignMessage(bytes.NewReader(p))
	if err != nil {
		return nil, fmt.Errorf("signing %s@%s: %w", identity, d, err)
	}
	return mutate.Append(emptySignatures(), mutate.Addendum{
		Layer:       static.NewLayer(p, SimpleSigningMediaType),
		Annotations: map[string]string{SignatureAnnotation: base64.StdEncoding.EncodeToString(sig)},
	})
}

// AttestationImage returns the .att image of the image digest d: the provenance statement of
// identity@d in a DSSE envelope signed with s.
func AttestationImage(identity string, d v1.Hash, prov Provenance, s signature.SignerVerifier) (v1.Image, error) {
	st, err := json.Marshal(prov.Statement(identity, d))
	if err != nil {
		return nil, err
	}
	env, err := dsse.WrapSignerVerifier(s, InTotoPayloadType).SignMessage(bytes.NewReader(st))
	if err != nil {
		return nil, fmt.Errorf("signing the provenance of %s@%s: %w", identity, d, err)
	}
	return mutate.Append(emptySignatures(), mutate.Addendum{
		Layer:       static.NewLayer(env, DSSEMediaType),
		Annotations: map[string]string{SignatureAnnotation: "", PredicateTypeAnnotation: SLSAProvenanceV1},
	})
}

// Signed is what SignImage makes for one image: its .sig and .att images.
type Signed struct {
	Signature, Attestation v1.Image
}

// SignImage signs the image digest d as identity (a repository) with s and attests prov.
func SignImage(identity string, d v1.Hash, prov Provenance, s signature.SignerVerifier) (Signed, error) {
	sig, err := SignatureImage(identity, d, s)
	if err != nil {
		return Signed{}, err
	}
	att, err := AttestationImage(identity, d, prov, s)
	if err != nil {
		return Signed{}, err
	}
	return Signed{Signature: sig, Attestation: att}, nil
}

// PushSigned pushes sg next to the image ref (repo@sha256:..., the repository the image is in,
// where cosign looks): repo:sha256-HEX.sig and repo:sha256-HEX.att.
func PushSigned(ctx context.Context, ref string, sg Signed, insecure bool) error {
	d, err := parseDigestRef(ref, insecure)
	if err != nil {
		return err
	}
	h, err := v1.NewHash(d.DigestStr())
	if err != nil {
		return err
	}
	for suffix, img := range map[string]v1.Image{"sig": sg.Signature, "att": sg.Attestation} {
		if err := remote.Write(d.Tag(SignatureTag(h, suffix)), img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return fmt.Errorf("pushing the %s of %s: %w", suffix, ref, err)
		}
	}
	return nil
}

func parseDigestRef(ref string, insecure bool) (name.Digest, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	d, err := name.NewDigest(ref, opts...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("%q is not a reference by digest (repo@sha256:...): %w", ref, err)
	}
	return d, nil
}

// Verified is what Verify found.
type Verified struct {
	// Ref is the image verified, repo@sha256:...
	Ref string
	// Identity is the docker-reference its signature names.
	Identity string
	// Layers is the number of layers whose content was read and matched its digest.
	Layers int
	// Provenance is the attested provenance.
	Provenance Provenance
}

// VerifyOptions restrict what Verify accepts beyond the key.
type VerifyOptions struct {
	// Insecure speaks plain HTTP to a registry beyond loopback.
	Insecure bool
	// Commit, when set, is the source commit the provenance must name.
	Commit string
}

// Verify checks the image ref (repo@sha256:...) in its registry against the public key v,
// before anything uses it, and refuses it unless all of these hold:
//
//   - the manifest, the config and every layer read from the registry have the digests that
//     name them (a tampered layer is refused);
//   - a signature in repo:sha256-HEX.sig verifies with v and names this digest, and its
//     identity has the repository path of ref, or ends it (the registry host and a path prefix
//     may differ: a mirror, REGISTRY=host/prefix);
//   - an attestation in repo:sha256-HEX.att verifies with v, is an in-toto Statement whose
//     subject has this digest, with an SLSA provenance v1 predicate naming a source commit
//     (opts.Commit, when set) and the build command.
func Verify(ctx context.Context, ref string, v signature.Verifier, opts VerifyOptions) (*Verified, error) {
	d, err := parseDigestRef(ref, opts.Insecure)
	if err != nil {
		return nil, err
	}
	out := &Verified{Ref: ref}
	if out.Layers, err = verifyContent(ctx, d); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	h, err := v1.NewHash(d.DigestStr())
	if err != nil {
		return nil, err
	}
	if out.Identity, err = verifySignatures(ctx, d, h, v); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	if out.Provenance, err = verifyAttestations(ctx, d, h, v, opts.Commit); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return out, nil
}

// verifyContent reads the image's manifest (checked against the digest by go-containerregistry),
// config and layers, and returns the number of layers. A blob whose content does not have its
// digest fails the read.
func verifyContent(ctx context.Context, d name.Digest) (int, error) {
	img, err := remote.Image(d, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return 0, err
	}
	if _, err := img.RawConfigFile(); err != nil {
		return 0, fmt.Errorf("config: %w", err)
	}
	layers, err := img.Layers()
	if err != nil {
		return 0, err
	}
	for i, l := range layers {
		if err := readAll(l); err != nil {
			return 0, fmt.Errorf("layer %d: %w", i, err)
		}
	}
	return len(layers), nil
}

// readAll reads a layer's blob to its end, where its digest is checked.
func readAll(l v1.Layer) error {
	rc, err := l.Compressed()
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, rc)
	return errors.Join(err, rc.Close())
}

// layerBytes returns the content of a signature image's layer, checked against its digest.
func layerBytes(l v1.Layer) ([]byte, error) {
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(rc)
	return data, errors.Join(err, rc.Close())
}

// signatureLayers returns the layers of repo:sha256-HEX.SUFFIX of mediaType with their
// annotations.
func signatureLayers(ctx context.Context, d name.Digest, h v1.Hash, suffix string, mediaType types.MediaType) ([][]byte, []map[string]string, error) {
	tag := d.Tag(SignatureTag(h, suffix))
	img, err := remote.Image(tag, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return nil, nil, fmt.Errorf("no %s image (%s): %w", suffix, tag, err)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, nil, err
	}
	var blobs [][]byte
	var annotations []map[string]string
	for _, desc := range m.Layers {
		if desc.MediaType != mediaType {
			continue
		}
		l, err := img.LayerByDigest(desc.Digest)
		if err != nil {
			return nil, nil, err
		}
		data, err := layerBytes(l)
		if err != nil {
			return nil, nil, fmt.Errorf("%s layer %s: %w", suffix, desc.Digest, err)
		}
		blobs = append(blobs, data)
		annotations = append(annotations, desc.Annotations)
	}
	if len(blobs) == 0 {
		return nil, nil, fmt.Errorf("%s has no %s layer", tag, mediaType)
	}
	return blobs, annotations, nil
}

// verifySignatures returns the identity of the first signature of d that verifies with v and
// names d, or why none does.
func verifySignatures(ctx context.Context, d name.Digest, h v1.Hash, v signature.Verifier) (string, error) {
	payloads, annotations, err := signatureLayers(ctx, d, h, "sig", SimpleSigningMediaType)
	if err != nil {
		return "", err
	}
	var errs []error
	for i, p := range payloads {
		sig, err := base64.StdEncoding.DecodeString(annotations[i][SignatureAnnotation])
		if err != nil {
			errs = append(errs, fmt.Errorf("signature %d: not base64: %w", i, err))
			continue
		}
		if err := v.VerifySignature(bytes.NewReader(sig), bytes.NewReader(p)); err != nil {
			errs = append(errs, fmt.Errorf("signature %d does not verify with the key: %w", i, err))
			continue
		}
		var sc payload.SimpleContainerImage
		if err := json.Unmarshal(p, &sc); err != nil {
			errs = append(errs, fmt.Errorf("signature %d: payload: %w", i, err))
			continue
		}
		if sc.Critical.Type != payload.CosignSignatureType || sc.Critical.Image.DockerManifestDigest != h.String() {
			errs = append(errs, fmt.Errorf("signature %d is of %q (%s), not of %s", i, sc.Critical.Image.DockerManifestDigest, sc.Critical.Type, h))
			continue
		}
		if got, want := repositoryPath(sc.Critical.Identity.DockerReference), d.RepositoryStr(); got == "" || (got != want && !strings.HasSuffix(want, "/"+got)) {
			errs = append(errs, fmt.Errorf("signature %d names the repository %s, not %s", i, sc.Critical.Identity.DockerReference, d.RepositoryStr()))
			continue
		}
		return sc.Critical.Identity.DockerReference, nil
	}
	return "", fmt.Errorf("no valid signature: %w", errors.Join(errs...))
}

// repositoryPath is the repository of ref without its registry host (quay.io/org/name:v1 ->
// org/name).
func repositoryPath(ref string) string {
	r, err := name.ParseReference(ref)
	if err != nil {
		if repo, rerr := name.NewRepository(ref); rerr == nil {
			return repo.RepositoryStr()
		}
		return ""
	}
	return r.Context().RepositoryStr()
}

// verifyAttestations returns the provenance of the first attestation of d that verifies with v,
// is about d and names a commit (commit, when set) and a command.
func verifyAttestations(ctx context.Context, d name.Digest, h v1.Hash, v signature.Verifier, commit string) (Provenance, error) {
	envelopes, _, err := signatureLayers(ctx, d, h, "att", DSSEMediaType)
	if err != nil {
		return Provenance{}, err
	}
	var errs []error
	for i, env := range envelopes {
		var decoded []byte
		dv := dsse.WrapVerifier(v, dsse.WithExpectedPayloadType(InTotoPayloadType), dsse.WithDecodedPayload(&decoded))
		if err := dv.VerifySignature(bytes.NewReader(env), nil); err != nil {
			errs = append(errs, fmt.Errorf("attestation %d does not verify with the key: %w", i, err))
			continue
		}
		prov, err := ParseStatement(decoded, h)
		if err != nil {
			errs = append(errs, fmt.Errorf("attestation %d: %w", i, err))
			continue
		}
		if commit != "" && !strings.EqualFold(prov.Commit, commit) {
			errs = append(errs, fmt.Errorf("attestation %d names the commit %s, not %s", i, prov.Commit, commit))
			continue
		}
		return prov, nil
	}
	return Provenance{}, fmt.Errorf("no valid provenance attestation: %w", errors.Join(errs...))
}
