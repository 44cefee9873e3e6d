# The real-node tier's tests (test/realnode, build tags "node"): one real node (Debian's
# containerd + runc + CNI bridge, kubelet and kube-proxy from hack/node, CoreDNS) beside the local
# control plane, running the operand images for real. Needs root; without it the suite says why
# it skips. Builds with mk/node.mk's test-env-node.
#
#   make test-node        # ~5 min after the first build of test-env-node

##@ Real node tier

# Ginkgo flags of the real-node suite.
NODE_GINKGO_FLAGS ?= -v --no-color --timeout=40m

.PHONY: test-node
test-node: build test-env test-env-node $(GINKGO) ## Real node: a retained single-member store scaled 1-3-1-3, a 3-member etcd rolled, restarted, resized; host restored.
	@if [ "$$(id -u)" != 0 ]; then echo "Real-node tier skipped: it needs root (running as $$(id -un))."; exit 0; fi; \
	MANAGER_BIN=$(LOCALBIN)/manager $(GINKGO) $(NODE_GINKGO_FLAGS) --tags node ./test/realnode
