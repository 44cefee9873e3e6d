# OLM end-to-end test: a real Operator Lifecycle Manager (cmd/olm and cmd/catalog of
# operator-lifecycle-manager, pinned with the other OLM tools in hack/olm/go.mod) installs the
# operator from catalog/ on the local control plane, and upgrades it 0.1.0 -> 0.2.0.
# No container runtime: OLM runs as host processes, catalog-serve (opm serve's registry on
# 127.0.0.1) answers its gRPC queries, kwok runs the pods, and the manager runs on the host as
# OLM's ServiceAccount. The suite also runs "make run-bundle" and "make cleanup-bundle".
# OLM, the catalog server and the install steps come from package test/harness/olm.
#
#   make olm-e2e     # test/olme2e (build tag "olm"); first run builds OLM (~4 min warm cache)
#
# This file is self-contained (it is included before mk/olm.mk): it computes its own cache key.

##@ OLM e2e

# OLM's binaries and CRDs are built once per machine into a directory keyed by hack/olm/go.sum.
OLM_RUNTIME_HASH := $(shell sha256sum hack/olm/go.sum 2>/dev/null | cut -c1-12)
OLM_RUNTIME_DIR ?= $(CACHE_DIR)/olm-runtime-$(OLM_RUNTIME_HASH)
OLM_RUNTIME_PKG := github.com/operator-framework/operator-lifecycle-manager
# Ginkgo flags of the OLM suite, and the file-based catalog it serves (rendered by "make catalog").
OLM_E2E_GINKGO_FLAGS ?= -v --no-color --timeout=20m
OLM_E2E_CATALOG_DIR ?= $(CURDIR)/catalog

.PHONY: olm-runtime
olm-runtime: $(OLM_RUNTIME_DIR)/.stamp ## Build OLM's olm and catalog binaries (+ its CRDs) once per machine.

# The CRDs are OLM's own (deploy/chart/crds, which has OLMConfig), copied from the module
# cache so that they always match the binaries. "go mod download -json" fetches the module and
# prints its Dir; "go list -m -f {{.Dir}}" prints an empty Dir while the module is not yet in the
# module cache (a fresh machine), which made this recipe copy from /deploy/chart/crds.
$(OLM_RUNTIME_DIR)/.stamp:
	@set -e; start=$$(date +%s); dir=$(OLM_RUNTIME_DIR); \
	cd $(CURDIR)/hack/olm; export GOWORK=off; \
	version=$$(go list -m -f '{{.Version}}' $(OLM_RUNTIME_PKG)); \
	src=$$(go mod download -json $(OLM_RUNTIME_PKG) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p'); \
	test -d "$$src/deploy/chart/crds" || { echo "OLM module $$version not downloaded (Dir='$$src')"; exit 1; }; \
	echo "Building OLM $$version (olm, catalog) into $$dir (cold: ~4-8 min)"; \
	rm -rf $$dir.tmp; mkdir -p $$dir.tmp/crds; \
	go build -ldflags "-s -w -X $(OLM_RUNTIME_PKG)/pkg/version.OLMVersion=$$version" -o $$dir.tmp/ \
		$(OLM_RUNTIME_PKG)/cmd/olm $(OLM_RUNTIME_PKG)/cmd/catalog; \
	cp $$src/deploy/chart/crds/*.yaml $$dir.tmp/crds/; chmod -R u+w $$dir.tmp; \
	echo "OLM $$version built in $$(( $$(date +%s) - start ))s" > $$dir.tmp/.stamp; \
	rm -rf $$dir; mv $$dir.tmp $$dir; cat $$dir/.stamp

.PHONY: olm-e2e
olm-e2e: build test-env opm catalog-serve olm-runtime $(GINKGO) ## OLM installs catalog/ (OwnNamespace, AllNamespaces), upgrade 0.1.0 -> 0.2.0, manager as OLM's ServiceAccount; make run-bundle / cleanup-bundle.
	OLM_BIN_DIR=$(OLM_RUNTIME_DIR) OPM=$(OPM) CATALOG_SERVE=$(CATALOG_SERVE) MANAGER_BIN=$(LOCALBIN)/manager \
		CATALOG_DIR=$(OLM_E2E_CATALOG_DIR) $(GINKGO) $(OLM_E2E_GINKGO_FLAGS) --tags olm ./test/olme2e
