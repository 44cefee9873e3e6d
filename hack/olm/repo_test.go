// Tests of the repository's OLM artifacts: the bundle generator is deterministic, bundle/,
// bundle.Dockerfile and catalog/ are what "make bundle" and "make catalog" produce from config/,
// and the catalog is valid for opm, holds every released bundle (hack/olm/released/<version>, as
// released) and bundle/, and offers the subscribers of each released version an upgrade path to
// bundle/'s version.
//
// They need the kustomize and opm binaries in $KUSTOMIZE and $OPM; "make olm-test" provides them.
package olm_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/seed1b407122/database-operator/hack/olm/bundlegen"
	"github.com/seed1b407122/database-operator/hack/olm/catalog"
)

const (
	repoRoot = "../.."
	pkg      = "database-operator"
	// channel is the default channel; deprecatedChannel holds every bundle too, for the
	// subscribers of 0.2.0, which was released there (the Makefile's DEFAULT_CHANNEL and
	// DEPRECATED_CHANNELS).
	channel           = "candidate-v0"
	deprecatedChannel = "stable"
	// releasedDir holds the released bundles, one directory per version (the Makefile's
	// RELEASES); "make catalog" renders them all before bundle/.
	releasedDir = "hack/olm/released"
)

// releasedBundleImages are the bundle images of the releases as their catalogs published them
// (the catalog/ of each release commit). The catalog must keep serving exactly these: a
// subscriber's cluster may hold them, and a digest that changes is another bundle under the same
// version.
var releasedBundleImages = map[string]string{
	pkg + ".v0.2.0": "quay.io/seed1b407122/database-operator-bundle@sha256:02408a9f5a63a99b8db8973aa4ab302453d7e46917b19acd2784cb5574407cf4",
	pkg + ".v0.3.0": "quay.io/seed1b407122/database-operator-bundle@sha256:15e499ba2f81dcd221336fbf2fc02d3d68b527a0a6101fff973a399efaf80d87",
}

// releasedBundles returns the directories of the released bundles, oldest version first.
func releasedBundles(t *testing.T) []string {
	t.Helper()
	dirs, err := os.ReadDir(filepath.Join(repoRoot, releasedDir))
	if err != nil {
		t.Fatal(err)
	}
	var versions []semver.Version
	for _, d := range dirs {
		v, err := semver.Parse(d.Name())
		if err != nil || !d.IsDir() {
			t.Fatalf("%s/%s: want a directory named by the version it holds", releasedDir, d.Name())
		}
		versions = append(versions, v)
	}
	semver.Sort(versions)
	paths := make([]string, len(versions))
	for i, v := range versions {
		paths[i] = filepath.Join(repoRoot, releasedDir, v.String())
	}
	return paths
}

// catalogSources are the bundle directories of the catalog: the released ones, then bundle/.
func catalogSources(t *testing.T) []catalog.Source {
	t.Helper()
	var sources []catalog.Source
	for _, dir := range append(releasedBundles(t), filepath.Join(repoRoot, "bundle")) {
		sources = append(sources, catalog.Source{Dir: dir})
	}
	return sources
}

// tool returns the path of the binary named by env var name, or skips the test.
func tool(t *testing.T, name string) string {
	t.Helper()
	p := os.Getenv(name)
	if p == "" {
		t.Skipf("$%s is not set; run \"make olm-test\"", name)
	}
	return p
}

