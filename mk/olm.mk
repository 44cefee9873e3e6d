# OLM packaging: bundle, bundle validation, file-based catalog, and their tests.
# Tools live in their own module, hack/olm (operator-framework/api for the bundle generator and
# validators, operator-registry for opm); the operator's go.mod never sees them.
#
#   make bundle VERSION=0.2.0 PREVIOUS_VERSION=0.1.0   # bundle/ + bundle.Dockerfile (committed)
#   make bundle-validate                               # operatorframework suite: 0 errors, 0 warnings
#   make catalog catalog-validate                      # catalog/ (0.1.0 -> 0.2.0) + opm validate
#   make olm-test                                      # Go tests of hack/olm (builds opm once)
#   make bundle-build catalog-build                    # images; need a Docker engine
#   make run-bundle NAMESPACE=x / cleanup-bundle NAMESPACE=x   # operator-sdk run bundle / cleanup

##@ OLM

PACKAGE_NAME ?= database-operator
CHANNELS ?= stable
DEFAULT_CHANNEL ?= stable
# Version the bundle replaces (adds "replaces" and "olm.skipRange: <VERSION" to the CSV).
PREVIOUS_VERSION ?= 0.1.0
# The older bundle "make catalog" regenerates (from config/) next to bundle/ for the upgrade edge.
CATALOG_PREVIOUS_VERSION ?= 0.1.0
IMAGE_TAG_BASE ?= database-operator
# The operator image of the bundle: IMG when given on the command line or in the environment,
# else IMAGE_TAG_BASE tagged with the bundle's version.
OPERATOR_IMG ?= $(if $(filter command line environment,$(origin IMG)),$(IMG),$(IMAGE_TAG_BASE):$(VERSION))
BUNDLE_IMG ?= $(IMAGE_TAG_BASE)-bundle:$(VERSION)
CATALOG_IMG ?= $(IMAGE_TAG_BASE)-catalog:$(VERSION)
# Base image of the catalog image (opm generate dockerfile), pinned to the opm we build.
OPM_IMAGE ?= quay.io/operator-framework/opm:v1.74.0

# Go commands run inside the hack/olm module.
OLM_GO = cd $(CURDIR)/hack/olm && GOWORK=off go

# opm is built once per machine from hack/olm/go.mod into a directory keyed by hack/olm/go.sum
# (~6-8 min cold), like the control plane's TEST_ENV_DIR.
OLM_TOOLS_HASH := $(shell sha256sum hack/olm/go.sum 2>/dev/null | cut -c1-12)
OLM_TOOLS_DIR ?= $(CACHE_DIR)/olm-tools-$(OLM_TOOLS_HASH)
OPM ?= $(OLM_TOOLS_DIR)/opm
# opm serve's registry on 127.0.0.1 only (hack/olm/cmd/catalog-serve): opm serve binds every
# interface. Built next to opm; rebuilt when its source changes.
CATALOG_SERVE ?= $(OLM_TOOLS_DIR)/catalog-serve

.PHONY: bundle
bundle: manifests $(KUSTOMIZE) ## Generate bundle/ and bundle.Dockerfile (VERSION, PREVIOUS_VERSION, CHANNELS, DEFAULT_CHANNEL), then validate.
	$(KUSTOMIZE) build config/manifests | ($(OLM_GO) run ./cmd/bundle-gen \
		--package $(PACKAGE_NAME) --version $(VERSION) --previous-version "$(PREVIOUS_VERSION)" \
		--channels $(CHANNELS) --default-channel $(DEFAULT_CHANNEL) --image $(OPERATOR_IMG) \
		--output-dir $(CURDIR)/bundle --dockerfile $(CURDIR)/bundle.Dockerfile)
	$(MAKE) --no-print-directory bundle-validate

.PHONY: bundle-validate
bundle-validate: ## Validate bundle/ (default + operatorframework suite); fails on any error or warning.
	$(OLM_GO) run ./cmd/bundle-validate $(CURDIR)/bundle

.PHONY: bundle-build
bundle-build: ## Build the bundle image BUNDLE_IMG (needs a Docker engine).
	docker build -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: bundle-push
bundle-push: ## Push the bundle image BUNDLE_IMG (needs a Docker engine).
	docker push $(BUNDLE_IMG)

.PHONY: opm
opm: $(OPM) ## Build opm (operator-registry, pinned in hack/olm/go.mod) once per machine.

$(OPM):
	mkdir -p $(OLM_TOOLS_DIR)
	$(OLM_GO) build -tags=json1,containers_image_openpgp -ldflags '-s -w' -o $(OPM).tmp \
		github.com/operator-framework/operator-registry/cmd/opm
	mv $(OPM).tmp $(OPM)

.PHONY: catalog-serve
catalog-serve: $(CATALOG_SERVE) ## Build catalog-serve (opm serve's registry, on 127.0.0.1 only) next to opm.

$(CATALOG_SERVE): hack/olm/cmd/catalog-serve/main.go hack/olm/go.sum
	mkdir -p $(OLM_TOOLS_DIR)
	$(OLM_GO) build -tags=json1,containers_image_openpgp -ldflags '-s -w' -o $(CATALOG_SERVE).tmp ./cmd/catalog-serve
	mv $(CATALOG_SERVE).tmp $(CATALOG_SERVE)

