# database-operator Makefile. Target names follow kubebuilder / Operator SDK projects.

# Version of the operator (bundle, image tags): the version bundle/ holds. 0.2.0 replaces 0.1.0.
VERSION ?= 0.2.0
# Image of the operator.
IMG ?= database-operator:$(VERSION)

SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

# Tools the project installs into ./bin (pinned; "go install" through the module proxy).
LOCALBIN ?= $(shell pwd)/bin
CONTROLLER_TOOLS_VERSION ?= v0.23.0
# kustomize v5.8.3 needs Go 1.27: stay on v5.8.1 while the machine has Go 1.26.
KUSTOMIZE_VERSION ?= v5.8.1
GOLANGCI_LINT_VERSION ?= v2.15.0
GINKGO_VERSION ?= $(shell go list -m -f '{{.Version}}' github.com/onsi/ginkgo/v2)
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
KUSTOMIZE ?= $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
GINKGO ?= $(LOCALBIN)/ginkgo-$(GINKGO_VERSION)

# The per-machine cache: every tool built from a pinned tools module (control plane, opm, OLM,
# real-node binaries) goes to a directory under it keyed by the module's go.sum, so every clone on
# the machine shares one build. "make test-fresh-machine" points it at an empty directory.
CACHE_DIR ?= $(HOME)/.cache/database-operator

# The local control plane (kube-apiserver, etcd, KCM, scheduler, kwok) is built once per machine
# from hack/tools/go.mod into a directory keyed by that file, so a fresh clone reuses it.
KUBE_VERSION ?= v1.37.1
TOOLS_HASH := $(shell sha256sum hack/tools/go.sum 2>/dev/null | cut -c1-12)
TEST_ENV_DIR ?= $(CACHE_DIR)/test-env-$(KUBE_VERSION)-$(TOOLS_HASH)
export KUBEBUILDER_ASSETS = $(TEST_ENV_DIR)

# Ginkgo flags of the envtest suites.
GINKGO_FLAGS ?= -v --no-color --timeout=20m

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC from the markers in api/ and controllers/.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd paths="./api/..." paths="./controllers/..." \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate the DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## Run gofmt on the project.
	gofmt -l -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet (also on the files behind the e2e, olm and node build tags).
	go vet -tags e2e ./...
	go vet -tags olm ./test/olme2e/
	go vet -tags node ./test/nodee2e/

