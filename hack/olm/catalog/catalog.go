// Package catalog renders a file-based catalog (FBC) for one package from bundle directories:
// an olm.package, its default olm.channel whose entries follow each CSV's
// replaces/skips/olm.skipRange, the same entries in each deprecated channel (kept for the
// subscribers of earlier releases) with an olm.deprecations entry that sends them to the default
// channel, and every bundle as "opm render" renders it. Bundles rendered from directories carry their
// manifests inline (image "" + olm.bundle.object properties), so OLM installs them without
// pulling or unpacking a bundle image. Bundles rendered from their pushed images (Source.Image)
// carry the image by digest and no manifests: OLM unpacks the image in a Job, as on a cluster.
package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"sigs.k8s.io/yaml"
)

type bundle struct {
	csv   *v1alpha1.ClusterServiceVersion
	blobs [][]byte // rendered FBC blobs, YAML
}

// Source is one bundle of the catalog: its directory and, optionally, its image.
type Source struct {
	// Dir is the bundle directory (its CSV gives the channel entry).
	Dir string
	// Image, when set, is the bundle image as users pull it, by digest
	// (quay.io/org/bundle@sha256:...); the bundle is rendered from that image, pulled through
	// Mirror, instead of from Dir.
	Image string
}

// Mirror is where images named with a public registry host are pulled from while rendering: a
// plain-HTTP registry (e.g. image-tool registry) holding them under the same repository paths.
type Mirror struct {
	// Public is the registry host the images name (quay.io); Pull the host:port serving them.
	Public, Pull string
}

// Channels are the catalog's channels. Every channel holds every bundle.
type Channels struct {
	// Default is the package's default channel, where its releases are published.
	Default string
	// Deprecated are channels earlier releases were published in: their subscribers keep
	// getting upgrades there, and OLM tells them (Subscription condition ChannelDeprecated) to
	// move to Default.
	Deprecated []string
}

// DeprecationMessage is what OLM shows the subscribers of a deprecated channel.
func DeprecationMessage(pkg string, ch Channels, deprecated string) string {
	return fmt.Sprintf("The %s channel of %s is deprecated: releases are published in the %s channel; "+
		"set spec.channel of the Subscription to %s. The %s channel still receives every release until it is removed.",
		deprecated, pkg, ch.Default, ch.Default, deprecated)
}

// Render returns the FBC of package pkg with its channels, each holding the bundles ordered by
// version. opm is the opm binary used to render each bundle.
func Render(opm, pkg string, ch Channels, sources []Source, mirror Mirror) ([]byte, error) {
	if ch.Default == "" || slices.Contains(ch.Deprecated, ch.Default) {
		return nil, fmt.Errorf("channels %+v: want a default channel that is not deprecated", ch)
	}
	var bundles []bundle
	for _, src := range sources {
		dir := src.Dir
		b, err := manifests.GetBundleFromDir(dir)
		if err != nil {
			return nil, fmt.Errorf("loading bundle %s: %w", dir, err)
		}
		if b.Package != pkg {
			return nil, fmt.Errorf("bundle %s is for package %q, not %q", dir, b.Package, pkg)
		}
		blobs, err := renderSource(opm, src, mirror)
		if err != nil {
			return nil, err
		}
		bundles = append(bundles, bundle{csv: b.CSV, blobs: blobs})
	}
	sort.Slice(bundles, func(i, j int) bool {
		return bundles[i].csv.Spec.Version.LT(bundles[j].csv.Spec.Version.Version)
	})

	var entries []declcfg.ChannelEntry
	for _, b := range bundles {
		entries = append(entries, declcfg.ChannelEntry{
			Name:      b.csv.Name,
			Replaces:  b.csv.Spec.Replaces,
			Skips:     b.csv.Spec.Skips,
			SkipRange: b.csv.Annotations[v1alpha1.SkipRangeAnnotationKey],
		})
	}
	docs := []any{
		declcfg.Package{Schema: declcfg.SchemaPackage, Name: pkg, DefaultChannel: ch.Default},
		declcfg.Channel{Schema: declcfg.SchemaChannel, Package: pkg, Name: ch.Default, Entries: entries},
	}
	var deprecated []declcfg.DeprecationEntry
	for _, name := range ch.Deprecated {
		docs = append(docs, declcfg.Channel{Schema: declcfg.SchemaChannel, Package: pkg, Name: name, Entries: entries})
		deprecated = append(deprecated, declcfg.DeprecationEntry{
			Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaChannel, Name: name},
			Message:   DeprecationMessage(pkg, ch, name),
		})
	}
	if len(deprecated) > 0 {
		docs = append(docs, declcfg.Deprecation{Schema: declcfg.SchemaDeprecation, Package: pkg, Entries: deprecated})
	}
	var out bytes.Buffer
	for _, d := range docs {
		y, err := yaml.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("rendering YAML: %w", err)
		}
		out.WriteString("---\n")
		out.Write(y)
	}
	for _, b := range bundles {
		for _, y := range b.blobs {
			out.WriteString("---\n")
			out.Write(y)
		}
	}
	return out.Bytes(), nil
}