// kustomizeManifests returns "kustomize build config/manifests".
func kustomizeManifests(t *testing.T) []byte {
	t.Helper()
	cmd := exec.Command(tool(t, "KUSTOMIZE"), "build", filepath.Join(repoRoot, "config", "manifests"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build config/manifests: %v", err)
	}
	return out
}

// committedOptions are the options that produced bundle/, read back from its CSV.
func committedOptions(t *testing.T) bundlegen.Options {
	t.Helper()
	b, err := manifests.GetBundleFromDir(filepath.Join(repoRoot, "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	o := bundlegen.Options{
		Package:        pkg,
		Version:        b.CSV.Spec.Version.String(),
		Channels:       b.Channels,
		DefaultChannel: b.DefaultChannel,
		OperatorImage:  b.CSV.Annotations["containerImage"],
	}
	if r := b.CSV.Spec.Replaces; r != "" {
		o.PreviousVersion = strings.TrimPrefix(r, pkg+".v")
	}
	return o
}

// readTree returns the files under dir, keyed by relative path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[rel], err = os.ReadFile(path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// sameTree fails the test if the trees differ; fix says how to bring want up to date.
func sameTree(t *testing.T, got, want map[string][]byte, fix string) {
	t.Helper()
	for name, g := range got {
		w, ok := want[name]
		switch {
		case !ok:
			t.Errorf("%s: missing from the committed files (%s)", name, fix)
		case !bytes.Equal(g, w):
			t.Errorf("%s differs from a fresh generation (%s)", name, fix)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("%s: not generated any more (%s)", name, fix)
		}
	}
}

// generate writes a bundle (and bundle.Dockerfile next to it) into a new temporary directory.
func generate(t *testing.T, in []byte, o bundlegen.Options) string {
	t.Helper()
	dir := t.TempDir()
	o.OutputDir = filepath.Join(dir, "bundle")
	o.Dockerfile = filepath.Join(dir, "bundle.Dockerfile")
	if err := bundlegen.Generate(bytes.NewReader(in), o); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBundleGenerationIsDeterministic(t *testing.T) {
	in := kustomizeManifests(t)
	o := committedOptions(t)
	a, b := generate(t, in, o), generate(t, in, o)
	sameTree(t, readTree(t, a), readTree(t, b), "the generator is not deterministic")
}

func TestCommittedBundleIsCurrent(t *testing.T) {
	dir := generate(t, kustomizeManifests(t), committedOptions(t))
	got := readTree(t, filepath.Join(dir, "bundle"))
	sameTree(t, got, readTree(t, filepath.Join(repoRoot, "bundle")), "run make bundle VERSION=... PREVIOUS_VERSION=...")
	df, err := os.ReadFile(filepath.Join(repoRoot, "bundle.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if fresh, _ := os.ReadFile(filepath.Join(dir, "bundle.Dockerfile")); !bytes.Equal(fresh, df) {
		t.Error("bundle.Dockerfile differs from a fresh generation (run make bundle)")
	}
}

func TestDockerfileLabelsMatchAnnotations(t *testing.T) {
	df, err := os.ReadFile(filepath.Join(repoRoot, "bundle.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^LABEL (\S+)=(\S+)$`).FindAllStringSubmatch(string(df), -1) {
		labels[m[1]] = m[2]
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot, "bundle", "metadata", "annotations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ann struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(raw, &ann); err != nil {
		t.Fatal(err)
	}
	if len(labels) != len(ann.Annotations) {
		t.Errorf("bundle.Dockerfile has %d labels, annotations.yaml %d annotations", len(labels), len(ann.Annotations))
	}
	for k, v := range ann.Annotations {
		if labels[k] != v {
			t.Errorf("label %s = %q, annotation = %q", k, labels[k], v)
		}
	}
}

// fbcBlob is the part of an FBC blob the tests read.
type fbcBlob struct {
	Schema         string `json:"schema"`
	Name           string `json:"name"`
	Package        string `json:"package"`
	Image          *string
	DefaultChannel string                 `json:"defaultChannel"`
	Entries        []declcfg.ChannelEntry `json:"entries"`
	Properties     []struct {
		Type string `json:"type"`
	} `json:"properties"`
}

// fbcDeprecations is an olm.deprecations blob.
type fbcDeprecations struct {
	Package string `json:"package"`
	Entries []struct {
		Reference map[string]string `json:"reference"`
		Message   string            `json:"message"`
	} `json:"entries"`
}

func TestCatalog(t *testing.T) {
	opm := tool(t, "OPM")
	if out, err := exec.Command(opm, "validate", filepath.Join(repoRoot, "catalog")).CombinedOutput(); err != nil {
		t.Fatalf("opm validate catalog: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot, "catalog", pkg, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var bundles []string
	var channels []fbcBlob
	var deprecations []fbcDeprecations
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var b fbcBlob
		if err := yaml.Unmarshal([]byte(strings.TrimPrefix(doc, "---\n")), &b); err != nil {
			t.Fatal(err)
		}
		switch b.Schema {
		case "olm.deprecations":
			var d fbcDeprecations
			if err := yaml.Unmarshal([]byte(strings.TrimPrefix(doc, "---\n")), &d); err != nil {
				t.Fatal(err)
			}
			deprecations = append(deprecations, d)
		case "olm.package":
			if b.Name != pkg || b.DefaultChannel != channel {
				t.Errorf("package %q with default channel %q, want %q and %q", b.Name, b.DefaultChannel, pkg, channel)
			}
		case "olm.channel":
			channels = append(channels, b)
		case "olm.bundle":
			bundles = append(bundles, b.Name)
			objects := 0
			for _, p := range b.Properties {
				if p.Type == "olm.bundle.object" {
					objects++
				}
			}
			if b.Image == nil || !bundleImage.MatchString(*b.Image) || objects == 0 {
				t.Errorf("bundle %s: image %v, %d olm.bundle.object properties; want its image by digest (%s) and its manifests", b.Name, b.Image, objects, bundleImage)
			} else if want, released := releasedBundleImages[b.Name]; released && *b.Image != want {
				t.Errorf("released bundle %s: image %s, want %s, the one its release published", b.Name, *b.Image, want)
			}
		}
	}
	want := wantEntries(t)
	var names []string
	for _, e := range want {
		names = append(names, e.Name)
	}
	for name := range releasedBundleImages {
		if !slices.Contains(bundles, name) {
			t.Errorf("the released bundle %s is not in the catalog: its subscribers would have no upgrade", name)
		}
	}
	if !slices.Equal(bundles, names) {
		t.Errorf("bundles %q, want %q (every released bundle and bundle/, by version)", bundles, names)
	}
	if len(channels) != 2 || channels[0].Name != channel || channels[1].Name != deprecatedChannel {
		t.Fatalf("want the channels %q and %q, got %+v", channel, deprecatedChannel, channels)
	}
	for _, c := range channels {
		if !reflect.DeepEqual(c.Entries, want) {
			t.Errorf("channel %s: entries %+v, want %+v (each bundle's replaces, skips and skipRange)", c.Name, c.Entries, want)
		}
		expectUpgradePaths(t, c.Name, c.Entries)
	}
	head := want[len(want)-1]
	if previous := want[len(want)-2].Name; head.Replaces != previous {
		t.Errorf("bundle/ (%s) replaces %q, want the last release %s", head.Name, head.Replaces, previous)
	}
	wantMessage := catalog.DeprecationMessage(pkg, catalog.Channels{Default: channel}, deprecatedChannel)
	if len(deprecations) != 1 || deprecations[0].Package != pkg || len(deprecations[0].Entries) != 1 ||
		!reflect.DeepEqual(deprecations[0].Entries[0].Reference, map[string]string{"schema": "olm.channel", "name": deprecatedChannel}) ||
		deprecations[0].Entries[0].Message != wantMessage {
		t.Errorf("deprecations %+v, want the one channel %s deprecated with %q", deprecations, deprecatedChannel, wantMessage)
	}
}

// wantEntries are the channel entries of the catalog's bundles, oldest first, as their CSVs
// declare them (the released ones as released).
func wantEntries(t *testing.T) []declcfg.ChannelEntry {
	t.Helper()
	var entries []declcfg.ChannelEntry
	for _, src := range catalogSources(t) {
		b, err := manifests.GetBundleFromDir(src.Dir)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, declcfg.ChannelEntry{
			Name: b.CSV.Name, Replaces: b.CSV.Spec.Replaces, Skips: b.CSV.Spec.Skips,
			SkipRange: b.CSV.Annotations["olm.skipRange"],
		})
	}
	if len(entries) < 2 {
		t.Fatalf("the catalog holds %d bundles: want the released ones and bundle/", len(entries))
	}
	return entries
}

// expectUpgradePaths fails for every entry of the channel from which OLM offers no way to its
// head (the last entry): its subscribers would stay on it.
func expectUpgradePaths(t *testing.T, name string, entries []declcfg.ChannelEntry) {
	t.Helper()
	head := entries[len(entries)-1].Name
	stranded, err := catalog.Stranded(entries, head, func(n string) (semver.Version, error) {
		return semver.Parse(strings.TrimPrefix(n, pkg+".v"))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stranded {
		t.Errorf("channel %s: no upgrade path from %s to %s", name, s, head)
	}
}

// TestChannelsAgreeWithMaturity: the CSV's maturity and the default channel say the same thing
// in OLM's channel naming (candidate: pre-GA, fast and stable: GA), and every channel follows
// that naming (the good-practices validator checks the names too; this checks the meaning).
func TestChannelsAgreeWithMaturity(t *testing.T) {
	b, err := manifests.GetBundleFromDir(filepath.Join(repoRoot, "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	preGA := map[string]bool{"planning": true, "pre-alpha": true, "alpha": true, "beta": true}
	maturity := b.CSV.Spec.Maturity
	want := "stable"
	if preGA[maturity] {
		want = "candidate"
	}
	if !strings.HasPrefix(b.DefaultChannel, want) {
		t.Errorf("maturity %q with default channel %q: want a %s channel", maturity, b.DefaultChannel, want)
	}
	if b.DefaultChannel != channel || !slices.Equal(b.Channels, []string{channel, deprecatedChannel}) {
		t.Errorf("bundle/ is in channels %q (default %q), want [%s %s] (default %s), as the catalog publishes it",
			b.Channels, b.DefaultChannel, channel, deprecatedChannel, channel)
	}
}

// TestCommittedCatalogIsCurrent: catalog/ is what a render of the bundle directories gives,
// apart from naming each bundle by its image (image and the bundle's own relatedImages entry).
// That the digests are the images' the tree builds is "make catalog-check" (part of make verify).
func TestCommittedCatalogIsCurrent(t *testing.T) {
	opm := tool(t, "OPM")
	fbc, err := catalog.Render(opm, pkg, catalog.Channels{Default: channel, Deprecated: []string{deprecatedChannel}}, catalogSources(t), catalog.Mirror{})
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join(repoRoot, "catalog", pkg, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	inline := bundleImageLine.ReplaceAll(bundleRelatedImage.ReplaceAll(committed, nil), []byte(`image: ""`))
	if !bytes.Equal(fbc, inline) {
		t.Error("catalog/ differs from a fresh render (run make catalog)")
	}
	if bytes.Equal(inline, committed) {
		t.Error("catalog/ names no bundle image (run make catalog)")
	}
}

// bundleImage is a bundle image as catalog/ names it, by digest; bundleImageLine and
// bundleRelatedImage are where it appears in catalog/'s YAML.
var (
	bundleImage        = regexp.MustCompile(`^quay\.io/seed1b407122/database-operator-bundle@sha256:[0-9a-f]{64}$`)
	bundleImageLine    = regexp.MustCompile(`(?m)^image: quay\.io/seed1b407122/database-operator-bundle@sha256:[0-9a-f]{64}$`)
	bundleRelatedImage = regexp.MustCompile(`(?m)^- image: quay\.io/seed1b407122/database-operator-bundle@sha256:[0-9a-f]{64}\n  name: ""\n`)
)

// TestCommittedCSVClusterPermissions pins least privilege by install mode in the committed
// bundle: clusterPermissions holds only read access to the two cluster-scoped kinds DatabaseBackups
// read (VolumeSnapshotClasses, StorageClasses), get/create/delete of VolumeSnapshotContents (a
// clone from a backup of another namespace reads the source's content and creates, then
// deletes, its Retain copy; no list or watch) and the cluster-scoped reviews of the secure
// metrics endpoint; every other rule of the manager (config/rbac/role.yaml) is in permissions,
// which OLM grants in the target namespaces only.
func TestCommittedCSVClusterPermissions(t *testing.T) {
	b, err := manifests.GetBundleFromDir(filepath.Join(repoRoot, "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	s := b.CSV.Spec.InstallStrategy.StrategySpec
	clusterScoped := []rbacv1.PolicyRule{
		// Read by name, only for a member that cannot run (a lost member's node and volume).
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"get"}},
		{APIGroups: []string{"snapshot.storage.k8s.io"}, Resources: []string{"volumesnapshotclasses"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"snapshot.storage.k8s.io"}, Resources: []string{"volumesnapshotcontents"}, Verbs: []string{"create", "delete", "get"}},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"get"}},
	}
	wantCluster := []rbacv1.PolicyRule{
		clusterScoped[0], clusterScoped[1], clusterScoped[2], clusterScoped[3], clusterScoped[4],
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
	}
	if len(s.ClusterPermissions) != 1 || !reflect.DeepEqual(s.ClusterPermissions[0].Rules, wantCluster) {
		t.Errorf("clusterPermissions %+v, want one ServiceAccount with %+v", s.ClusterPermissions, wantCluster)
	}
	data, err := os.ReadFile(filepath.Join(repoRoot, "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(data, &role); err != nil {
		t.Fatal(err)
	}
	if len(s.Permissions) != 1 {
		t.Fatalf("permissions of %d ServiceAccounts, want 1", len(s.Permissions))
	}
	for _, r := range role.Rules {
		if slices.ContainsFunc(clusterScoped, func(c rbacv1.PolicyRule) bool { return reflect.DeepEqual(c, r) }) {
			continue
		}
		if !slices.ContainsFunc(s.Permissions[0].Rules, func(p rbacv1.PolicyRule) bool { return reflect.DeepEqual(p, r) }) {
			t.Errorf("the manager's rule %+v is not in the CSV's permissions (run make bundle)", r)
		}
	}
}
