//go:build linux && node

package nodee2e

import (
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/seed1b407122/database-operator/test/harness/realnode"
)

// signaturesStory: realnode.Start verified every image of the node's registry against its key
// before it started the control plane, containerd or anything else: registry.txt against
// NODE_IMAGES_DIR/cosign.pub (make node-images signs each image and attests its provenance)
// and, with NODE_RELEASE_DIR, the release's images.txt against the release's own cosign.pub
// (make release). Here the same check runs again on the registry the node pulls from: it
// passes with those keys, and refuses the images with another key and the operator image with
// one layer changed by a registry in between (a proxy that flips a byte of that layer's
// content, under its digest).
func signaturesStory() {
	It("verifies every image of the node's registry, and refuses them with another key or a tampered layer", func(ctx SpecContext) {
		tool := requireEnv("IMAGE_TOOL")
		Expect(node.Registry).NotTo(BeNil(), "the real-node tier needs the node's registry (make node-images writes registry.txt)")
		lists := node.Registry.Lists
		if dir := os.Getenv("NODE_RELEASE_DIR"); dir != "" {
			Expect(lists).To(HaveLen(2))
			Expect(lists[0]).To(Equal(realnode.RegistryList{
				File: filepath.Join(dir, realnode.ReleaseImagesFile), Key: filepath.Join(dir, realnode.RegistryKeyFile),
			}), "the release's images are served and verified under the release's key")
		}
		for _, l := range lists {
			out, err := realnode.VerifyImages(ctx, tool, l.Key, l.File, node.Registry.Addr)
			Expect(err).NotTo(HaveOccurred())
			Expect(out).To(ContainSubstring("images verified with " + l.Key))
			GinkgoWriter.Print(out)
		}

		other := GinkgoT().TempDir()
		keygen := exec.CommandContext(ctx, tool, "keygen", "--dir", other)
		keygen.Env = append(os.Environ(), "COSIGN_PASSWORD=")
		Expect(keygen.Run()).To(Succeed())
		for _, l := range lists {
			_, err := realnode.VerifyImages(ctx, tool, filepath.Join(other, realnode.RegistryKeyFile), l.File, node.Registry.Addr)
			Expect(err).To(MatchError(ContainSubstring("does not verify with the key")), l.File)
		}

		operator, err := node.Registry.Image(requireEnv("OPERATOR_IMAGE"))
		Expect(err).NotTo(HaveOccurred())
		if os.Getenv("NODE_RELEASE_DIR") != "" {
			for _, env := range []string{"OPERATOR_IMAGE", "ECHO_IMAGE", "BUNDLE_IMAGE", "CATALOG_IMAGE"} {
				img, err := node.Registry.Image(requireEnv(env))
				Expect(err).NotTo(HaveOccurred())
				Expect(img.List).To(Equal(lists[0]), "%s is the release's", env)
			}
		}
		layers, err := realnode.LayoutLayers(operator.Layout)
		Expect(err).NotTo(HaveOccurred())
		Expect(layers).NotTo(BeEmpty())
		proxy := realnode.NewTamperingProxy(node.Registry.Addr, layers[0])
		defer proxy.Close()
		_, err = realnode.VerifyImages(ctx, tool, operator.List.Key, operator.List.File, proxy.Addr())
		Expect(err).To(MatchError(And(ContainSubstring("REFUSED"), ContainSubstring("layer 0"),
			ContainSubstring("error verifying sha256 checksum"))))
		Expect(proxy.Tampered()).To(BeNumerically(">", 0))
	})
}
