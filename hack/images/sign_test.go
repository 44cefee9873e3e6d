package images_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/seed1b407122/database-operator/hack/images"
)

const testCommit = "0123456789abcdef0123456789abcdef01234567"

// tamperingRegistry is an in-process registry that, once a blob digest is set, serves that blob
// with one byte flipped: what a compromised registry or mirror would serve.
type tamperingRegistry struct {
	*httptest.Server
	mu     sync.Mutex
	digest string
}

func newTamperingRegistry(t *testing.T) *tamperingRegistry {
	r := &tamperingRegistry{}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		d := r.digest
		r.mu.Unlock()
		if d == "" || req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/blobs/"+d) {
			reg.ServeHTTP(w, req)
			return
		}
		rec := httptest.NewRecorder()
		reg.ServeHTTP(rec, req)
		body := rec.Body.Bytes()
		if len(body) > 0 {
			body[len(body)/2] ^= 0xff
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *tamperingRegistry) tamper(d v1.Hash) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.digest = d.String()
}

// addr is host:port of the registry (127.0.0.1: plain HTTP).
func (r *tamperingRegistry) addr() string { return strings.TrimPrefix(r.URL, "http://") }

// testImage is a small static image, pushed to reg as org/program:v1; it returns its reference
// by digest in reg and the image.
func testImage(t *testing.T, reg *tamperingRegistry, content string) (string, v1.Image) {
	img := programImage(t, content)
	_, err := images.Push(t.Context(), img, reg.addr()+"/org/program:v1", false)
	must(t, err)
	d, err := img.Digest()
	must(t, err)
	return reg.addr() + "/org/program@" + d.String(), img
}

func testKeys(t *testing.T, password string) (key, pub string) {
	dir := t.TempDir()
	must(t, images.GenerateKeyPair(dir, []byte(password)))
	return filepath.Join(dir, images.KeyFile), filepath.Join(dir, images.PublicKeyFile)
}

func testProvenance() images.Provenance {
	return images.Provenance{
		SourceURI: "git+https://github.com/seed1b407122/database-operator", Commit: testCommit,
		Command: "make release VERSION=9.9.9", BuilderID: "https://example.invalid/test",
		InvocationID: "test", StartedOn: time.Unix(1700000000, 0), FinishedOn: time.Unix(1700000060, 0),
		Parameters: map[string]string{"VERSION": "9.9.9"},
	}
}

// signAndPush signs ref (reg/org/program@sha256:...) with key as quay.io/org/program, as a
// release does for an image it pushed to a registry that is not quay.io.
func signAndPush(t *testing.T, ref, key, password string) {
	sv, err := images.LoadSigner(key, []byte(password))
	must(t, err)
	h, err := v1.NewHash(ref[strings.LastIndex(ref, "@")+1:])
	must(t, err)
	sg, err := images.SignImage("quay.io/org/program", h, testProvenance(), sv)
	must(t, err)
	must(t, images.PushSigned(t.Context(), ref, sg, false))
}

