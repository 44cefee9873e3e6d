package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo is a throwaway git repository.
type gitRepo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *gitRepo {
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid",
		"-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *gitRepo) write(name, content string) {
	r.t.Helper()
	file := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *gitRepo) commit(subject string) string {
	r.t.Helper()
	r.write("log.txt", subject+"\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", subject)
	return r.git("rev-parse", "HEAD")
}

const testCSV = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  annotations:
    olm.skipRange: <0.4.0
  name: database-operator.v0.4.0
spec:
  replaces: database-operator.v0.3.0
  version: 0.4.0
`

const testAnnotations = `annotations:
  operators.operatorframework.io.bundle.channels.v1: candidate-v0,stable
  operators.operatorframework.io.bundle.channel.default.v1: candidate-v0
`

// TestNotes renders the notes of a repository without a tag (changes since the previous
// release's commit) and with one (changes since the tag), with the CSV's upgrade edge and the
// images but not their signatures.
func TestNotes(t *testing.T) {
	r := newRepo(t)
	previous := r.commit("release 0.3.0")
	r.commit("controllers: a fix")
	r.write("bundle/csv.yaml", testCSV)
	r.write("bundle/annotations.yaml", testAnnotations)
	r.commit("bundle: 0.4.0")
	images := filepath.Join(r.dir, "images.txt")
	list := "images/operator quay.io/org/op:v0.4.0 quay.io/org/op@sha256:aa\n" +
		"images/database-operator quay.io/org/database-operator:v0.4.0 quay.io/org/database-operator@sha256:dd\n" +
		"signatures/x quay.io/org/op:sha256-aa.sig quay.io/org/op@sha256:bb\n" +
		"signatures/y quay.io/org/op:sha256-aa.att quay.io/org/op@sha256:cc\n"
	if err := os.WriteFile(images, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	edge, err := ReadUpgradeEdge(filepath.Join(r.dir, "bundle/csv.yaml"), filepath.Join(r.dir, "bundle/annotations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := readImages(images)
	if err != nil {
		t.Fatal(err)
	}
	in := NotesInput{Version: "0.4.0", RepoDir: r.dir, Since: previous, Edge: edge, Images: imgs}
	notes, err := Notes(in)
	if err != nil {
		t.Fatal(err)
	}
	head := r.git("rev-parse", "HEAD")
	for _, want := range []string{
		"# database-operator 0.4.0\n",
		"Released from commit " + head,
		"Bundle `database-operator.v0.4.0` (version 0.4.0) in the channels candidate-v0,stable (default candidate-v0)",
		"Replaces `database-operator.v0.3.0`",
		"`olm.skipRange: <0.4.0`",
		"| `quay.io/org/op:v0.4.0` | `quay.io/org/op@sha256:aa` |",
		"cosign verify --key cosign.pub --insecure-ignore-tlog quay.io/org/op@sha256:aa",
		"--set image.repository=quay.io/org/database-operator --set image.tag=v0.4.0`; the chart names the image by tag, " +
			"which this release pushed as quay.io/org/database-operator@sha256:dd)",
		"## Changes since commit " + previous[:12] + " (the previous release; the repository has no tag)",
		"- " + r.git("rev-parse", "--short", "HEAD~1") + " controllers: a fix\n",
		"- " + r.git("rev-parse", "--short", "HEAD") + " bundle: 0.4.0\n",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	for _, unwanted := range []string{"release 0.3.0", "sha256-aa.sig", "sha256:bb"} {
		if strings.Contains(notes, unwanted) {
			t.Errorf("notes have %q:\n%s", unwanted, notes)
		}
	}

	// With a tag, the changes start there; --since is not used.
	r.git("tag", "v0.3.9", "HEAD~1")
	notes, err = Notes(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(notes, "## Changes since tag v0.3.9\n\n- "+r.git("rev-parse", "--short", "HEAD")+" bundle: 0.4.0\n") ||
		strings.Contains(notes, "controllers: a fix") {
		t.Errorf("notes with a tag:\n%s", notes)
	}
	// The last commit tagged: no change.
	r.git("tag", "v0.4.0-rc", "HEAD")
	if notes, err = Notes(in); err != nil || !strings.Contains(notes, "No commits.") {
		t.Errorf("notes at a tag: %v\n%s", err, notes)
	}
}

