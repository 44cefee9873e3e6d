package olm

import (
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// releasedBundle is the released bundle the upgrade suites install first.
var releasedBundle = filepath.Join("..", "..", "..", "hack", "olm", "released", "0.3.0")

var _ = Describe("The CSV of a bundle directory and its examples", Label("unit"), func() {
	It("reads the released bundle's CSV and its etcd example, a new object at each call", func() {
		csv, err := ReadCSV(releasedBundle)
		Expect(err).NotTo(HaveOccurred())
		Expect(csv.GetName()).To(Equal("database-operator.v0.3.0"))
		example, err := Example(csv, "DatabaseCluster", "etcd-sample")
		Expect(err).NotTo(HaveOccurred())
		Expect(example.GetAPIVersion()).To(Equal("database.seed1b407122.io/v1alpha1"))
		replicas, found, err := unstructured.NestedInt64(example.Object, "spec", "replicas")
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue(), "the example's spec.replicas")
		Expect(replicas).To(BeNumerically(">", 0))

		example.SetNamespace("a")
		again, err := Example(csv, "DatabaseCluster", "etcd-sample")
		Expect(err).NotTo(HaveOccurred())
		Expect(again.GetNamespace()).To(BeEmpty(), "an example changed by one caller is not the next one's")
	})

	It("names what it cannot find", func() {
		csv, err := ReadCSV(writeBundle("annotations: {}\n", MinimalCSV))
		Expect(err).NotTo(HaveOccurred())
		_, err = Example(csv, "DatabaseCluster", "etcd-sample")
		Expect(err).To(MatchError(ContainSubstring("parsing the alm-examples of pkg.v1.0.0")))

		csv.SetAnnotations(map[string]string{"alm-examples": `[{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "etcd-sample"}}]`})
		_, err = Example(csv, "DatabaseCluster", "etcd-sample")
		Expect(err).To(MatchError("the alm-examples of pkg.v1.0.0 hold no DatabaseCluster etcd-sample"))

		_, err = ReadCSV(GinkgoT().TempDir())
		Expect(err).To(MatchError(ContainSubstring("reading the manifests")))
	})
})
