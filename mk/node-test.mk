# The real-node tier's tests (test/nodee2e, build tag "node"; harness test/harness/realnode): one real node (Debian's
# containerd + runc + CNI bridge, kubelet and kube-proxy from hack/node, CoreDNS) beside the local
# control plane, running the operand images for real. Needs root; without it the suite says why
# it skips. Builds with mk/node.mk's test-env-node.
#
#   make test-node        # ~5 min after the first build of test-env-node

##@ Real node tier

# Ginkgo flags of the real-node suite.
NODE_GINKGO_FLAGS ?= -v --no-color --timeout=40m

.PHONY: test-node
test-node: test-env test-env-node catalog-serve olm-runtime $(GINKGO) ## Real node: OLM installs the operator into pods; a 3-member etcd rolled, restarted, resized, across an operator upgrade and a killed leader; a retained store scaled 1-3-1-3; host restored.
	@if [ "$$(id -u)" != 0 ]; then echo "Real-node tier skipped: it needs root (running as $$(id -un))."; exit 0; fi; \
	OLM_BIN_DIR=$(OLM_RUNTIME_DIR) CATALOG_SERVE=$(CATALOG_SERVE) $(GINKGO) $(NODE_GINKGO_FLAGS) --tags node ./test/nodee2e
