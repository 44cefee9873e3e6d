# The real-node tier: a kubelet with containerd running real containers (test/nodee2e). This
# file builds what it needs; the harness is test/harness/realnode, the suite test/nodee2e.
#
#   make test-env-node      kubelet, kube-proxy, etcd, coredns once per machine; the host packages
#                           (root only); the node images. Prints the paths the harness reads.
#   make node-images        the images as docker-archive tarballs + NODE_IMAGES_DIR/images.txt
#   make node-images-test   import every tarball into a throwaway containerd and run some (root)
#
# The binaries come from two tools modules (never the operator's go.mod): hack/node (kubelet and
# kube-proxy of k8s.io/kubernetes, the etcd operand) and hack/coredns (CoreDNS, whose dependencies
# clash with k8s.io/kubernetes in one module). They go to NODE_ENV_DIR, keyed by both go.sum
# files, so every clone on the machine shares one build. The host packages are Debian's
# containerd, runc and containernetworking-plugins (CNI plugins in /usr/lib/cni).
#
# NODE_ENV_DIR and NODE_IMAGES_DIR are exported to every recipe, so the node tests get them.

##@ Real node tier: build

NODE_HASH := $(shell cat hack/node/go.sum hack/coredns/go.sum 2>/dev/null | sha256sum | cut -c1-12)
NODE_ENV_DIR ?= $(CACHE_DIR)/node-env-$(KUBE_VERSION)-$(NODE_HASH)
NODE_IMAGES_DIR ?= $(LOCALBIN)/node-images
export NODE_ENV_DIR NODE_IMAGES_DIR

.PHONY: node-env
node-env: $(NODE_ENV_DIR)/.stamp ## Build kubelet, kube-proxy, etcd and coredns once per machine into NODE_ENV_DIR.

$(NODE_ENV_DIR)/.stamp: hack/node/go.mod hack/node/go.sum hack/coredns/go.mod hack/coredns/go.sum \
		hack/build-node-env.sh hack/kube-ldflags.sh
	hack/build-node-env.sh $(NODE_ENV_DIR)

.PHONY: test-env-node
test-env-node: node-env ## Node tier: binaries, host packages (apt-get, root only), images; prints the paths.
	@if [ "$$(id -u)" != 0 ]; then \
		echo "Real-node tier skipped: it needs root (containerd, kubelet, CNI, iptables); running as $$(id -un)."; \
		exit 0; fi; \
	hack/node/install-host-packages.sh && \
	$(MAKE) --no-print-directory node-images && \
	echo "NODE_ENV_DIR=$(NODE_ENV_DIR)  (kubelet kube-proxy etcd coredns)" && \
	echo "NODE_IMAGES_DIR=$(NODE_IMAGES_DIR)  (images.txt: <tarball> <image ref> per line)" && \
	echo "CONTAINERD=$$(command -v containerd) RUNC=$$(command -v runc) CNI_BIN_DIR=/usr/lib/cni"

.PHONY: node-images
# manager-static and $(IMAGE_TOOL) are defined in mk/images.mk (read before this file).
node-images: node-env manager-static $(IMAGE_TOOL) ## Build the node images (pause, etcd v1/v2, testdb, coredns, operator 0.1.0/0.2.0) into NODE_IMAGES_DIR.
	IMAGE_TOOL=$(IMAGE_TOOL) MANAGER_BIN=$(MANAGER_STATIC) ARCH=$(ARCH) hack/node/build-images.sh $(NODE_IMAGES_DIR)

.PHONY: node-images-test
node-images-test: node-images ## Unit tests of the test programs; import every node image into a throwaway containerd and run them (root).
	go test -count=1 ./test/harness/realnode/ ./test/harness/operands/...
	hack/node/images-test.sh $(NODE_IMAGES_DIR)
