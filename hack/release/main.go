// Command release writes the release notes of "make release" (hack/release/release.sh): the
// commits since the last tag (or since the previous release's commit when the repository has
// no tag), the upgrade edge of the bundle's ClusterServiceVersion, the images by digest and how
// to verify them.
//
//	go run ./hack/release notes --version 0.4.0 --since a8693b2 --csv bundle/manifests/database-operator.clusterserviceversion.yaml \
//	    --annotations bundle/metadata/annotations.yaml --images bin/release/0.4.0/images.txt --out bin/release/0.4.0/RELEASE_NOTES.md
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "notes" {
		fmt.Fprintln(os.Stderr, "usage: release notes [flags] (-h for the flags)")
		os.Exit(2)
	}
	if err := runNotes(os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "release notes:", err)
		os.Exit(1)
	}
}

func runNotes(args []string) error {
	fs := flag.NewFlagSet("notes", flag.ExitOnError)
	in := NotesInput{}
	fs.StringVar(&in.Version, "version", "", "the version released (required)")
	fs.StringVar(&in.Since, "since", "", "the commit to list changes from when the repository has no tag (the previous release's commit)")
	fs.StringVar(&in.RepoDir, "repo", ".", "the git repository")
	csv := fs.String("csv", "", "the bundle's ClusterServiceVersion (required)")
	annotations := fs.String("annotations", "", "the bundle's metadata/annotations.yaml (channels)")
	images := fs.String("images", "", "the release's image list (<layout> <ref:tag> <ref@digest> per line)")
	out := fs.String("out", "", "file to write (default: standard output)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if in.Version == "" || *csv == "" {
		return errors.New("--version and --csv are required")
	}
	var err error
	if in.Edge, err = ReadUpgradeEdge(*csv, *annotations); err != nil {
		return err
	}
	if *images != "" {
		if in.Images, err = readImages(*images); err != nil {
			return err
		}
	}
	notes, err := Notes(in)
	if err != nil {
		return err
	}
	if *out == "" {
		_, err = os.Stdout.WriteString(notes)
		return err
	}
	return os.WriteFile(*out, []byte(notes), 0o644)
}

// NotesInput is what the release notes are made of.
type NotesInput struct {
	Version string
	// RepoDir is the git repository; Since the commit changes are listed from when it has no tag.
	RepoDir, Since string
	Edge           UpgradeEdge
	// Images are the references by digest the release pushed (not its signatures).
	Images []Image
}

// Image is a released image: its reference by tag and by digest.
type Image struct{ Tag, Digest string }

// UpgradeEdge is where the bundle sits in OLM's upgrade graph.
type UpgradeEdge struct {
	Name, Version, Replaces, SkipRange string
	Skips                              []string
	Channels, DefaultChannel           string
}

