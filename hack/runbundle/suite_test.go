package runbundle

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// TestRunBundle runs the unit specs of "make run-bundle" / "make cleanup-bundle" against a fake
// API server: what Run creates, what Cleanup removes and what it leaves alone. The
// real OLM installing the bundle this way is test/olme2e's part.
func TestRunBundle(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "run-bundle")
}
