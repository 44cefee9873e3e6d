package olm

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

const repoBundle = "../../../bundle"

// writeBundle writes a minimal bundle directory: annotations and a CSV.
func writeBundle(annotations, csv string) string {
	dir := GinkgoT().TempDir()
	Expect(WriteMinimalBundle(dir, annotations, csv)).To(Succeed())
	return dir
}

var _ = Describe("Bundle directories", Label("unit"), func() {
	It("reads the repository's bundle/", func() {
		b, err := ReadBundle(repoBundle)
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Package).To(Equal("database-operator"))
		Expect(b.CSVName).To(HavePrefix("database-operator.v"))
		Expect(b.Channels).To(Equal([]string{"candidate-v0", "stable"}))
		Expect(b.DefaultChannel).To(Equal("candidate-v0"))
		Expect(b.InstallModes).To(Equal(map[string]bool{
			"OwnNamespace": true, "SingleNamespace": true, "MultiNamespace": true, "AllNamespaces": true,
		}))
	})

	It("takes the only channel as the default", func() {
		dir := writeBundle("annotations:\n  operators.operatorframework.io.bundle.package.v1: pkg\n  operators.operatorframework.io.bundle.channels.v1: fast\n", MinimalCSV)
		b, err := ReadBundle(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(*b).To(Equal(Bundle{Package: "pkg", CSVName: "pkg.v1.0.0", Channels: []string{"fast"}, DefaultChannel: "fast",
			InstallModes: map[string]bool{"OwnNamespace": true, "AllNamespaces": false}}))
	})

	It("refuses a default channel that is not one of the bundle's", func() {
		dir := writeBundle("annotations:\n  operators.operatorframework.io.bundle.package.v1: pkg\n"+
			"  operators.operatorframework.io.bundle.channels.v1: fast,stable\n"+
			"  operators.operatorframework.io.bundle.channel.default.v1: candidate\n", MinimalCSV)
		_, err := ReadBundle(dir)
		Expect(err).To(MatchError(ContainSubstring(`annotations need a package, channels and a default channel among them (got package "pkg", channels [fast stable], default "candidate")`)))
	})

	It("refuses a bundle without a CSV", func() {
		dir := writeBundle("annotations:\n  operators.operatorframework.io.bundle.package.v1: pkg\n  operators.operatorframework.io.bundle.channels.v1: fast\n",
			"apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n")
		_, err := ReadBundle(dir)
		Expect(err).To(MatchError(ContainSubstring("no named ClusterServiceVersion in")))
	})
})

var _ = Describe("The one-bundle catalog", Label("unit"), func() {
	b := &Bundle{Package: "pkg", CSVName: "pkg.v1.0.0", Channels: []string{"fast", "stable"}, DefaultChannel: "stable"}
	inline := `{"schema":"olm.bundle","name":"pkg.v1.0.0","package":"pkg","image":"","properties":[{"type":"olm.package","value":{"packageName":"pkg","version":"1.0.0"}},{"type":"olm.bundle.object","value":{"data":"e30="}}]}`

	It("is a package, one channel per bundle channel with only this CSV, and the bundle", func() {
		fbc, err := catalogFor(b, json.RawMessage(inline))
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Split(strings.TrimSpace(string(fbc)), "\n")).To(Equal([]string{
			`{"schema":"olm.package","name":"pkg","defaultChannel":"stable"}`,
			`{"schema":"olm.channel","package":"pkg","name":"fast","entries":[{"name":"pkg.v1.0.0"}]}`,
			`{"schema":"olm.channel","package":"pkg","name":"stable","entries":[{"name":"pkg.v1.0.0"}]}`,
			inline,
		}))
	})

	DescribeTable("accepts only a bundle whose manifests are inline",
		func(blob, want string) {
			err := checkInline(json.RawMessage(blob), b)
			if want == "" {
				Expect(err).NotTo(HaveOccurred())
				return
			}
			Expect(err).To(MatchError(want))
		},
		Entry("inline", inline, ""),
		Entry("an image to unpack", strings.Replace(inline, `"image":""`, `"image":"quay.io/x/pkg-bundle:v1"`, 1),
			`the bundle has image "quay.io/x/pkg-bundle:v1": OLM would unpack it instead of reading it inline`),
		Entry("no objects", strings.Replace(inline, `olm.bundle.object`, `olm.bundle.mediatype`, 1),
			"the bundle has no olm.bundle.object properties: its manifests are not inline"),
		Entry("another bundle", strings.Replace(inline, `"name":"pkg.v1.0.0"`, `"name":"pkg.v2.0.0"`, 1),
			`rendered olm.bundle "pkg.v2.0.0" of package "pkg", want olm.bundle "pkg.v1.0.0" of package "pkg"`),
	)

	It("renders bundle/ with opm into a valid catalog with the manifests inline", func() {
		opm := os.Getenv("OPM")
		if opm == "" {
			Skip(`$OPM is not set; "make olm-test" sets it`)
		}
		out := GinkgoT().TempDir()
		got, fbc, err := RenderBundleCatalog(context.Background(), opm, repoBundle, out)
		Expect(err).NotTo(HaveOccurred())
		want, err := ReadBundle(repoBundle)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(want))
		Expect(os.ReadFile(filepath.Join(out, "database-operator", "catalog.json"))).To(Equal(fbc))

		var docs []map[string]any
		dec := json.NewDecoder(bytes.NewReader(fbc))
		for dec.More() {
			var d map[string]any
			Expect(dec.Decode(&d)).To(Succeed())
			docs = append(docs, d)
		}
		Expect(docs).To(HaveLen(4))
		Expect(docs[0]).To(Equal(map[string]any{"schema": "olm.package", "name": "database-operator", "defaultChannel": "candidate-v0"}))
		for i, ch := range []string{"candidate-v0", "stable"} {
			Expect(docs[1+i]).To(Equal(map[string]any{"schema": "olm.channel", "package": "database-operator", "name": ch,
				"entries": []any{map[string]any{"name": want.CSVName}}}))
		}
		Expect(docs[3]).To(HaveKeyWithValue("schema", "olm.bundle"))
		Expect(docs[3]).To(HaveKeyWithValue("name", want.CSVName))
		Expect(docs[3]).To(HaveKeyWithValue("image", ""))
		// Every manifest of bundle/manifests is in the catalog.
		manifests, err := os.ReadDir(filepath.Join(repoBundle, "manifests"))
		Expect(err).NotTo(HaveOccurred())
		Expect(docs[3]["properties"]).To(ContainElements(HaveKeyWithValue("type", "olm.bundle.object")))
		objects := 0
		for _, p := range docs[3]["properties"].([]any) {
			if p.(map[string]any)["type"] == "olm.bundle.object" {
				objects++
			}
		}
		Expect(objects).To(Equal(len(manifests)))
	})
})