func TestNotesWithoutTagOrSince(t *testing.T) {
	r := newRepo(t)
	r.commit("one")
	if _, err := Notes(NotesInput{Version: "1.0.0", RepoDir: r.dir}); err == nil || !strings.Contains(err.Error(), "no tag and no --since") {
		t.Errorf("Notes without a tag or --since: %v", err)
	}
}

// releaseRepo is a repository holding what "make release" reads before it builds anything:
// the Makefile, go.mod, the release script and bundle/'s CSV, copied from this tree.
func releaseRepo(t *testing.T) *gitRepo {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	r := newRepo(t)
	for _, f := range []string{"Makefile", "go.mod", "go.sum", "hack/release/release.sh",
		"bundle/manifests/database-operator.clusterserviceversion.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		r.write(f, string(data))
	}
	if err := os.Chmod(filepath.Join(r.dir, "hack/release/release.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.write(".gitignore", "/bin/\n")
	r.commit("a release candidate")
	return r
}

// makeRelease runs "make release" in r with args and returns its output; it must fail.
func makeRelease(t *testing.T, r *gitRepo, args ...string) string {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory", "release"}, args...)...)
	cmd.Dir = r.dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("make release %s succeeded; want a refusal:\n%s", strings.Join(args, " "), out)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "bin")); err == nil {
		t.Errorf("make release %s wrote bin/ before refusing", strings.Join(args, " "))
	}
	return string(out)
}

// TestReleaseRefuses runs "make release" where it must refuse before it builds anything: an
// untracked file, a changed tracked file, a VERSION that is not the bundle's, a failing make
// verify (RELEASE_VERIFY=false stands for it) and failing fuzzing (RELEASE_FUZZ=false).
func TestReleaseRefuses(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	r := releaseRepo(t)
	pass := "RELEASE_VERIFY=true"

	r.write("notes.txt", "scratch\n")
	out := makeRelease(t, r, "VERSION=0.4.0", pass)
	expectOutput(t, "an untracked file", out, "refusing to release 0.4.0: the work tree is dirty", "?? notes.txt")
	if err := os.Remove(filepath.Join(r.dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}

	r.write("go.mod", "// changed\n")
	out = makeRelease(t, r, "VERSION=0.4.0", pass)
	expectOutput(t, "a changed file", out, "the work tree is dirty", " M go.mod")
	r.git("checkout", "-q", "--", "go.mod")

	out = makeRelease(t, r, "VERSION=0.5.0", pass)
	expectOutput(t, "another version", out, "bundle/ is version 0.4.0")
	out = makeRelease(t, r, "VERSION=0.5.0-rc.1", pass)
	expectOutput(t, "a candidate of another version", out, "bundle/ is version 0.4.0")
	out = makeRelease(t, r, "VERSION=0.4.0-beta", pass)
	expectOutput(t, "a version that is not x.y.z or x.y.z-rc.N", out, "VERSION must be x.y.z or x.y.z-rc.N")
	// A candidate of the bundle's version passes the version check and stops at the next one.
	out = makeRelease(t, r, "VERSION=0.4.0-rc.1", "RELEASE_VERIFY=false")
	expectOutput(t, "a candidate of the bundle's version", out, "refusing to release 0.4.0-rc.1: make verify failed")

	out = makeRelease(t, r, "VERSION=0.4.0", "RELEASE_VERIFY=false")
	expectOutput(t, "a failing make verify", out, "make verify failed")

	// Fuzzing runs after make verify; RELEASE_FUZZ=false stands for a failing input found.
	out = makeRelease(t, r, "VERSION=0.4.0", pass, "RELEASE_FUZZ=false")
	expectOutput(t, "failing fuzzing", out,
		"refusing to release 0.4.0: fuzzing failed (a failing input is in the package's testdata/fuzz/)")
}

func expectOutput(t *testing.T, what, out string, substrings ...string) {
	t.Helper()
	for _, s := range substrings {
		if !strings.Contains(out, s) {
			t.Errorf("%s: the output does not mention %q:\n%s", what, s, out)
		}
	}
}
