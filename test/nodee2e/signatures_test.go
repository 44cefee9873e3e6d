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

// signaturesStory: realnode.Start verified every image of the node's registry (registry.txt)
// against NODE_IMAGES_DIR/cosign.pub before it started the control plane, containerd or
// anything else (make node-images signs each image and attests its provenance). Here the same
// check runs again on the registry the node pulls from: it passes with that key, and refuses
// the images with another key and the operator image with one layer changed by a registry in
// between (a proxy that flips a byte of that layer's content, under its digest).
func signaturesStory() {
	It("verifies every image of the node's registry, and refuses them with another key or a tampered layer", func(ctx SpecContext) {
		tool := requireEnv("IMAGE_TOOL")
		list := filepath.Join(requireEnv("NODE_IMAGES_DIR"), "registry.txt")
		key := filepath.Join(requireEnv("NODE_IMAGES_DIR"), realnode.RegistryKeyFile)
		Expect(node.Registry).NotTo(BeNil(), "the real-node tier needs the node's registry (make node-images writes registry.txt)")

		out, err := realnode.VerifyImages(ctx, tool, key, list, node.Registry.Addr)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("images verified with " + key))
		GinkgoWriter.Print(out)

		other := GinkgoT().TempDir()
		keygen := exec.CommandContext(ctx, tool, "keygen", "--dir", other)
		keygen.Env = append(os.Environ(), "COSIGN_PASSWORD=")
		Expect(keygen.Run()).To(Succeed())
		_, err = realnode.VerifyImages(ctx, tool, filepath.Join(other, realnode.RegistryKeyFile), list, node.Registry.Addr)
		Expect(err).To(MatchError(ContainSubstring("does not verify with the key")))

		var layout string
		for _, img := range node.Registry.Images {
			if img.Tag == requireEnv("OPERATOR_IMAGE") {
				layout = img.Layout
			}
		}
		Expect(layout).NotTo(BeEmpty(), "no registry image tagged %s", requireEnv("OPERATOR_IMAGE"))
		layers, err := realnode.LayoutLayers(layout)
		Expect(err).NotTo(HaveOccurred())
		Expect(layers).NotTo(BeEmpty())
		proxy := realnode.NewTamperingProxy(node.Registry.Addr, layers[0])
		defer proxy.Close()
		_, err = realnode.VerifyImages(ctx, tool, key, list, proxy.Addr())
		Expect(err).To(MatchError(And(ContainSubstring("REFUSED"), ContainSubstring("layer 0"),
			ContainSubstring("error verifying sha256 checksum"))))
		Expect(proxy.Tampered()).To(BeNumerically(">", 0))
	})
}
