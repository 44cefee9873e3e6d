//go:build linux

package realnode

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// RegistryImage is one image the node's registry serves.
type RegistryImage struct {
	// Layout is the OCI layout directory it was pushed from.
	Layout string
	// Tag is its reference by tag as users name it (quay.io/org/name:v1), Digest by digest
	// (quay.io/org/name@sha256:...).
	Tag, Digest string
	// List is the list it was served from (set by the node's registry; empty from
	// readRegistryList).
	List RegistryList
}

// Registry is an OCI registry on the node's bridge address (image-tool registry, a host
// process): containerd pulls every image whose host is in Hosts from it, through a mirror in
// its hosts configuration, so pods name images as users do and the kubelet pulls them.
type Registry struct {
	// Addr is NodeIP:port, plain HTTP.
	Addr string
	// Hosts are the registry hosts mirrored to Addr (quay.io).
	Hosts []string
	// Images are what it serves.
	Images []RegistryImage
	// Lists are the image lists it serves, each with the key its images are signed with.
	Lists []RegistryList
}

// Image returns the image tagged tag (quay.io/org/name:v1).
func (r *Registry) Image(tag string) (RegistryImage, error) {
	for _, img := range r.Images {
		if img.Tag == tag {
			return img, nil
		}
	}
	return RegistryImage{}, fmt.Errorf("the registry has no image tagged %s", tag)
}

// Digest returns the reference by digest of the image tagged tag (quay.io/org/name:v1).
func (r *Registry) Digest(tag string) (string, error) {
	img, err := r.Image(tag)
	return img.Digest, err
}

// readRegistryList reads "<layout> <ref:tag> <ref@digest>" lines (hack/node/build-images.sh's
// registry.txt); layouts are relative to the file's directory unless absolute.
func readRegistryList(file string) ([]RegistryImage, error) {
	lines, err := readImageList(file)
	if err != nil {
		return nil, err
	}
	var images []RegistryImage
	for _, l := range lines {
		if len(l.fields) != 3 || !strings.Contains(l.fields[2], "@sha256:") {
			return nil, fmt.Errorf("%s: %q: want <layout> <ref:tag> <ref@sha256:digest>", file, l.text)
		}
		images = append(images, RegistryImage{Layout: l.fields[0], Tag: l.fields[1], Digest: l.fields[2]})
	}
	return images, nil
}

// imageListLine is one line of an image list: its text and its fields, the first a path.
type imageListLine struct {
	text   string
	fields []string
}

// readImageList reads the lines of an image list of hack/node/build-images.sh (images.txt,
// registry.txt): whitespace-separated fields, the first a path relative to the file's directory
// unless absolute, which it resolves. Blank lines and lines starting with "#" are left out.
func readImageList(file string) ([]imageListLine, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("opening the image list: %w", err)
	}
	defer func() { _ = f.Close() }()
	var lines []imageListLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if !filepath.IsAbs(fields[0]) {
			fields[0] = filepath.Join(filepath.Dir(file), fields[0])
		}
		lines = append(lines, imageListLine{text: sc.Text(), fields: fields})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	return lines, nil
}

// registryHosts returns the distinct registry hosts of images, in order.
func registryHosts(images []RegistryImage) []string {
	var hosts []string
	for _, img := range images {
		host, _, _ := strings.Cut(img.Tag, "/")
		if !slices.Contains(hosts, host) {
			hosts = append(hosts, host)
		}
	}
	return hosts
}

// startRegistry starts image-tool's registry on NodeIP with every image of lists pushed
// (under its repository path without the host) and waits until they all are.
func (n *Node) startRegistry(ctx context.Context, imageTool string, lists []RegistryList) error {
	images, err := readRegistryLists(lists)
	if err != nil {
		return err
	}
	ready := filepath.Join(n.dir, "registry.ready")
	args := []string{"registry", "--addr", NodeIP + ":0", "--ready", ready, "--log", filepath.Join(n.dir, "registry-requests.log")}
	for _, img := range images {
		_, repo, _ := strings.Cut(img.Tag, "/")
		args = append(args, "--push", img.Layout+"="+repo)
	}
	if _, err := n.startProc("registry", imageTool, args...); err != nil {
		return err
	}
	var addr string
	// waitFor fails as soon as the registry (one of n.procs) exits.
	err = n.waitFor(ctx, "the registry to hold its images", func(context.Context) (bool, error) {
		data, err := os.ReadFile(ready)
		if err != nil {
			return false, nil
		}
		addr, _, _ = strings.Cut(string(data), "\n")
		return true, nil
	})
	if err != nil {
		return err
	}
	n.Registry = &Registry{Addr: addr, Hosts: registryHosts(images), Images: images, Lists: lists}
	n.printf("Registry on %s serves %d images for %s", addr, len(images), strings.Join(n.Registry.Hosts, ", "))
	return nil
}

// hostsToml is containerd's hosts configuration of one mirrored registry host: pull and
// resolve from the test registry over plain HTTP.
func hostsToml(host, mirror string) string {
	return fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", "https://"+host, "http://"+mirror)
}

// writeMirrors writes dir/<host>/hosts.toml for every host of r (none when r is nil).
func writeMirrors(dir string, r *Registry) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if r == nil {
		return nil
	}
	for _, host := range r.Hosts {
		if err := os.MkdirAll(filepath.Join(dir, host), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, host, "hosts.toml"), []byte(hostsToml(host, r.Addr)), 0o644); err != nil {
			return err
		}
	}
	return nil
}