// ReadUpgradeEdge reads the edge from the CSV (spec.version, spec.replaces, spec.skips, the
// olm.skipRange annotation) and the channels from the bundle's annotations (optional).
func ReadUpgradeEdge(csvFile, annotationsFile string) (UpgradeEdge, error) {
	var csv struct {
		Metadata struct {
			Name        string            `json:"name"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			Version  string   `json:"version"`
			Replaces string   `json:"replaces"`
			Skips    []string `json:"skips"`
		} `json:"spec"`
	}
	if err := readYAML(csvFile, &csv); err != nil {
		return UpgradeEdge{}, err
	}
	e := UpgradeEdge{
		Name: csv.Metadata.Name, Version: csv.Spec.Version, Replaces: csv.Spec.Replaces,
		SkipRange: csv.Metadata.Annotations["olm.skipRange"], Skips: csv.Spec.Skips,
	}
	if e.Name == "" || e.Version == "" {
		return UpgradeEdge{}, fmt.Errorf("%s: no metadata.name or spec.version", csvFile)
	}
	if annotationsFile != "" {
		var a struct {
			Annotations map[string]string `json:"annotations"`
		}
		if err := readYAML(annotationsFile, &a); err != nil {
			return UpgradeEdge{}, err
		}
		e.Channels = a.Annotations["operators.operatorframework.io.bundle.channels.v1"]
		e.DefaultChannel = a.Annotations["operators.operatorframework.io.bundle.channel.default.v1"]
	}
	return e, nil
}

func readYAML(file string, v any) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// readImages reads a release's image list, leaving out the signatures (tags ending .sig, .att).
func readImages(file string) ([]Image, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var images []Image
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || strings.HasSuffix(fields[1], ".sig") || strings.HasSuffix(fields[1], ".att") {
			continue
		}
		images = append(images, Image{Tag: fields[1], Digest: fields[2]})
	}
	return images, sc.Err()
}

// git runs git in dir and returns its trimmed output.
func git(dir string, args ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// ChangesBase returns where the changes of a release start: the last tag reachable from HEAD,
// else since (the previous release's commit), and a description of it.
func ChangesBase(dir, since string) (base, what string, err error) {
	if tag, err := git(dir, "describe", "--tags", "--abbrev=0", "HEAD"); err == nil && tag != "" {
		return tag, "tag " + tag, nil
	}
	if since == "" {
		return "", "", errors.New("the repository has no tag and no --since commit was given")
	}
	short, err := git(dir, "rev-parse", "--short=12", since+"^{commit}")
	if err != nil {
		return "", "", err
	}
	return since, "commit " + short + " (the previous release; the repository has no tag)", nil
}

// Notes renders the release notes.
func Notes(in NotesInput) (string, error) {
	head, err := git(in.RepoDir, "rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	base, what, err := ChangesBase(in.RepoDir, in.Since)
	if err != nil {
		return "", err
	}
	log, err := git(in.RepoDir, "log", "--no-merges", "--format=%h %s", base+"..HEAD")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# database-operator %s\n\nReleased from commit %s.\n\n", in.Version, head)
	writeEdge(&b, in.Edge)
	writeImages(&b, in.Images)
	writeArtifacts(&b, in.Version, in.Images)
	fmt.Fprintf(&b, "## Changes since %s\n\n", what)
	if log == "" {
		b.WriteString("No commits.\n")
	}
	for line := range strings.SplitSeq(log, "\n") {
		if line != "" {
			fmt.Fprintf(&b, "- %s\n", line)
		}
	}
	return b.String(), nil
}

func writeEdge(b *strings.Builder, e UpgradeEdge) {
	b.WriteString("## Upgrade (OLM)\n\n")
	fmt.Fprintf(b, "- Bundle `%s` (version %s)", e.Name, e.Version)
	if e.Channels != "" {
		fmt.Fprintf(b, " in the channels %s (default %s)", e.Channels, e.DefaultChannel)
	}
	b.WriteString(".\n")
	if e.Replaces != "" {
		fmt.Fprintf(b, "- Replaces `%s`: subscribers of that version upgrade to this one.\n", e.Replaces)
	} else {
		b.WriteString("- Replaces no version: the first release of its channel.\n")
	}
	if e.SkipRange != "" {
		fmt.Fprintf(b, "- `olm.skipRange: %s`: any installed version in that range upgrades straight to this one.\n", e.SkipRange)
	}
	if len(e.Skips) > 0 {
		skips := append([]string(nil), e.Skips...)
		sort.Strings(skips)
		fmt.Fprintf(b, "- Skips %s.\n", strings.Join(skips, ", "))
	}
	b.WriteString("\n")
}

func writeImages(b *strings.Builder, images []Image) {
	if len(images) == 0 {
		return
	}
	b.WriteString("## Images (pull by digest)\n\n| Image | Reference by digest |\n|---|---|\n")
	for _, img := range images {
		fmt.Fprintf(b, "| `%s` | `%s` |\n", img.Tag, img.Digest)
	}
	b.WriteString("\nEach is signed with the release's `cosign.pub` and has an SLSA provenance attestation " +
		"naming the commit above and the command that built it. Verify them with\n\n```sh\n")
	for _, img := range images {
		fmt.Fprintf(b, "cosign verify --key cosign.pub --insecure-ignore-tlog %s\n", img.Digest)
	}
	b.WriteString("```\n\nor offline, from the release directory: " +
		"`image-tool verify --key cosign.pub --list images.txt --serve` (docs/release.md).\n\n")
}

// writeArtifacts lists the release directory's other files and how to install the chart with the
// released operator image (tagged <repo>/database-operator:v<version>).
func writeArtifacts(b *strings.Builder, version string, images []Image) {
	b.WriteString("## Artifacts\n\n")
	fmt.Fprintf(b, "- `chart/database-operator-%s.tgz`: the Helm chart", version)
	for _, img := range images {
		repo, tag, _ := strings.Cut(img.Tag, ":")
		if strings.HasSuffix(repo, "/database-operator") && tag == "v"+version {
			fmt.Fprintf(b, " (`helm install database-operator database-operator-%s.tgz --namespace database-operator-system "+
				"--create-namespace --set image.repository=%s --set image.tag=v%s`; the chart names the image by tag, "+
				"which this release pushed as %s)", version, repo, version, img.Digest)
		}
	}
	b.WriteString(".\n- `kubectl-dbc/`: the kubectl plugin's archives and `kubectl-dbc_SHA256SUMS`.\n" +
		"- `sbom/`: the CycloneDX SBOMs of the images and of the manager, attached to the images as OCI referrers.\n" +
		"- `images/`, `signatures/`, `images.txt`: every image, signature and attestation as OCI layouts (offline verification).\n" +
		"- `cosign.pub`: the key the images are signed with; `SHA256SUMS`: the checksums of the files above.\n\n")
}