// TestSignVerify signs an image in a registry with a key pair generated for the test and
// verifies it with the public key; then it shows the refusals: a wrong key, a layer tampered
// with by the registry, an image re-pushed with a changed layer under the same tag (the old
// signatures copied next to it), an unsigned image, a wrong commit, a tag instead of a digest.
func TestSignVerify(t *testing.T) {
	reg := newTamperingRegistry(t)
	ref, img := testImage(t, reg, "#!/bin/sh\necho signed\n")
	key, pub := testKeys(t, "test-password")
	signAndPush(t, ref, key, "test-password")

	v, err := images.LoadVerifier(pub)
	must(t, err)
	got, err := images.Verify(t.Context(), ref, v, images.VerifyOptions{Commit: testCommit})
	if err != nil {
		t.Fatalf("Verify of a signed image: %v", err)
	}
	want := testProvenance()
	want.StartedOn, want.FinishedOn = want.StartedOn.UTC(), want.FinishedOn.UTC()
	if got.Identity != "quay.io/org/program" || got.Layers != 1 || got.Provenance.Commit != testCommit ||
		got.Provenance.Command != want.Command || !got.Provenance.StartedOn.Equal(want.StartedOn) ||
		got.Provenance.Parameters["VERSION"] != "9.9.9" {
		t.Errorf("Verify = %+v, want identity quay.io/org/program, 1 layer, provenance %+v", got, want)
	}

	t.Run("wrong key", func(t *testing.T) {
		_, otherPub := testKeys(t, "")
		other, err := images.LoadVerifier(otherPub)
		must(t, err)
		_, err = images.Verify(t.Context(), ref, other, images.VerifyOptions{})
		expectRefused(t, err, "no valid signature", "does not verify with the key")
	})
	t.Run("wrong password", func(t *testing.T) {
		if _, err := images.LoadSigner(key, []byte("not-the-password")); err == nil {
			t.Error("LoadSigner with a wrong password succeeded")
		}
	})
	t.Run("wrong commit", func(t *testing.T) {
		_, err := images.Verify(t.Context(), ref, v, images.VerifyOptions{Commit: strings.Repeat("f", 40)})
		expectRefused(t, err, "no valid provenance attestation", "names the commit "+testCommit)
	})
	t.Run("by tag", func(t *testing.T) {
		_, err := images.Verify(t.Context(), reg.addr()+"/org/program:v1", v, images.VerifyOptions{})
		expectRefused(t, err, "is not a reference by digest")
	})
	t.Run("unsigned", func(t *testing.T) {
		unsigned, _ := testImage(t, reg, "#!/bin/sh\necho unsigned\n")
		_, err := images.Verify(t.Context(), unsigned, v, images.VerifyOptions{})
		expectRefused(t, err, "no sig image")
	})
	t.Run("layer replaced", func(t *testing.T) {
		// The attacker pushes another image under the tag and copies the signatures of the
		// signed digest to the new digest's tags: they name the signed digest, not this one.
		changed, _ := testImage(t, reg, "#!/bin/sh\necho evil\n")
		copySignatures(t, ref, changed)
		_, err := images.Verify(t.Context(), changed, v, images.VerifyOptions{})
		expectRefused(t, err, "no valid signature", "not of sha256:")
	})
	t.Run("another repository", func(t *testing.T) {
		// A signature of this digest made for another repository does not vouch for this one.
		sv, err := images.LoadSigner(key, []byte("test-password"))
		must(t, err)
		h, err := v1.NewHash(ref[strings.LastIndex(ref, "@")+1:])
		must(t, err)
		sg, err := images.SignImage("quay.io/other/program", h, testProvenance(), sv)
		must(t, err)
		other := reg.addr() + "/mirror/org/program@" + h.String()
		_, err = images.Push(t.Context(), img, reg.addr()+"/mirror/org/program:v1", false)
		must(t, err)
		must(t, images.PushSigned(t.Context(), other, sg, false))
		_, err = images.Verify(t.Context(), other, v, images.VerifyOptions{})
		expectRefused(t, err, "names the repository quay.io/other/program, not mirror/org/program")
		// Signed as quay.io/org/program, it verifies under a path prefix (a mirror).
		sg, err = images.SignImage("quay.io/org/program", h, testProvenance(), sv)
		must(t, err)
		must(t, images.PushSigned(t.Context(), other, sg, false))
		if _, err := images.Verify(t.Context(), other, v, images.VerifyOptions{}); err != nil {
			t.Errorf("Verify under a mirror's prefix: %v", err)
		}
	})
	t.Run("layer tampered", func(t *testing.T) {
		layers, err := img.Layers()
		must(t, err)
		d, err := layers[0].Digest()
		must(t, err)
		reg.tamper(d)
		defer reg.tamper(v1.Hash{})
		_, err = images.Verify(t.Context(), ref, v, images.VerifyOptions{})
		expectRefused(t, err, "layer 0")
	})
}

