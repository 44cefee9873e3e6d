//go:build linux

package realnode

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ReleaseImagesFile is the image list of a release directory (make release): its images and
// their signatures, signed with the release's cosign.pub beside it.
const ReleaseImagesFile = "images.txt"

// RegistryList is one image list the node's registry serves, and the public key every image of
// it is signed with.
type RegistryList struct {
	File, Key string
}

// registryLists returns the lists the node's registry serves: opts.RegistryFile under
// opts.RegistryKey, or, with opts.ReleaseDir, first the release's images.txt under the
// release's cosign.pub and then what of opts.RegistryFile the release does not replace (the
// images a release does not ship: OLM's, opm's, PostgreSQL's, the previous operator), written
// to dir/node-registry.txt under opts.RegistryKey.
func registryLists(opts Options, dir string) ([]RegistryList, error) {
	node := RegistryList{File: opts.RegistryFile, Key: opts.RegistryKey}
	if opts.ReleaseDir == "" {
		return []RegistryList{node}, nil
	}
	release := RegistryList{
		File: filepath.Join(opts.ReleaseDir, ReleaseImagesFile),
		Key:  filepath.Join(opts.ReleaseDir, RegistryKeyFile),
	}
	released, err := readRegistryList(release.File)
	if err != nil {
		return nil, fmt.Errorf("the release %s: %w", opts.ReleaseDir, err)
	}
	own, err := readRegistryList(node.File)
	if err != nil {
		return nil, err
	}
	node.File = filepath.Join(dir, "node-registry.txt")
	if err := writeRegistryList(node.File, notReleased(own, released)); err != nil {
		return nil, err
	}
	return []RegistryList{release, node}, nil
}

// notReleased returns the images of own that released does not replace: neither the same tag
// (an image, or a signature's sha256-<digest>.sig tag) nor the same image by digest (whose
// signature tag the release then holds, under its own key).
func notReleased(own, released []RegistryImage) []RegistryImage {
	var kept []RegistryImage
	for _, img := range own {
		replaced := slices.ContainsFunc(released, func(r RegistryImage) bool {
			return r.Tag == img.Tag || r.Digest == img.Digest
		})
		if !replaced {
			kept = append(kept, img)
		}
	}
	return kept
}

// writeRegistryList writes images as a registry list (readRegistryList reads it back).
func writeRegistryList(file string, images []RegistryImage) error {
	var b strings.Builder
	for _, img := range images {
		fmt.Fprintf(&b, "%s %s %s\n", img.Layout, img.Tag, img.Digest)
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing the registry list: %w", err)
	}
	return nil
}

// readRegistryLists reads the images of every list, in order, each with its list.
func readRegistryLists(lists []RegistryList) ([]RegistryImage, error) {
	var images []RegistryImage
	for _, l := range lists {
		imgs, err := readRegistryList(l.File)
		if err != nil {
			return nil, err
		}
		for _, img := range imgs {
			img.List = l
			images = append(images, img)
		}
	}
	return images, nil
}