.PHONY: catalog
catalog: $(OPM) $(KUSTOMIZE) ## Render catalog/ from bundle CATALOG_PREVIOUS_VERSION (regenerated from config/) and bundle/.
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	echo "Generating bundle $(CATALOG_PREVIOUS_VERSION) into $$tmp"; \
	$(KUSTOMIZE) build config/manifests | ($(OLM_GO) run ./cmd/bundle-gen \
		--package $(PACKAGE_NAME) --version $(CATALOG_PREVIOUS_VERSION) \
		--channels $(CHANNELS) --default-channel $(DEFAULT_CHANNEL) \
		--image $(IMAGE_TAG_BASE):$(CATALOG_PREVIOUS_VERSION) --output-dir $$tmp/bundle); \
	$(OLM_GO) run ./cmd/bundle-validate $$tmp/bundle; \
	echo "Rendering catalog/$(PACKAGE_NAME)/index.yaml with $(OPM)"; \
	$(OLM_GO) run ./cmd/catalog-gen --opm $(OPM) --package $(PACKAGE_NAME) --channel $(DEFAULT_CHANNEL) \
		--output $(CURDIR)/catalog/$(PACKAGE_NAME)/index.yaml $$tmp/bundle $(CURDIR)/bundle
	rm -f catalog.Dockerfile
	$(OPM) generate dockerfile catalog -i $(OPM_IMAGE) -b $(OPM_IMAGE)
	$(MAKE) --no-print-directory catalog-validate

.PHONY: catalog-validate
catalog-validate: $(OPM) ## Validate catalog/ with opm.
	$(OPM) validate catalog
	@echo "catalog/ is valid."

.PHONY: catalog-build
catalog-build: ## Build the catalog image CATALOG_IMG (needs a Docker engine).
	docker build -f catalog.Dockerfile -t $(CATALOG_IMG) .

.PHONY: catalog-push
catalog-push: ## Push the catalog image CATALOG_IMG (needs a Docker engine).
	docker push $(CATALOG_IMG)

.PHONY: olm-test
olm-test: export OPM := $(OPM)
olm-test: export KUSTOMIZE := $(KUSTOMIZE)
olm-test: $(OPM) $(KUSTOMIZE) ## Go tests of hack/olm (validators, bundle determinism and freshness, catalog) , of test/harness/olm and of hack/runbundle (run-bundle).
	$(OLM_GO) test -count=1 ./...
	go test -count=1 ./test/harness/olm/... ./hack/runbundle/...

##@ OLM: run the bundle

# make run-bundle NAMESPACE=<ns>: install bundle/ through the OLM of the cluster in KUBECONFIG,
# as "operator-sdk run bundle" does; make cleanup-bundle NAMESPACE=<ns> removes it again.
NAMESPACE ?=
# OwnNamespace, AllNamespaces, SingleNamespace=<ns> or MultiNamespace=<ns1>,<ns2>.
INSTALL_MODE ?= OwnNamespace
# host: the catalog is served from this machine on 127.0.0.1, for OLM running on this machine
# (the OLM e2e's host processes). cluster: from a Deployment of OPM_IMAGE in NAMESPACE, for OLM
# running in the cluster.
CATALOG_MODE ?= host
RUN_BUNDLE_TIMEOUT ?= 5m
# Per namespace: the rendered catalog, the host catalog server's log and pidfile, the state.
RUN_BUNDLE_STATE_DIR ?= $(CURDIR)/.run-bundle
RUN_BUNDLE_BUNDLE_DIR ?= $(CURDIR)/bundle
RUN_BUNDLE_PORT ?= 0
RUN_BUNDLE_FLAGS = --namespace "$(NAMESPACE)" --bundle-dir $(RUN_BUNDLE_BUNDLE_DIR) \
	--state-dir $(RUN_BUNDLE_STATE_DIR) --timeout $(RUN_BUNDLE_TIMEOUT)

.PHONY: run-bundle
run-bundle: $(OPM) $(if $(filter host,$(CATALOG_MODE)),$(CATALOG_SERVE)) | $(LOCALBIN) ## Install bundle/ through OLM into NAMESPACE (INSTALL_MODE, CATALOG_MODE=host|cluster) and wait for the CSV.
	@test -n "$(NAMESPACE)" || { echo "Set NAMESPACE, e.g. make run-bundle NAMESPACE=database-operator"; exit 2; }
	go build -o $(LOCALBIN)/run-bundle ./hack/runbundle/cmd/run-bundle
	$(LOCALBIN)/run-bundle install $(RUN_BUNDLE_FLAGS) --install-mode $(INSTALL_MODE) \
		--catalog-mode $(CATALOG_MODE) --opm $(OPM) --catalog-serve $(CATALOG_SERVE) \
		--port $(RUN_BUNDLE_PORT) --opm-image $(OPM_IMAGE)

.PHONY: cleanup-bundle
cleanup-bundle: | $(LOCALBIN) ## Remove what run-bundle installed in NAMESPACE (Subscription, CSV, CatalogSource, OperatorGroup) and stop its catalog server.
	@test -n "$(NAMESPACE)" || { echo "Set NAMESPACE, e.g. make cleanup-bundle NAMESPACE=database-operator"; exit 2; }
	go build -o $(LOCALBIN)/run-bundle ./hack/runbundle/cmd/run-bundle
	$(LOCALBIN)/run-bundle cleanup $(RUN_BUNDLE_FLAGS)
