# Images without a Docker engine: the operator, bundle and catalog images are assembled with
# go-containerregistry as a library (hack/images, its own module; the operator's go.mod never sees
# it) and written as OCI layouts + docker-archive tarballs under $(IMAGES_DIR).
#
#   make image-build                               # static manager -> bin/images/operator{,.tar}
#   make bundle-image-build catalog-image-build    # bundle/ and catalog/ -> bin/images/{bundle,catalog}{,.tar}
#   make images-push REGISTRY=127.0.0.1:5000       # push all three (REGISTRY/IMG, REGISTRY/BUNDLE_IMG, ...)
#   make images-test                               # push to an in-process registry, read back, opm render
#
# The operator image: the manager built like the Dockerfile (CGO_ENABLED=0, -trimpath, -s -w) as
# /manager on an empty base (static binary: no shell, no /etc/passwd), USER 65532:65532,
# WORKDIR /, ENTRYPOINT ["/manager"] and the Dockerfile's labels (read from its final stage).
# The bundle image: bundle/ at /, labelled with every annotation of bundle/metadata/annotations.yaml.
# The catalog image: catalog/ at /configs, labelled like catalog.Dockerfile. Its real base, the opm
# image, is unreachable here, so without CATALOG_BASE_IMG the image carries only the configs layer
# (enough for registry-side tests and "opm render"); "make catalog-build" (Docker) uses the opm base.
# Set CATALOG_BASE_IMG to an opm image in a reachable registry to layer /configs on top of it.
# Images are reproducible: timestamps are SOURCE_DATE_EPOCH (default: the epoch).

##@ Images (no Docker)

IMAGES_DIR ?= $(LOCALBIN)/images
# GOARCH of the operator image (GOOS is linux).
ARCH ?= $(shell go env GOARCH)
MANAGER_STATIC ?= $(IMAGES_DIR)/manager-linux-$(ARCH)
# Registry host[:port] the *-push targets prefix to IMG, BUNDLE_IMG and CATALOG_IMG; empty: push
# to those names as they are. Loopback registries are spoken to over plain HTTP.
REGISTRY ?=
# Base of the no-Docker catalog image (an opm image in a reachable registry); empty: none.
CATALOG_BASE_IMG ?=
# Flags of "go test" in images-test, e.g. IMAGES_TEST_FLAGS='-run TestImages/bundle'.
IMAGES_TEST_FLAGS ?=

IMAGES_GO = cd $(CURDIR)/hack/images && GOWORK=off go
# Environment of the tests: the opm binary, the static manager, and the image version/arch.
IMAGES_TEST_ENV = OPM=$(OPM) MANAGER_BIN=$(MANAGER_STATIC) VERSION=$(VERSION) ARCH=$(ARCH)
IMAGE_TOOL ?= $(LOCALBIN)/image-tool
IMAGE_TOOL_SRCS := hack/images/go.mod hack/images/go.sum \
	$(filter-out %_test.go,$(wildcard hack/images/*.go hack/images/cmd/image-tool/*.go))
push-ref = $(if $(REGISTRY),$(REGISTRY)/$(1),$(1))

$(IMAGE_TOOL): $(IMAGE_TOOL_SRCS) | $(LOCALBIN)
	$(IMAGES_GO) build -o $(IMAGE_TOOL) ./cmd/image-tool

.PHONY: manager-static
manager-static: ## Build the manager like the Dockerfile: static (CGO_ENABLED=0), -trimpath, linux/ARCH.
	@mkdir -p $(IMAGES_DIR)
	CGO_ENABLED=0 GOOS=linux GOARCH=$(ARCH) go build -trimpath -ldflags="-s -w" -o $(MANAGER_STATIC) .

.PHONY: image-build
image-build: manager-static $(IMAGE_TOOL) ## Build the operator image IMG without Docker into bin/images/operator (OCI layout) and operator.tar.
	$(IMAGE_TOOL) operator --binary $(MANAGER_STATIC) --dockerfile Dockerfile --arch $(ARCH) \
		--tag $(IMG) --layout $(IMAGES_DIR)/operator --tarball $(IMAGES_DIR)/operator.tar

.PHONY: image-push
image-push: image-build ## Push the operator image to REGISTRY/IMG (e.g. REGISTRY=127.0.0.1:5000).
	$(IMAGE_TOOL) push --from $(IMAGES_DIR)/operator --push $(call push-ref,$(IMG))

.PHONY: bundle-image-build
bundle-image-build: $(IMAGE_TOOL) ## Build the bundle image BUNDLE_IMG from bundle/ without Docker into bin/images/bundle{,.tar}.
	$(IMAGE_TOOL) bundle --dir bundle --tag $(BUNDLE_IMG) \
		--layout $(IMAGES_DIR)/bundle --tarball $(IMAGES_DIR)/bundle.tar

.PHONY: bundle-image-push
bundle-image-push: bundle-image-build ## Push the bundle image to REGISTRY/BUNDLE_IMG.
	$(IMAGE_TOOL) push --from $(IMAGES_DIR)/bundle --push $(call push-ref,$(BUNDLE_IMG))

.PHONY: catalog-image-build
catalog-image-build: $(IMAGE_TOOL) ## Build the catalog image CATALOG_IMG (configs layer only, or on CATALOG_BASE_IMG) without Docker.
	$(IMAGE_TOOL) catalog --dir catalog --dockerfile catalog.Dockerfile \
		$(if $(CATALOG_BASE_IMG),--base $(CATALOG_BASE_IMG)) --tag $(CATALOG_IMG) \
		--layout $(IMAGES_DIR)/catalog --tarball $(IMAGES_DIR)/catalog.tar

.PHONY: catalog-image-push
catalog-image-push: catalog-image-build ## Push the catalog image to REGISTRY/CATALOG_IMG.
	$(IMAGE_TOOL) push --from $(IMAGES_DIR)/catalog --push $(call push-ref,$(CATALOG_IMG))

.PHONY: images-build
images-build: image-build bundle-image-build catalog-image-build ## Build the three images without Docker.

.PHONY: images-push
images-push: image-push bundle-image-push catalog-image-push ## Push the three images to REGISTRY.

.PHONY: images-test
# "opm" (mk/olm.mk) builds $(OPM) once per machine; OPM is expanded in the recipe, as mk/olm.mk is
# included after this file.
images-test: manager-static opm ## Go tests of hack/images: build, push to an in-process registry, read back, opm render.
	cd $(CURDIR)/hack/images && $(IMAGES_TEST_ENV) GOWORK=off go test -count=1 -v -timeout 10m ./... $(IMAGES_TEST_FLAGS)