// copySignatures pushes the .sig and .att images of from (repo@digest) as those of to.
func copySignatures(t *testing.T, from, to string) {
	fh, err := v1.NewHash(from[strings.LastIndex(from, "@")+1:])
	must(t, err)
	th, err := v1.NewHash(to[strings.LastIndex(to, "@")+1:])
	must(t, err)
	repo := from[:strings.LastIndex(from, "@")]
	for _, suffix := range []string{"sig", "att"} {
		img, err := images.Pull(t.Context(), repo+":"+images.SignatureTag(fh, suffix), false)
		must(t, err)
		_, err = images.Push(t.Context(), img, repo+":"+images.SignatureTag(th, suffix), false)
		must(t, err)
	}
}

func expectRefused(t *testing.T, err error, substrings ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("Verify accepted the image; want a refusal mentioning %q", substrings)
	}
	t.Logf("refused: %v", err)
	for _, s := range substrings {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("refusal %q does not mention %q", err, s)
		}
	}
}

// TestSignatureFormat checks the .sig and .att images against cosign's layout: media types,
// annotations, the simple-signing payload and the DSSE envelope of an in-toto Statement v1
// with an SLSA provenance v1 predicate naming the commit and the command.
func TestSignatureFormat(t *testing.T) {
	key, _ := testKeys(t, "")
	sv, err := images.LoadSigner(key, nil)
	must(t, err)
	h, err := v1.NewHash("sha256:" + strings.Repeat("ab", 32))
	must(t, err)
	sg, err := images.SignImage("quay.io/org/program", h, testProvenance(), sv)
	must(t, err)

	if images.SignatureTag(h, "sig") != "sha256-"+strings.Repeat("ab", 32)+".sig" {
		t.Errorf("SignatureTag = %s", images.SignatureTag(h, "sig"))
	}
	sigLayer := onlyLayer(t, sg.Signature, images.SimpleSigningMediaType)
	if sigLayer.annotations[images.SignatureAnnotation] == "" {
		t.Errorf("signature layer annotations %v: no %s", sigLayer.annotations, images.SignatureAnnotation)
	}
	var simple struct {
		Critical struct {
			Identity struct {
				DockerReference string `json:"docker-reference"`
			} `json:"identity"`
			Image struct {
				DockerManifestDigest string `json:"docker-manifest-digest"`
			} `json:"image"`
			Type string `json:"type"`
		} `json:"critical"`
	}
	must(t, json.Unmarshal(sigLayer.data, &simple))
	if c := simple.Critical; c.Type != "cosign container image signature" || c.Image.DockerManifestDigest != h.String() ||
		c.Identity.DockerReference != "quay.io/org/program" {
		t.Errorf("simple-signing payload %s", sigLayer.data)
	}

	attLayer := onlyLayer(t, sg.Attestation, images.DSSEMediaType)
	if a := attLayer.annotations; a[images.PredicateTypeAnnotation] != "https://slsa.dev/provenance/v1" {
		t.Errorf("attestation layer annotations %v", a)
	}
	var env struct {
		PayloadType string `json:"payloadType"`
		Payload     []byte `json:"payload"`
		Signatures  []struct {
			Sig []byte `json:"sig"`
		} `json:"signatures"`
	}
	must(t, json.Unmarshal(attLayer.data, &env))
	if env.PayloadType != "application/vnd.in-toto+json" || len(env.Signatures) != 1 || len(env.Signatures[0].Sig) == 0 {
		t.Errorf("DSSE envelope %s", attLayer.data)
	}
	var st map[string]any
	must(t, json.Unmarshal(env.Payload, &st))
	pred, _ := st["predicate"].(map[string]any)
	bd, _ := pred["buildDefinition"].(map[string]any)
	ext, _ := bd["externalParameters"].(map[string]any)
	src, _ := ext["source"].(map[string]any)
	digest, _ := src["digest"].(map[string]any)
	if st["_type"] != "https://in-toto.io/Statement/v1" || st["predicateType"] != "https://slsa.dev/provenance/v1" ||
		ext["command"] != "make release VERSION=9.9.9" || digest["gitCommit"] != testCommit {
		t.Errorf("statement %s", env.Payload)
	}
	if _, err := images.ParseStatement(env.Payload, h); err != nil {
		t.Errorf("ParseStatement: %v", err)
	}
	other, _ := v1.NewHash("sha256:" + strings.Repeat("cd", 32))
	if _, err := images.ParseStatement(env.Payload, other); err == nil || !strings.Contains(err.Error(), "do not include") {
		t.Errorf("ParseStatement of another digest: %v", err)
	}
	// cosign attest writes the statement type v0.1 (with v1's fields): accepted; another is not.
	var raw map[string]any
	must(t, json.Unmarshal(env.Payload, &raw))
	for typ, ok := range map[string]bool{"https://in-toto.io/Statement/v0.1": true, "https://example.invalid/Statement": false} {
		raw["_type"] = typ
		data, err := json.Marshal(raw)
		must(t, err)
		if _, err := images.ParseStatement(data, h); (err == nil) != ok {
			t.Errorf("ParseStatement of a statement of type %s: %v", typ, err)
		}
	}
	noCommit := testProvenance()
	noCommit.Commit = ""
	noCommit.Command = ""
	st2, err := json.Marshal(noCommit.Statement("quay.io/org/program", h))
	must(t, err)
	if _, err := images.ParseStatement(st2, h); err == nil || !strings.Contains(err.Error(), "not a full git commit") || !strings.Contains(err.Error(), "no build command") {
		t.Errorf("ParseStatement without a commit and a command: %v", err)
	}
}

