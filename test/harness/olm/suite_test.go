package olm

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// TestOLM runs the unit specs of the package: builders, install modes, status messages, the
// catalog rendering (with the real opm when $OPM is set, as "make olm-test" does) and the
// install steps against a fake API server. What OLM itself does with all of
// it is test/olme2e's part.
func TestOLM(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "OLM harness")
}
