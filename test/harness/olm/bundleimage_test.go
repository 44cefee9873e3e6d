package olm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/seed1b407122/database-operator/test/harness/proc"
)

var _ = Describe("Bundle images", Label("unit"), func() {
	const image = "quay.io/org/pkg-bundle@sha256:0123"

	DescribeTable("parses a mirror",
		func(in string, want ImageMirror, wantErr string) {
			got, err := ParseImageMirror(in)
			if wantErr != "" {
				Expect(err).To(MatchError(ContainSubstring(wantErr)))
				return
			}
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(want))
		},
		Entry("none", "", ImageMirror{}, ""),
		Entry("a host and a registry", "quay.io=10.89.0.1:5000", ImageMirror{Public: "quay.io", Pull: "10.89.0.1:5000"}, ""),
		Entry("no registry", "quay.io=", ImageMirror{}, "want PUBLIC_HOST=HOST:PORT"),
		Entry("no separator", "quay.io", ImageMirror{}, "want PUBLIC_HOST=HOST:PORT"),
	)

	DescribeTable("pulls an image through the mirror of its host only",
		func(m ImageMirror, ref string, flags []string) {
			gotRef, gotFlags := m.pullRef(image)
			Expect(gotRef).To(Equal(ref))
			Expect(gotFlags).To(Equal(flags))
		},
		Entry("no mirror", ImageMirror{}, image, nil),
		Entry("its host's mirror, plain HTTP", ImageMirror{Public: "quay.io", Pull: "127.0.0.1:5000"}, "127.0.0.1:5000/org/pkg-bundle@sha256:0123", []string{"--use-http"}),
		Entry("another host's mirror", ImageMirror{Public: "docker.io", Pull: "127.0.0.1:5000"}, image, nil),
		Entry("a host that only prefixes its host", ImageMirror{Public: "quay", Pull: "127.0.0.1:5000"}, image, nil),
	)

	DescribeTable("accepts only the bundle rendered from its image",
		func(blob map[string]any, wantErr string) {
			raw, err := json.Marshal(blob)
			Expect(err).NotTo(HaveOccurred())
			err = checkImage(raw, &Bundle{Package: "pkg", CSVName: "pkg.v1.0.0"}, image)
			if wantErr == "" {
				Expect(err).NotTo(HaveOccurred())
			} else {
				Expect(err).To(MatchError(ContainSubstring(wantErr)))
			}
		},
		Entry("the bundle, by its image", map[string]any{"schema": "olm.bundle", "name": "pkg.v1.0.0", "package": "pkg", "image": image}, ""),
		Entry("named by the mirror", map[string]any{"schema": "olm.bundle", "name": "pkg.v1.0.0", "package": "pkg", "image": "127.0.0.1:5000/org/pkg-bundle@sha256:0123"}, `with image "127.0.0.1:5000`),
		Entry("inline", map[string]any{"schema": "olm.bundle", "name": "pkg.v1.0.0", "package": "pkg", "image": ""}, `with image ""`),
		Entry("another CSV", map[string]any{"schema": "olm.bundle", "name": "pkg.v2.0.0", "package": "pkg", "image": image}, `"pkg.v2.0.0"`),
	)

	It("refuses a bundle image named by tag", func(ctx SpecContext) {
		_, err := UnpackBundleImage(ctx, "opm", "quay.io/org/pkg-bundle:v1.0.0", ImageMirror{})
		Expect(err).To(MatchError(ContainSubstring("name it by digest")))
	})

	It("unpacks bundle/'s image from a registry and renders its catalog naming the image by digest (opm, image-tool's registry)", func(ctx SpecContext) {
		opm, tool := os.Getenv("OPM"), os.Getenv("IMAGE_TOOL")
		if opm == "" || tool == "" {
			Skip(`$OPM or $IMAGE_TOOL is not set; "make olm-test" sets them`)
		}
		dir := GinkgoT().TempDir()
		const repo = "quay.io/seed1b407122/database-operator-bundle"
		layout := filepath.Join(dir, "layout")
		out, err := exec.CommandContext(ctx, tool, "bundle", "--dir", repoBundle, "--tag", repo+":test", "--layout", layout).Output()
		Expect(err).NotTo(HaveOccurred())
		fields := strings.Fields(string(out))
		Expect(len(fields)).To(BeNumerically(">=", 2))
		image := repo + "@" + fields[1]

		ready := filepath.Join(dir, "ready")
		reg, err := proc.Start("registry", tool, []string{"registry", "--addr", "127.0.0.1:0", "--ready", ready,
			"--push", layout + "=seed1b407122/database-operator-bundle:test"}, proc.Options{LogPath: filepath.Join(dir, "registry.log")})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(reg.Stop)
		Eventually(ready).WithContext(ctx).Should(BeAnExistingFile())
		data, err := os.ReadFile(ready)
		Expect(err).NotTo(HaveOccurred())
		addr, _, _ := bufio.NewReader(bytes.NewReader(data)).ReadLine()
		m := ImageMirror{Public: "quay.io", Pull: string(addr)}

		b, err := UnpackBundleImage(ctx, opm, image, m)
		Expect(err).NotTo(HaveOccurred())
		want, err := ReadBundle(repoBundle)
		Expect(err).NotTo(HaveOccurred())
		Expect(b).To(Equal(want))

		fbc, err := RenderBundleImageCatalog(ctx, opm, image, m, b, filepath.Join(dir, "catalog"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(fbc)).NotTo(ContainSubstring(string(addr)), "the catalog names the images as users pull them")
		var bundles []renderedBundle
		dec := json.NewDecoder(bytes.NewReader(fbc))
		for dec.More() {
			var r renderedBundle
			Expect(dec.Decode(&r)).To(Succeed())
			if r.Schema == "olm.bundle" {
				bundles = append(bundles, r)
			}
		}
		Expect(bundles).To(HaveLen(1))
		Expect(bundles[0].Name).To(Equal(want.CSVName))
		Expect(bundles[0].Image).To(Equal(image))
		Expect(bundles[0].Properties).To(ContainElement(HaveField("Type", "olm.bundle.object")), "OLM reads the CSV from the catalog before it unpacks")
		Expect(os.ReadFile(filepath.Join(dir, "catalog", want.Package, catalogFile))).To(Equal(fbc))
	})
})