# Tools modules with their own go.mod, linted with the same configuration.
LINT_MODULES ?= hack/olm hack/helm hack/images

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint on the operator and on the tools modules.
	$(GOLANGCI_LINT) run ./...
	$(GOLANGCI_LINT) run --build-tags node ./test/nodee2e/...
	for m in $(LINT_MODULES); do (cd $$m && GOWORK=off $(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml ./...) || exit 1; done

.PHONY: verify
verify: manifests generate ## Fail when generated files (CRDs, RBAC, deepcopy) or formatting drift.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@if [ -n "$$(git status --porcelain -- api config)" ]; then \
		echo "Generated files are out of date; run 'make manifests generate' and commit:"; \
		git status --porcelain -- api config; git --no-pager diff -- api config | head -50; exit 1; fi
	@echo "Generated files are current."

##@ Test

# The stages of "make test", in the order they run (hack/fresh-machine.sh times each one).
TEST_STAGES = verify vet lint test-unit test-integration test-e2e test-ha helm-test olm-test images-test \
	olm-e2e node-images-test test-node bench-smoke

.PHONY: test
test: $(TEST_STAGES) ## Everything CI runs.

.PHONY: print-test-stages
print-test-stages: ## Print the stages of "make test" in order.
	@echo $(TEST_STAGES)

.PHONY: test-fresh-machine
test-fresh-machine: ## Clone HEAD and run "make test" with empty module, build and tools caches; time each stage (cold: ~45-60 min).
	hack/fresh-machine.sh

.PHONY: test-unit
test-unit: $(GINKGO) ## Unit specs (label "unit"): pure builders and conditions, no API server; the harness's child processes.
	$(GINKGO) $(GINKGO_FLAGS) --label-filter=unit ./controllers/...
	go test -count=1 ./test/harness/proc/ ./test/harness/controlplane/

.PHONY: test-integration
test-integration: test-env $(GINKGO) ## envtest specs (label "integration") against a real kube-apiserver and etcd.
	$(GINKGO) $(GINKGO_FLAGS) --label-filter=integration ./controllers/...

.PHONY: test-e2e
test-e2e: build test-env $(GINKGO) $(KUSTOMIZE) ## e2e specs: the manager binary on the local control plane (simulated nodes).
	go test -tags e2e ./test/harness/controlplane/ -count=1 -v -timeout 10m
	MANAGER_BIN=$(LOCALBIN)/manager KUSTOMIZE=$(KUSTOMIZE) $(GINKGO) $(GINKGO_FLAGS) --tags e2e ./test/e2e

.PHONY: test-env
test-env: $(TEST_ENV_DIR)/.stamp ## Build the local control plane binaries once per machine.

$(TEST_ENV_DIR)/.stamp: hack/tools/go.mod hack/tools/go.sum hack/build-test-env.sh
	hack/build-test-env.sh $(TEST_ENV_DIR)

##@ Build

.PHONY: build
build: manifests generate ## Build the manager binary.
	go build -o $(LOCALBIN)/manager .

# Flags of the manager under "make run": no leader election, metrics and probes on loopback.
RUN_ARGS ?= --leader-elect=false --metrics-bind-address=127.0.0.1:8443 --health-probe-bind-address=127.0.0.1:8081
# Flags of hack/run itself, e.g. RUN_FLAGS=--apply-samples.
RUN_FLAGS ?=

.PHONY: run
run: manifests generate test-env ## Run the manager against KUBECONFIG, or start a local control plane.
	go build -o $(LOCALBIN)/run ./hack/run
	exec $(LOCALBIN)/run --manager $(LOCALBIN)/manager $(RUN_FLAGS) -- $(RUN_ARGS)

.PHONY: docker-build
docker-build: ## Build the operator image (needs a Docker engine).
	docker build -t $(IMG) .

##@ Deployment

.PHONY: install
install: manifests $(KUSTOMIZE) ## Install the CRDs into the cluster of KUBECONFIG.
	$(KUSTOMIZE) build config/crd | kubectl apply --server-side -f -

.PHONY: uninstall
uninstall: manifests $(KUSTOMIZE) ## Uninstall the CRDs (deletes every custom resource!).
	$(KUSTOMIZE) build config/crd | kubectl delete --ignore-not-found -f -

.PHONY: deploy
deploy: manifests $(KUSTOMIZE) ## Deploy the operator with kustomize to the cluster of KUBECONFIG.
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build config/default | kubectl apply --server-side -f -

.PHONY: undeploy
undeploy: $(KUSTOMIZE) ## Remove the operator deployed by "make deploy".
	$(KUSTOMIZE) build config/default | kubectl delete --ignore-not-found -f -

# Areas with many targets (OLM packaging, e2e tiers) live in mk/*.mk.
include $(wildcard mk/*.mk)

##@ Tools

$(LOCALBIN):
	mkdir -p $(LOCALBIN)

$(CONTROLLER_GEN): | $(LOCALBIN)
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))

$(KUSTOMIZE): | $(LOCALBIN)
	$(call go-install-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION))

$(GOLANGCI_LINT): | $(LOCALBIN)
	$(call go-install-tool,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

$(GINKGO): | $(LOCALBIN)
	$(call go-install-tool,$(GINKGO),github.com/onsi/ginkgo/v2/ginkgo,$(GINKGO_VERSION))

# go-install-tool installs $(2)@$(3) as the versioned file $(1).
define go-install-tool
@set -e; tmp=$$(mktemp -d); \
echo "Installing $(2)@$(3)"; \
GOBIN=$$tmp GOWORK=off go install $(2)@$(3); \
mv $$tmp/* $(1); rmdir $$tmp
endef