// renderSource renders src from its directory, or from its image through mirror: the image
// is pulled as Pull/<repository> and the rendered blobs name it as Public/<repository> again.
func renderSource(opm string, src Source, mirror Mirror) ([][]byte, error) {
	if src.Image == "" {
		return render(opm, src.Dir)
	}
	public := mirror.Public + "/"
	if mirror.Pull == "" || !strings.HasPrefix(src.Image, public) || !strings.Contains(src.Image, "@sha256:") {
		return nil, fmt.Errorf("bundle image %q: want %s<repository>@sha256:<digest> and a mirror to pull it from", src.Image, public)
	}
	pull := mirror.Pull + "/"
	blobs, err := render(opm, pull+strings.TrimPrefix(src.Image, public), "--use-http")
	if err != nil {
		return nil, err
	}
	for i, b := range blobs {
		blobs[i] = bytes.ReplaceAll(b, []byte(pull), []byte(public))
	}
	return blobs, nil
}

// render runs "opm render REF -o json" (REF a directory or an image) and returns its blobs as
// YAML documents.
func render(opm, ref string, flags ...string) ([][]byte, error) {
	cmd := exec.Command(opm, append(append([]string{"render", ref}, flags...), "-o", "json")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("opm render %s: %w: %s", ref, err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var blobs [][]byte
	for {
		var blob json.RawMessage
		if err := dec.Decode(&blob); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("reading opm render output of %s: %w", ref, err)
		}
		y, err := yaml.JSONToYAML(blob)
		if err != nil {
			return nil, fmt.Errorf("converting opm render output of %s: %w", ref, err)
		}
		blobs = append(blobs, y)
	}
	if len(blobs) == 0 {
		return nil, fmt.Errorf("opm render %s: no output", ref)
	}
	return blobs, nil
}

// Stranded returns the entries of a channel from which OLM finds no way to head, the channel
// entry named head: an entry moves on to any entry that replaces it, skips it, or whose skipRange
// holds its version (version parses an entry's name into its version). A subscriber on a stranded
// entry would never be offered an upgrade.
func Stranded(entries []declcfg.ChannelEntry, head string, version func(name string) (semver.Version, error)) ([]string, error) {
	next := map[string][]string{}
	for _, from := range entries {
		v, err := version(from.Name)
		if err != nil {
			return nil, err
		}
		for _, to := range entries {
			upgrades, err := replaces(to, from.Name, v)
			if err != nil {
				return nil, err
			}
			if upgrades {
				next[from.Name] = append(next[from.Name], to.Name)
			}
		}
	}
	var stranded []string
	for _, e := range entries {
		if !reaches(next, e.Name, head) {
			stranded = append(stranded, e.Name)
		}
	}
	return stranded, nil
}

// replaces says whether OLM upgrades the bundle name (version v) to entry to.
func replaces(to declcfg.ChannelEntry, name string, v semver.Version) (bool, error) {
	if to.Name == name {
		return false, nil
	}
	if to.Replaces == name || slices.Contains(to.Skips, name) {
		return true, nil
	}
	if to.SkipRange == "" {
		return false, nil
	}
	inRange, err := semver.ParseRange(to.SkipRange)
	if err != nil {
		return false, fmt.Errorf("entry %s: skipRange %q: %w", to.Name, to.SkipRange, err)
	}
	return inRange(v), nil
}

// reaches says whether a walk along next leads from name to head.
func reaches(next map[string][]string, name, head string) bool {
	seen := map[string]bool{}
	todo := []string{name}
	for len(todo) > 0 {
		n := todo[0]
		todo = todo[1:]
		if n == head {
			return true
		}
		if seen[n] {
			continue
		}
		seen[n] = true
		todo = append(todo, next[n]...)
	}
	return false
}