type layerContent struct {
	data        []byte
	annotations map[string]string
}

func onlyLayer(t *testing.T, img v1.Image, mt types.MediaType) layerContent {
	t.Helper()
	m, err := img.Manifest()
	must(t, err)
	if m.MediaType != "application/vnd.oci.image.manifest.v1+json" || m.Config.MediaType != "application/vnd.oci.image.config.v1+json" {
		t.Errorf("manifest media types %s, config %s", m.MediaType, m.Config.MediaType)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != mt {
		t.Fatalf("layers %+v, want one %s", m.Layers, mt)
	}
	l, err := img.LayerByDigest(m.Layers[0].Digest)
	must(t, err)
	rc, err := l.Compressed()
	must(t, err)
	defer func() { _ = rc.Close() }()
	var buf bytes.Buffer
	_, err = io.Copy(&buf, rc)
	must(t, err)
	return layerContent{data: buf.Bytes(), annotations: m.Layers[0].Annotations}
}

// TestGenerateKeyPairRefusesOverwrite keeps an existing key: a release never replaces the key
// its earlier signatures verify with.
func TestGenerateKeyPairRefusesOverwrite(t *testing.T) {
	dir := t.TempDir()
	must(t, images.GenerateKeyPair(dir, nil))
	before, err := os.ReadFile(filepath.Join(dir, images.KeyFile))
	must(t, err)
	if err := images.GenerateKeyPair(dir, nil); err == nil {
		t.Error("GenerateKeyPair overwrote a key")
	}
	after, err := os.ReadFile(filepath.Join(dir, images.KeyFile))
	must(t, err)
	if !bytes.Equal(before, after) {
		t.Error("the private key changed")
	}
	if !bytes.HasPrefix(after, []byte("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----")) {
		t.Errorf("private key is not cosign's encrypted PEM: %.60s", after)
	}
	fi, err := os.Stat(filepath.Join(dir, images.KeyFile))
	must(t, err)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("private key mode %v, want 0600", fi.Mode().Perm())
	}
}
