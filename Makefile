# database-operator Makefile: one file, kubebuilder / Operator SDK target names. Every setting
# is in "Settings" at the top, so no target depends on the order of anything below.
# "make help" lists every target.

##@ Settings (override on the command line, e.g. make bundle VERSION=0.4.0)

# Version of the operator (bundle, image tags): the version bundle/ holds. 0.4.0 replaces 0.3.0.
VERSION ?= 0.4.0
# Image of the operator.
IMG ?= database-operator:$(VERSION)

SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

# Every Go command of every recipe, and of every script and test a recipe starts, builds static
# and -trimpath: the operator image's manager, OLM's and the real node's binaries need both, and
# with one setting everywhere, vet, lint, the tests, the fuzzer's deps and the local control plane
# share one compiled package in the Go build cache instead of compiling the same module once with
# cgo and once without (a new machine compiled the operator's dependencies twice and OLM's three
# times; docs/development.md, "One build setting").
export CGO_ENABLED = 0
export GOFLAGS := $(strip $(filter-out -trimpath,$(shell go env GOFLAGS)) -trimpath)

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

# The local control plane (kube-apiserver, etcd, KCM, scheduler, kwok), from hack/tools/go.mod.
KUBE_VERSION ?= v1.37.1
TOOLS_HASH := $(shell sha256sum hack/tools/go.sum 2>/dev/null | cut -c1-12)
TEST_ENV_DIR ?= $(CACHE_DIR)/test-env-$(KUBE_VERSION)-$(TOOLS_HASH)
export KUBEBUILDER_ASSETS = $(TEST_ENV_DIR)

# The local control plane's snapshot parts (snapshot-controller, VolumeSnapshot CRDs), from
# hack/snapshot/go.mod. Exported: test/harness/controlplane starts them when it is set.
SNAPSHOT_HASH := $(shell sha256sum hack/snapshot/go.sum 2>/dev/null | cut -c1-12)
SNAPSHOT_ENV_DIR ?= $(CACHE_DIR)/snapshot-$(SNAPSHOT_HASH)
export SNAPSHOT_ENV_DIR

# promtool (only that binary) from the Prometheus module pinned in hack/prometheus/go.mod, for
# "make test-rules". PROMETHEUS_GO: Go commands inside that module.
PROMETHEUS_HASH := $(shell sha256sum hack/prometheus/go.sum 2>/dev/null | cut -c1-12)
PROMETHEUS_ENV_DIR ?= $(CACHE_DIR)/prometheus-$(PROMETHEUS_HASH)
PROMTOOL ?= $(PROMETHEUS_ENV_DIR)/promtool
# The Prometheus server of the same module: the real node's Prometheus (make test-node).
PROMETHEUS_BIN ?= $(PROMETHEUS_ENV_DIR)/prometheus
PROMETHEUS_GO = cd $(CURDIR)/hack/prometheus && GOWORK=off go
# The alerts (the PrometheusRule kustomize, the chart and docs/metrics.md share) and the Grafana
# dashboard; the chart ships copies of both ("make helm-crds", checked by "make verify").
PROMETHEUS_RULE ?= config/prometheus/prometheusrule.yaml
GRAFANA_DASHBOARD ?= config/grafana/database-operator.json
# The Prometheus Operator's module, for its CRDs (example/prometheus-operator-crd): "make
# test-rules" checks the ServiceMonitors and PrometheusRules of kustomize and the chart against them.
PROMETHEUS_OPERATOR_MODULE ?= github.com/prometheus-operator/prometheus-operator@v0.85.0

# OLM's tools (opm, catalog-serve) and runtime (olm, catalog binaries + CRDs), from hack/olm/go.mod.
OLM_HASH := $(shell sha256sum hack/olm/go.sum 2>/dev/null | cut -c1-12)
OLM_TOOLS_DIR ?= $(CACHE_DIR)/olm-tools-$(OLM_HASH)
OLM_RUNTIME_DIR ?= $(CACHE_DIR)/olm-runtime-static-$(OLM_HASH)
OLM_RUNTIME_PKG := github.com/operator-framework/operator-lifecycle-manager
# opm is static (CGO_ENABLED=0: no sqlite, which no command used here needs), so that the
# real-node tier's opm image can carry it; it lives in static/ with the other static binaries
# of OLM's images: cpb (OLM's util image) and grpc_health_probe (the opm image's probe, its own
# pinned module, built with "go install").
OLM_STATIC_DIR = $(OLM_TOOLS_DIR)/static
OPM ?= $(OLM_STATIC_DIR)/opm
CPB ?= $(OLM_STATIC_DIR)/cpb
GRPC_HEALTH_PROBE_VERSION ?= v0.4.62
GRPC_HEALTH_PROBE ?= $(OLM_STATIC_DIR)/grpc_health_probe-$(GRPC_HEALTH_PROBE_VERSION)
# OLM's util image needs /bin/cp: hack/olm/cmd/cp, built next to cpb (nothing read from the host).
OLM_CP ?= $(OLM_STATIC_DIR)/cp
# opm serve's registry on 127.0.0.1 only (hack/olm/cmd/catalog-serve): opm serve binds every
# interface. Built next to opm; rebuilt when its source changes.
CATALOG_SERVE ?= $(OLM_STATIC_DIR)/catalog-serve
# Go commands run inside the hack/olm module (static and -trimpath, as every build: see the top).
OLM_GO_ENV = GOWORK=off
OLM_GO = cd $(CURDIR)/hack/olm && $(OLM_GO_ENV) go

# The real-node tier's binaries (kubelet, kube-proxy, etcd, coredns), from hack/node and
# hack/coredns; its images go to NODE_IMAGES_DIR. Both are exported to every recipe.
NODE_HASH := $(shell cat hack/node/go.sum hack/coredns/go.sum 2>/dev/null | sha256sum | cut -c1-12)
NODE_ENV_DIR ?= $(CACHE_DIR)/node-env-$(KUBE_VERSION)-$(NODE_HASH)
NODE_IMAGES_DIR ?= $(LOCALBIN)/node-images
export NODE_ENV_DIR NODE_IMAGES_DIR

# OLM packaging.
PACKAGE_NAME ?= database-operator
# Channels (docs/olm.md, "Channels"): releases go to candidate-v0, the default channel (OLM's
# channel naming: candidate = pre-GA; the operator's maturity is alpha, its API v1alpha1, its
# releases 0.x). stable, where 0.2.0 was released, still gets every release for its subscribers
# and is deprecated in the catalog (olm.deprecations), which sends them to candidate-v0.
CHANNELS ?= candidate-v0,stable
DEFAULT_CHANNEL ?= candidate-v0
DEPRECATED_CHANNELS ?= stable
# Version the bundle replaces (adds "replaces" and "olm.skipRange: <VERSION" to the CSV).
PREVIOUS_VERSION ?= 0.3.0
# The released previous version, as it was released: its commit (a8693b2, the last commit of the
# 0.3 work), its bundle copied from that commit into PREVIOUS_BUNDLE_DIR ("make
# previous-bundle"), and its manager built from that commit's source ("make manager-previous",
# once per machine). The OLM and real-node tiers install it and upgrade to VERSION.
PREVIOUS_COMMIT ?= a8693b268823f14aa423b7b11dd639e52b89d0fb
PREVIOUS_BUNDLE_DIR ?= hack/olm/released/$(PREVIOUS_VERSION)
MANAGER_PREVIOUS ?= $(CACHE_DIR)/manager-$(PREVIOUS_VERSION)-$(shell echo $(PREVIOUS_COMMIT) | cut -c1-12)-linux-$(ARCH)/manager
# Every released version with its release commit, oldest first: their bundles, as released, stay
# in hack/olm/released/<version> and in the catalog, so that the subscribers of each one keep an
# upgrade path to VERSION. A release adds its pair here ("make verify" checks each directory
# against its commit's bundle/).
RELEASES ?= 0.2.0=baf955a99dc30af535345ac13bd07eb227fb897e $(PREVIOUS_VERSION)=$(PREVIOUS_COMMIT)
RELEASED_BUNDLE_DIRS = $(foreach r,$(RELEASES),hack/olm/released/$(firstword $(subst =, ,$(r))))
IMAGE_TAG_BASE ?= database-operator
# The operator image of the bundle: IMG when given on the command line or in the environment,
# else the operator image built from this tree, by digest (make operator-ref; shell syntax, for
# recipes only).
OPERATOR_IMG ?= $(if $(filter command line environment,$(origin IMG)),$(IMG),$$(cat $(OPERATOR_REF)))
BUNDLE_IMG ?= $(IMAGE_TAG_BASE)-bundle:$(VERSION)
CATALOG_IMG ?= $(IMAGE_TAG_BASE)-catalog:$(VERSION)
ECHO_IMG ?= $(IMAGE_TAG_BASE)-echo:$(VERSION)
# Base image of the catalog image (opm generate dockerfile), pinned to the opm we build; the
# real-node tier builds it from that opm (hack/node/build-images.sh), and OLM's image (olm and
# catalog, which OLM's Deployments run on the real node, and cpb for bundle unpacking) from the
# OLM module.
OPM_IMAGE ?= quay.io/operator-framework/opm:v1.74.0
OLM_IMAGE ?= quay.io/operator-framework/olm:v0.46.0
# Where users pull the project's images from: the operator, its -bundle and -catalog. The
# real-node tier's containerd mirrors that host to the test registry.
IMAGE_REPO_BASE ?= quay.io/seed1b407122
OPERATOR_REPO ?= $(IMAGE_REPO_BASE)/$(PACKAGE_NAME)
OPERATOR_REF = $(IMAGES_DIR)/operator.ref
# The Echo image, the operator's ECHO_IMAGE (the Jobs of Echo and ScheduledEcho): hack/echo's
# shell as /bin/sh, static, user 65534, reproducible. config/manager/manager.yaml and the Helm
# chart name it by digest (make echo-image-pin writes it there; make verify checks it).
ECHO_REPO ?= $(IMAGE_REPO_BASE)/$(PACKAGE_NAME)-echo
ECHO_REF = $(IMAGES_DIR)/echo.ref
ECHO_IMAGE_LAYOUT = $(IMAGES_DIR)/echo
# The project's PostgreSQL image (hack/postgres/build.sh: Debian bookworm's PostgreSQL 15
# packages and a static entrypoint; not the Docker Hub image), which config/samples' PostgreSQL
# sample names. Its .debs are downloaded once per machine, keyed by the package list.
POSTGRES_IMAGE ?= $(IMAGE_REPO_BASE)/$(PACKAGE_NAME)-postgres:15
POSTGRES_IMAGE_LAYOUT = $(IMAGES_DIR)/postgres
POSTGRES_DEBS_DIR ?= $(CACHE_DIR)/postgres-debs-$(shell sha256sum hack/postgres/packages.txt 2>/dev/null | cut -c1-12)
# The bundle and catalog images of the real-node tier (hack/node/build-images.sh names them so).
NODE_BUNDLE_REPO = $(IMAGE_REPO_BASE)/$(PACKAGE_NAME)-bundle
NODE_CATALOG_IMG = $(IMAGE_REPO_BASE)/$(PACKAGE_NAME)-catalog:v$(VERSION)
# make test-node NODE_RELEASE_DIR=bin/release/0.4.0-rc.1: the node's registry serves that release's
# images (make release) verified under the release's own cosign.pub, in place of node-images' of
# the same tag or digest, and the specs install the release's operator, Echo, bundle and catalog by its tag
# (the operator's, the first line of its images.txt). OLM's, opm's, PostgreSQL's and the previous
# operator's images, which a release does not ship, come from NODE_IMAGES_DIR as always.
NODE_RELEASE_DIR ?=
NODE_IMAGE_TAG = $(if $(NODE_RELEASE_DIR),$(shell awk 'NR == 1 {n = split($$2, t, ":"); print t[n]}' $(NODE_RELEASE_DIR)/images.txt),v$(VERSION))

# Images. Empty CONTAINER_TOOL: built without a container engine by hack/images (image-tool) into
# IMAGES_DIR as OCI layouts + docker-archive tarballs; CONTAINER_TOOL=docker (or podman): built
# and pushed with it from the Dockerfiles.
CONTAINER_TOOL ?=
IMAGES_DIR ?= $(LOCALBIN)/images
# GOARCH of the operator image (GOOS is linux).
ARCH ?= $(shell go env GOARCH)
MANAGER_STATIC ?= $(IMAGES_DIR)/manager-linux-$(ARCH)
# Registry host[:port] the *-push targets prefix to IMG, BUNDLE_IMG and CATALOG_IMG; empty: push
# to those names as they are. Loopback registries are spoken to over plain HTTP.
REGISTRY ?=
# Base of the no-Docker catalog image in a reachable registry; empty: the opm image built here
# (make opm-image), with the serve cache pre-built.
CATALOG_BASE_IMG ?=
IMAGES_GO = cd $(CURDIR)/hack/images && GOWORK=off go
IMAGE_TOOL ?= $(LOCALBIN)/image-tool
IMAGE_TOOL_SRCS := hack/images/go.mod hack/images/go.sum \
	$(filter-out %_test.go,$(wildcard hack/images/*.go hack/images/cmd/image-tool/*.go))
push-ref = $(if $(REGISTRY),$(REGISTRY)/$(1),$(1))

# Helm chart (its tooling is the hack/helm module; the operator's go.mod never sees Helm).
HELM_CHART ?= charts/database-operator
HELM_GO = cd $(CURDIR)/hack/helm && GOWORK=off go
# Values file(s) of helm-template (space separated) and the release's name and namespace.
HELM_VALUES ?=
HELM_RELEASE ?= database-operator
HELM_NAMESPACE ?= database-operator-system

# Flags: Ginkgo of the envtest/e2e suites, of the OLM and real-node suites; "go test" flags of
# helm-test and images-test (e.g. HELM_TEST_FLAGS='-run TestRender').
GINKGO_FLAGS ?= -v --no-color --timeout=20m
OLM_E2E_GINKGO_FLAGS ?= -v --no-color --timeout=20m
NODE_GINKGO_FLAGS ?= -v --no-color --timeout=40m
# Ginkgo processes of make test-integration. Each Ordered container starts its own envtest API
# server, so the containers of a suite run side by side; their specs mostly wait for the
# manager, so 2 processes pay even on 2 cores (docs/testing.md, Integration).
INTEGRATION_PROCS ?= 2
# Ginkgo processes of make test-e2e: each starts its own local control plane and manager (free
# ports, its own work directory), and the specs, which mostly wait on the clock (PodGC, cron
# minutes, minIntervalSeconds), run side by side (docs/testing.md, e2e).
E2E_PROCS ?= 2
HELM_TEST_FLAGS ?=
IMAGES_TEST_FLAGS ?=
# How long "make test-fuzz" runs each fuzz target, and the targets: every func Fuzz* of the
# controllers' fuzz_test.go and fuzz_<topic>_test.go files, as <package dir>:<name> (found, so a
# new target is never left out).
# A count of executions (Nx), not a duration: Go 1.26's fuzz coordinator may fail a run whose
# -fuzztime deadline ends while a worker stops ("context deadline exceeded", go.dev/issue/75804,
# fixed in Go 1.27; seen once in make test).
FUZZ_TIME ?= 2000x
FUZZ_TARGETS = $(shell grep -ro --include=fuzz_test.go --include='fuzz_*_test.go' '^func Fuzz[A-Za-z0-9_]*' controllers \
	| sed -E 's|/fuzz(_[a-z0-9_]+)?_test\.go:func |:|' | sort)
# The file-based catalog the OLM e2e serves (make catalog-inline).
OLM_E2E_CATALOG_DIR ?= $(LOCALBIN)/catalog-inline
# Flags of the manager under "make run" (no leader election, metrics and probes on loopback) and
# of hack/run itself (e.g. RUN_FLAGS=--apply-samples).
RUN_ARGS ?= --leader-elect=false --metrics-bind-address=127.0.0.1:8443 --health-probe-bind-address=127.0.0.1:8081
RUN_FLAGS ?=
# Flags of hack/bench (see bin/bench -help), e.g.
# BENCH_FLAGS="-n 1000 -concurrency 4,16,32 -qps 50,500 -burst 100,1000".
BENCH_FLAGS ?= -n 100,1000 -idle 5m -leader
BENCH_SMOKE_FLAGS ?= -n 20 -idle 20s -raw-duration 2s -fail-on-idle-writes -leader -leader-repeat 1
BENCH_LEADER_FLAGS ?= -leader-repeat 3

# make run-bundle NAMESPACE=<ns>: install bundle/ through the OLM of the cluster in KUBECONFIG,
# as "operator-sdk run bundle" does; make cleanup-bundle NAMESPACE=<ns> removes it again. With
# BUNDLE_IMG=<repository>@sha256:<digest> on the command line it installs that bundle image
# instead: the catalog names it and OLM unpacks it (needs a cluster that pulls images);
# BUNDLE_IMG_MIRROR=quay.io=HOST:PORT pulls it on this machine from a plain-HTTP registry.
BUNDLE_IMG_MIRROR ?=
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

# Tools modules with their own go.mod, linted with the same configuration.
LINT_MODULES ?= hack/olm hack/helm hack/images hack/prometheus hack/echo

# The stages of "make test", in the order they run (hack/fresh-machine.sh times each one).
TEST_STAGES = verify vet lint test-unit test-rules test-integration test-e2e test-faults test-ha helm-test olm-test images-test \
	olm-e2e node-images-test test-node bench-smoke

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-20s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

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

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint on the operator and on the tools modules.
	$(GOLANGCI_LINT) run --allow-parallel-runners ./...
	$(GOLANGCI_LINT) run --allow-parallel-runners --build-tags node ./test/nodee2e/...
	for m in $(LINT_MODULES); do (cd $$m && GOWORK=off $(GOLANGCI_LINT) run --allow-parallel-runners --config $(CURDIR)/.golangci.yml ./...) || exit 1; done

.PHONY: verify
verify: manifests generate echo-image-check bundle-digest-check catalog-check ## Fail when generated files (CRDs, RBAC, deepcopy), the Echo image's digest, the bundle's operator digest, catalog/'s bundle digests, formatting, go vet with no build tags, the layout rule, hack/node's module versions against hack/tools' or the benchmark tables drift.
	hack/check-layout.sh
	go vet ./... # with no build tags: what an editor and a newcomer run first must compile
	hack/node/modules-check.sh
	@for f in $(PROMETHEUS_RULE):prometheusrule.yaml $(GRAFANA_DASHBOARD):grafana-dashboard.json; do \
		cmp -s $${f%%:*} $(HELM_CHART)/files/$${f##*:} || { \
		echo "$(HELM_CHART)/files/$${f##*:} differs from $${f%%:*}; run 'make helm-crds' and commit"; exit 1; }; done
	go run ./hack/bench -render-docs docs/benchmarks.md,docs/bench/README.md -results docs/bench -check
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@if [ -n "$$(git status --porcelain -- api config)" ]; then \
		echo "Generated files are out of date; run 'make manifests generate' and commit:"; \
		git status --porcelain -- api config; git --no-pager diff -- api config | head -50; exit 1; fi
	@for r in $(RELEASES); do \
		version=$${r%%=*} commit=$${r#*=} dir=hack/olm/released/$${r%%=*}; \
		tmp=$$(mktemp -d); git archive $$commit bundle | tar -x --strip-components=1 -C $$tmp; \
		diff -r $$tmp $$dir > /dev/null; same=$$?; rm -rf $$tmp; \
		test $$same = 0 || { echo "$$dir is not the bundle/ of $$commit (release $$version); run 'make previous-bundle PREVIOUS_VERSION=$$version PREVIOUS_COMMIT=$$commit'"; exit 1; }; \
	done
	@echo "Generated files are current."

##@ Test

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
	go test -count=1 . ./api/... ./test/harness/proc/ ./test/harness/manager/ ./test/harness/csisim/ ./test/harness/fuzzspec/ ./test/harness/repodir/ ./cmd/... ./hack/release/

.PHONY: test-fuzz
test-fuzz: ## Native Go fuzzing: each fuzz target for FUZZ_TIME (2000x executions), one at a time; a failing input is written to the package's testdata/fuzz/.
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "go test -run '^$$' -fuzz '^$${t##*:}$$' -fuzztime $(FUZZ_TIME) ./$${t%%:*}/"; \
		go test -run '^$$' -fuzz "^$${t##*:}\$$" -fuzztime $(FUZZ_TIME) "./$${t%%:*}/"; \
	done

.PHONY: test-integration
test-integration: test-env $(GINKGO) ## envtest specs (label "integration") against a real kube-apiserver and etcd.
	$(GINKGO) $(GINKGO_FLAGS) --procs=$(INTEGRATION_PROCS) --label-filter=integration ./controllers/...

.PHONY: test-e2e
test-e2e: build test-env snapshot-env $(GINKGO) $(KUSTOMIZE) ## e2e specs: the manager binary on the local control plane (simulated nodes).
	go test -tags e2e ./test/harness/controlplane/ ./test/harness/csisim/ -count=1 -v -timeout 10m
	MANAGER_BIN=$(LOCALBIN)/manager KUSTOMIZE=$(KUSTOMIZE) $(GINKGO) $(GINKGO_FLAGS) --procs=$(E2E_PROCS) --tags e2e ./test/e2e

.PHONY: test-faults
test-faults: build test-env snapshot-env $(GINKGO) ## Fault injection: the proxy's unit tests, then test/faults (injected API errors, API server/etcd outages, leader killed mid-growth/scale-down); table in bin/faults-report.md.
	go test -count=1 ./test/harness/faultproxy/
	MANAGER_BIN=$(LOCALBIN)/manager FAULTS_REPORT=$(LOCALBIN)/faults-report.md $(GINKGO) $(GINKGO_FLAGS) --tags e2e ./test/faults

.PHONY: test-rules
test-rules: prometheus-env $(KUSTOMIZE) ## The alerts (config/prometheus) checked and tested by promtool (a test file per alert in config/prometheus/tests/), then hack/prometheus's Go tests (runbooks, metric names, dashboard queries, chart copies; kustomize's and the chart's monitoring objects against the Prometheus Operator's CRDs) and test/harness/promserver's (a real Prometheus).
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	($(PROMETHEUS_GO) run ./cmd/rules-extract -o $$tmp/rules.yaml $(CURDIR)/$(PROMETHEUS_RULE)); \
	cp config/prometheus/tests/*.yaml $$tmp/; \
	echo "promtool check rules $(PROMETHEUS_RULE) (its spec)"; $(PROMTOOL) check rules $$tmp/rules.yaml; \
	echo "promtool test rules config/prometheus/tests/*.yaml"; \
	(cd $$tmp && $(PROMTOOL) test rules $$(cd $(CURDIR)/config/prometheus/tests && ls *.yaml)); \
	{ $(KUSTOMIZE) build config/default; echo ---; $(KUSTOMIZE) build config/prometheus; } > $$tmp/kustomize.yaml; \
	$(MAKE) --no-print-directory helm-template HELM_VALUES=$(CURDIR)/hack/prometheus/testdata/chart-values.yaml > $$tmp/chart.yaml; \
	crds=$$(cd hack/prometheus && GOWORK=off go mod download -json $(PROMETHEUS_OPERATOR_MODULE) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p'); \
	test -d "$$crds/example/prometheus-operator-crd" || { echo "$(PROMETHEUS_OPERATOR_MODULE) not downloaded (Dir='$$crds')"; exit 1; }; \
	echo "go test ./... in hack/prometheus"; \
	export PROMETHEUS_TEST_MANIFESTS="$$tmp/kustomize.yaml $$tmp/chart.yaml" PROMETHEUS_OPERATOR_CRDS=$$crds/example/prometheus-operator-crd; \
	$(PROMETHEUS_GO) test -count=1 ./...
	@echo "go test ./test/harness/promserver/ (the real node's Prometheus: rendering, and the server scraping itself and firing a rule)"
	PROMETHEUS_BIN=$(PROMETHEUS_BIN) go test -count=1 ./test/harness/promserver/

.PHONY: prometheus-env
prometheus-env: $(PROMETHEUS_ENV_DIR)/.stamp ## Build promtool and the Prometheus server from hack/prometheus once per machine.

$(PROMETHEUS_ENV_DIR)/.stamp: hack/prometheus/go.mod hack/prometheus/go.sum hack/prometheus/build.sh
	hack/prometheus/build.sh $(PROMETHEUS_ENV_DIR)

.PHONY: test-env
test-env: $(TEST_ENV_DIR)/.stamp ## Build the local control plane binaries once per machine.

$(TEST_ENV_DIR)/.stamp: hack/tools/go.mod hack/tools/go.sum hack/build-test-env.sh
	hack/build-test-env.sh $(TEST_ENV_DIR)

.PHONY: snapshot-env
snapshot-env: $(SNAPSHOT_ENV_DIR)/.stamp ## Build snapshot-controller and copy the VolumeSnapshot CRDs once per machine.

$(SNAPSHOT_ENV_DIR)/.stamp: hack/snapshot/go.mod hack/snapshot/go.sum hack/snapshot/build.sh
	hack/snapshot/build.sh $(SNAPSHOT_ENV_DIR)

.PHONY: test-ha
test-ha: build test-env snapshot-env $(GINKGO) ## Leader election e2e: 2 managers, graceful hand-off and crash takeover.
	MANAGER_BIN=$(LOCALBIN)/manager $(GINKGO) $(GINKGO_FLAGS) --tags e2e ./test/ha

##@ Build

.PHONY: build
build: manifests generate ## Build the manager binary.
	go build -o $(LOCALBIN)/manager .

# kubectl-dbc-release: the platforms, and the mtime of every file in the archives (the commit
# time of HEAD) so that one commit gives byte-identical archives with the same Go.
KUBECTL_DBC_PLATFORMS ?= linux/amd64 linux/arm64 darwin/arm64
KUBECTL_DBC_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

.PHONY: kubectl-dbc
kubectl-dbc: ## Build the kubectl plugin into bin/kubectl-dbc (with bin/ on PATH: kubectl dbc status NAME; docs/kubectl-dbc.md).
	go build -o $(LOCALBIN)/kubectl-dbc ./cmd/kubectl-dbc

# Where kubectl-dbc-release writes (make release: RELEASE_DIR/kubectl-dbc).
KUBECTL_DBC_RELEASE_DIR ?= $(LOCALBIN)/release

.PHONY: kubectl-dbc-release
kubectl-dbc-release: ## Reproducible kubectl-dbc archives (KUBECTL_DBC_PLATFORMS) with LICENSE and README into KUBECTL_DBC_RELEASE_DIR (bin/release/); prints their sha256.
	@set -e; rel=$(KUBECTL_DBC_RELEASE_DIR); dir=$$(mktemp -d); trap 'rm -rf "$$dir"' EXIT; \
	mkdir -p $$rel; rm -f $$rel/kubectl-dbc_*.tar.gz $$rel/kubectl-dbc_SHA256SUMS; \
	for p in $(KUBECTL_DBC_PLATFORMS); do \
		name=kubectl-dbc_$(VERSION)_$${p%/*}_$${p#*/}; \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} go build -trimpath -buildvcs=false \
			-ldflags '-s -w -X github.com/seed1b407122/database-operator/cmd/kubectl-dbc/plugin.Version=$(VERSION)' \
			-o $$dir/kubectl-dbc ./cmd/kubectl-dbc; \
		cp LICENSE $$dir/LICENSE; cp docs/kubectl-dbc.md $$dir/README.md; \
		tar --sort=name --mtime=@$(KUBECTL_DBC_EPOCH) --owner=0 --group=0 --numeric-owner --mode=u+rwX,go+rX,go-w \
			--format=gnu -C $$dir -cf - LICENSE README.md kubectl-dbc | gzip -9n > $$rel/$$name.tar.gz; \
	done; \
	cd $$rel && sha256sum kubectl-dbc_*.tar.gz | tee kubectl-dbc_SHA256SUMS

.PHONY: run
run: manifests generate test-env snapshot-env ## Run the manager against KUBECONFIG, or start a local control plane.
	go build -o $(LOCALBIN)/run ./hack/run
	exec $(LOCALBIN)/run --manager $(LOCALBIN)/manager $(RUN_FLAGS) -- $(RUN_ARGS)

##@ Images (Docker not needed: see CONTAINER_TOOL)

.PHONY: manager-static
manager-static: ## Build the manager like the Dockerfile: static (CGO_ENABLED=0), -trimpath, linux/ARCH.
	@mkdir -p $(IMAGES_DIR)
	CGO_ENABLED=0 GOOS=linux GOARCH=$(ARCH) go build -trimpath -buildvcs=false -ldflags="-s -w" -o $(MANAGER_STATIC) .

# write-ref LAYOUT,REPO,FILE,WHAT: write REPO@<digest of the image in the OCI layout LAYOUT> to
# FILE (the reference by digest the manifests name).
define write-ref
	@set -e; digest=$$($(IMAGE_TOOL) digest --from $(1)); \
	case $$digest in sha256:*) ;; *) echo "image-tool printed no digest for $(1)"; exit 1;; esac; \
	echo "$(2)@$$digest" > $(3); echo "$(4): $$(cat $(3))"
endef

# check-ref FILE,FILES,WHAT,FIX: fail when one of FILES does not name the reference by digest in
# FILE (write-ref), telling to run FIX.
define check-ref
	@want=$$(cat $(1)); for f in $(2); do \
		grep -q -F "$$want" $$f || { echo "$$f does not name the $(3) this tree builds ($$want): run '$(4)' and commit"; exit 1; }; \
	done; echo "$(2) name the $(3) this tree builds: $$want"
endef

# The operator image as the bundle names it: OPERATOR_REPO@sha256:<digest of the operator image
# built from this tree>. The build is reproducible (static, -trimpath, -buildvcs=false, fixed
# timestamps), so the digest depends on the source alone, not on the commit or the machine.
.PHONY: operator-ref
operator-ref: manager-static $(IMAGE_TOOL) ## Build the operator image for the bundle and write its reference by digest to OPERATOR_REF.
	$(IMAGE_TOOL) operator --binary $(MANAGER_STATIC) --dockerfile Dockerfile --arch $(ARCH) \
		--tag $(OPERATOR_REPO):v$(VERSION) --layout $(IMAGES_DIR)/operator-release >/dev/null
	$(call write-ref,$(IMAGES_DIR)/operator-release,$(OPERATOR_REPO),$(OPERATOR_REF),Operator image)

# The Echo image as the manifests name it: ECHO_REPO@sha256:<digest of the image built from
# hack/echo>. Like the operator image, it depends on the source alone.
.PHONY: echo-ref
echo-ref: $(IMAGE_TOOL) ## Build the Echo image (hack/echo's shell as /bin/sh) into ECHO_IMAGE_LAYOUT and write its reference by digest to ECHO_REF.
	@mkdir -p $(IMAGES_DIR)
	cd $(CURDIR)/hack/echo && GOWORK=off CGO_ENABLED=0 GOOS=linux GOARCH=$(ARCH) \
		go build -trimpath -buildvcs=false -ldflags="-s -w" -o $(IMAGES_DIR)/echo-sh-linux-$(ARCH) .
	$(IMAGE_TOOL) static --arch $(ARCH) --user 65534:65534 --file $(IMAGES_DIR)/echo-sh-linux-$(ARCH):/bin/sh \
		--tag $(ECHO_REPO):v$(VERSION) --layout $(ECHO_IMAGE_LAYOUT) >/dev/null
	$(call write-ref,$(ECHO_IMAGE_LAYOUT),$(ECHO_REPO),$(ECHO_REF),Echo image)

# Where the install paths name the Echo image: the kustomize manager (and so the bundle) and the
# chart's values.
ECHO_IMAGE_FILES = config/manager/manager.yaml $(HELM_CHART)/values.yaml

.PHONY: echo-image-pin
echo-image-pin: echo-ref ## Write the Echo image this tree builds (ECHO_REF) into config/manager/manager.yaml and the chart's values.yaml.
	@ref=$$(cat $(ECHO_REF)); \
	sed -i -E "/- name: ECHO_IMAGE/{n;s|value: .*|value: $$ref|}" config/manager/manager.yaml; \
	sed -i -E "s|^echoImage: .*|echoImage: $$ref|" $(HELM_CHART)/values.yaml; \
	echo "Echo image pinned in $(ECHO_IMAGE_FILES): $$ref"

.PHONY: echo-image-check
echo-image-check: echo-ref ## Fail when config/manager/manager.yaml or the chart name another Echo image than the one this tree builds.
	$(call check-ref,$(ECHO_REF),$(ECHO_IMAGE_FILES),Echo image,make echo-image-pin bundle catalog)

.PHONY: bundle-digest-check
bundle-digest-check: operator-ref ## Fail when bundle/ names another operator image than the one this tree builds.
	$(call check-ref,$(OPERATOR_REF),bundle/manifests/$(PACKAGE_NAME).clusterserviceversion.yaml,operator image,make bundle catalog)

.PHONY: manager-previous
manager-previous: $(MANAGER_PREVIOUS) ## Build the manager of PREVIOUS_VERSION from PREVIOUS_COMMIT's source (static, once per machine).

# The source of PREVIOUS_COMMIT from this clone's history (git archive), built like manager-static.
$(MANAGER_PREVIOUS):
	hack/build-previous-manager.sh $(PREVIOUS_COMMIT) $(ARCH) $@

.PHONY: previous-bundle
previous-bundle: ## Copy PREVIOUS_COMMIT's bundle/ into PREVIOUS_BUNDLE_DIR (the released bundle, as released).
	rm -rf $(PREVIOUS_BUNDLE_DIR) && mkdir -p $(PREVIOUS_BUNDLE_DIR)
	git archive $(PREVIOUS_COMMIT) bundle | tar -x --strip-components=1 -C $(PREVIOUS_BUNDLE_DIR)

$(IMAGE_TOOL): $(IMAGE_TOOL_SRCS) | $(LOCALBIN)
	$(IMAGES_GO) build -o $(IMAGE_TOOL) ./cmd/image-tool

# The operator image: the manager built like the Dockerfile as /manager on an empty base, USER
# 65532:65532, the Dockerfile's labels. The bundle image: bundle/ at /, labelled with the
# annotations. The catalog image: catalog/ at /configs, labelled like catalog.Dockerfile, on
# CATALOG_BASE_IMG when set (its real base, the opm image, is unreachable here). Images are
# reproducible: timestamps are SOURCE_DATE_EPOCH (default: the epoch).
.PHONY: docker-build
docker-build: $(if $(CONTAINER_TOOL),,manager-static $(IMAGE_TOOL)) ## Build the operator image IMG (bin/images/operator{,.tar}; or with CONTAINER_TOOL).
ifneq ($(CONTAINER_TOOL),)
	$(CONTAINER_TOOL) build -t $(IMG) .
else
	$(IMAGE_TOOL) operator --binary $(MANAGER_STATIC) --dockerfile Dockerfile --arch $(ARCH) \
		--tag $(IMG) --layout $(IMAGES_DIR)/operator --tarball $(IMAGES_DIR)/operator.tar
endif

.PHONY: docker-push
docker-push: docker-build ## Push the operator image to REGISTRY/IMG.
	$(call push-image,$(IMAGES_DIR)/operator,$(IMG))

.PHONY: bundle-build
bundle-build: $(if $(CONTAINER_TOOL),,$(IMAGE_TOOL)) ## Build the bundle image BUNDLE_IMG from bundle/ (bin/images/bundle{,.tar}; or with CONTAINER_TOOL).
ifneq ($(CONTAINER_TOOL),)
	$(CONTAINER_TOOL) build -f bundle.Dockerfile -t $(BUNDLE_IMG) .
else
	$(IMAGE_TOOL) bundle --dir bundle --tag $(BUNDLE_IMG) \
		--layout $(IMAGES_DIR)/bundle --tarball $(IMAGES_DIR)/bundle.tar
endif

.PHONY: bundle-push
bundle-push: bundle-build ## Push the bundle image to REGISTRY/BUNDLE_IMG.
	$(call push-image,$(IMAGES_DIR)/bundle,$(BUNDLE_IMG))

.PHONY: catalog-build
catalog-build: $(if $(CONTAINER_TOOL),,$(IMAGE_TOOL) $(if $(CATALOG_BASE_IMG),,opm-image)) ## Build the catalog image CATALOG_IMG from catalog/ (bin/images/catalog{,.tar}; or with CONTAINER_TOOL): on the opm image, with its serve cache.
ifneq ($(CONTAINER_TOOL),)
	$(CONTAINER_TOOL) build -f catalog.Dockerfile -t $(CATALOG_IMG) .
else
	@set -e; cache=$(IMAGES_DIR)/catalog-cache; rm -rf $$cache; \
	$(if $(CATALOG_BASE_IMG),,$(OPM) serve catalog --cache-dir $$cache --cache-only 2>/dev/null;) \
	$(IMAGE_TOOL) catalog --dir catalog --dockerfile catalog.Dockerfile \
		$(if $(CATALOG_BASE_IMG),--base $(CATALOG_BASE_IMG),--base-layout $(OPM_IMAGE_LAYOUT) --cache $$cache) --tag $(CATALOG_IMG) \
		--layout $(IMAGES_DIR)/catalog --tarball $(IMAGES_DIR)/catalog.tar
endif

# The opm image, catalog.Dockerfile's base, built from the pinned opm (static) and
# grpc_health_probe: /bin/opm (entrypoint) and /bin/grpc_health_probe, user 1001, as upstream's.
# OLM's bundle unpacking runs it too (the catalog operator's --opmImage).
OPM_IMAGE_LAYOUT = $(IMAGES_DIR)/opm
.PHONY: postgres-image
postgres-image: $(IMAGE_TOOL) ## Build the PostgreSQL image POSTGRES_IMAGE (bin/images/postgres) from Debian's packages (apt-get download once per machine; root, or a user namespace, for its check).
	IMAGE_TOOL=$(IMAGE_TOOL) POSTGRES_DEBS_DIR=$(POSTGRES_DEBS_DIR) \
		hack/postgres/build.sh $(IMAGES_DIR)/postgres-build $(POSTGRES_IMAGE_LAYOUT) $(POSTGRES_IMAGE) $(ARCH)

.PHONY: opm-image
opm-image: $(OPM) $(GRPC_HEALTH_PROBE) $(IMAGE_TOOL) ## Build the opm image OPM_IMAGE (bin/images/opm) from the pinned opm and grpc_health_probe.
	$(IMAGE_TOOL) static --arch $(ARCH) --user 1001 --entrypoint /bin/opm --file $(OPM):/bin/opm \
		--file $(GRPC_HEALTH_PROBE):/bin/grpc_health_probe --tag $(OPM_IMAGE) --layout $(OPM_IMAGE_LAYOUT)

.PHONY: catalog-push
catalog-push: catalog-build ## Push the catalog image to REGISTRY/CATALOG_IMG.
	$(call push-image,$(IMAGES_DIR)/catalog,$(CATALOG_IMG))

# The Echo image is always built by image-tool (make echo-ref); it has no Dockerfile.
.PHONY: echo-push
echo-push: echo-ref ## Push the Echo image (ECHO_IMAGE_LAYOUT) to REGISTRY/ECHO_IMG.
	$(IMAGE_TOOL) push --from $(ECHO_IMAGE_LAYOUT) --push $(call push-ref,$(ECHO_IMG))

.PHONY: images-build
images-build: docker-build bundle-build catalog-build echo-ref ## Build the operator, bundle, catalog and Echo images.

.PHONY: images-push
images-push: docker-push bundle-push catalog-push echo-push ## Push the four images to REGISTRY.

# push-image LAYOUT,REF: push with CONTAINER_TOOL (tag first) or from the OCI layout with image-tool.
define push-image
$(if $(CONTAINER_TOOL),$(if $(REGISTRY),$(CONTAINER_TOOL) tag $(2) $(REGISTRY)/$(2) && )$(CONTAINER_TOOL) push $(call push-ref,$(2)),$(IMAGE_TOOL) push --from $(1) --push $(call push-ref,$(2)))
endef

.PHONY: images-test
images-test: manager-static $(OPM) ## Go tests of hack/images (build, push to an in-process registry, read back, opm render; SBOMs and referrers) and of hack/echo (the Echo image's shell).
	cd $(CURDIR)/hack/images && OPM=$(OPM) MANAGER_BIN=$(MANAGER_STATIC) VERSION=$(VERSION) ARCH=$(ARCH) \
		GOWORK=off go test -count=1 -v -timeout 10m ./... $(IMAGES_TEST_FLAGS)
	cd $(CURDIR)/hack/echo && GOWORK=off go test -count=1 ./...

##@ Release: SBOMs and OperatorHub (docs/release.md)

# The CycloneDX SBOMs of the four images and of the manager binary (hack/images/sbom, with
# cyclonedx-gomod's generator over each Go binary's build information): SBOM_DIR/<name>.cdx.json.
# They are made from image-tool's OCI layouts (CONTAINER_TOOL empty), so each names the digest
# the layout's image has, the one images-push pushes.
SBOM_DIR ?= $(LOCALBIN)/release/sbom
SBOM_TOOL ?= $(LOCALBIN)/sbom-tool
SBOM_TOOL_SRCS := hack/images/go.mod hack/images/go.sum \
	$(filter-out %_test.go,$(wildcard hack/images/*.go hack/images/sbom/*.go hack/images/cmd/sbom-tool/*.go))
# <name>=<OCI layout>=<repository the image is published as>, one per image SBOM.
SBOM_IMAGES = operator=$(IMAGES_DIR)/operator-release=$(OPERATOR_REPO) \
	bundle=$(IMAGES_DIR)/bundle=$(IMAGE_REPO_BASE)/$(PACKAGE_NAME)-bundle \
	catalog=$(IMAGES_DIR)/catalog=$(IMAGE_REPO_BASE)/$(PACKAGE_NAME)-catalog \
	echo=$(ECHO_IMAGE_LAYOUT)=$(ECHO_REPO)
# sbom-attach: the repositories of the pushed images (REGISTRY + IMG, BUNDLE_IMG, CATALOG_IMG,
# ECHO_IMG without their tags, as images-push pushes them; override each to attach elsewhere),
# and more flags of "sbom-tool attach" (e.g. --insecure for a non-loopback plain-HTTP registry).
untagged = $(firstword $(subst :, ,$(1)))
SBOM_ATTACH_OPERATOR_REPO ?= $(call push-ref,$(call untagged,$(IMG)))
SBOM_ATTACH_BUNDLE_REPO ?= $(call push-ref,$(call untagged,$(BUNDLE_IMG)))
SBOM_ATTACH_CATALOG_REPO ?= $(call push-ref,$(call untagged,$(CATALOG_IMG)))
SBOM_ATTACH_ECHO_REPO ?= $(call push-ref,$(call untagged,$(ECHO_IMG)))
SBOM_ATTACH_FLAGS ?=
# make release's SBOM hook (release-sbom runs it as "$(RELEASE_SBOM_ATTACH) --registry REGISTRY
# --list <the release's image list> --dir <its sbom/>"): each listed image gets the SBOM that
# describes its digest, or one made from its layout when none does (the released bundles; the
# catalog image, whose serve cache differs at each build, when make sbom built it again).
# REGISTRY_INSECURE: plain HTTP for a registry not on loopback.
RELEASE_SBOM_ATTACH ?= $(SBOM_TOOL) attach-release --version $(VERSION)$(if $(REGISTRY_INSECURE), --insecure)

$(SBOM_TOOL): $(SBOM_TOOL_SRCS) | $(LOCALBIN)
	$(IMAGES_GO) build -o $(SBOM_TOOL) ./cmd/sbom-tool

.PHONY: sbom-tool
sbom-tool: $(SBOM_TOOL) ## Build sbom-tool (hack/images/cmd/sbom-tool: SBOMs, attach/discover as OCI referrers) into bin/.

.PHONY: sbom
sbom: operator-ref echo-ref bundle-build catalog-build $(SBOM_TOOL) ## CycloneDX SBOMs of the operator, bundle, catalog and Echo images and of the manager binary: SBOM_DIR/<name>.cdx.json.
	@test -z "$(CONTAINER_TOOL)" || { echo "make sbom reads image-tool's layouts: run it with CONTAINER_TOOL empty"; exit 2; }
	$(SBOM_TOOL) binary --file $(MANAGER_STATIC) --version $(VERSION) --out $(SBOM_DIR)/manager.cdx.json
	@set -e; for i in $(SBOM_IMAGES); do n=$${i%%=*}; r=$${i#*=}; \
		echo "$(SBOM_TOOL) image --from $${r%%=*} --name $${r#*=} --version $(VERSION) --out $(SBOM_DIR)/$$n.cdx.json"; \
		$(SBOM_TOOL) image --from $${r%%=*} --name $${r#*=} --version $(VERSION) --out $(SBOM_DIR)/$$n.cdx.json; \
	done

.PHONY: sbom-attach
sbom-attach: $(SBOM_TOOL) ## Attach SBOM_DIR's image SBOMs (make sbom) to the images pushed to REGISTRY (make images-push) as OCI 1.1 referrers.
	$(SBOM_TOOL) attach --from $(IMAGES_DIR)/operator-release --repo $(SBOM_ATTACH_OPERATOR_REPO) --sbom $(SBOM_DIR)/operator.cdx.json $(SBOM_ATTACH_FLAGS)
	$(SBOM_TOOL) attach --from $(IMAGES_DIR)/bundle --repo $(SBOM_ATTACH_BUNDLE_REPO) --sbom $(SBOM_DIR)/bundle.cdx.json $(SBOM_ATTACH_FLAGS)
	$(SBOM_TOOL) attach --from $(IMAGES_DIR)/catalog --repo $(SBOM_ATTACH_CATALOG_REPO) --sbom $(SBOM_DIR)/catalog.cdx.json $(SBOM_ATTACH_FLAGS)
	$(SBOM_TOOL) attach --from $(ECHO_IMAGE_LAYOUT) --repo $(SBOM_ATTACH_ECHO_REPO) --sbom $(SBOM_DIR)/echo.cdx.json $(SBOM_ATTACH_FLAGS)

# The OperatorHub submission (docs/release.md): bundle/ (as VERSION) and the released bundles in
# the layout of the community operator repositories, operators/PACKAGE_NAME/<version>/
# {manifests,metadata}, with ci.yaml (the FBC workflow), catalog-templates/basic.yaml and
# catalogs/<catalog>/PACKAGE_NAME/catalog.yaml. OPERATORHUB_CATALOGS: the catalogs of ci.yaml's
# fbc.catalog_mapping (OpenShift versions; the CSV's minKubeVersion 1.31 is OpenShift 4.18);
# OPERATORHUB_REVIEWERS: ci.yaml's reviewers (GitHub users, comma separated).
OPERATORHUB_DIR ?= $(LOCALBIN)/release/operatorhub
OPERATORHUB_CATALOGS ?= v4.18,v4.19,v4.20,v4.21
OPERATORHUB_REVIEWERS ?= seed1b407122
comma := ,

.PHONY: operatorhub
operatorhub: $(OPM) ## Export bundle/ and the released bundles in the community operators' layout into OPERATORHUB_DIR (ci.yaml, FBC template, catalogs), validated like bundle-validate and with opm.
	$(OLM_GO) run ./cmd/operatorhub --package $(PACKAGE_NAME) --bundle $(VERSION)=$(CURDIR)/bundle \
		$(foreach d,$(RELEASED_BUNDLE_DIRS),--released $(notdir $(d))=$(CURDIR)/$(d)) \
		--catalog $(CURDIR)/catalog/$(PACKAGE_NAME)/index.yaml --catalog-names $(OPERATORHUB_CATALOGS) \
		--reviewers "$(OPERATORHUB_REVIEWERS)" --output $(OPERATORHUB_DIR)
	@set -e; for c in $(subst $(comma), ,$(OPERATORHUB_CATALOGS)); do \
		$(OPM) validate $(OPERATORHUB_DIR)/catalogs/$$c; echo "opm validate catalogs/$$c: valid"; done

##@ Helm

.PHONY: helm-crds
helm-crds: manifests ## Sync the chart with config/: crds/ from config/crd/bases, files/manager-role.yaml from config/rbac/role.yaml, files/prometheusrule.yaml and grafana-dashboard.json from config/prometheus and config/grafana.
	rm -f $(HELM_CHART)/crds/*.yaml
	cp config/crd/bases/*.yaml $(HELM_CHART)/crds/
	cp config/rbac/role.yaml $(HELM_CHART)/files/manager-role.yaml
	cp $(PROMETHEUS_RULE) $(HELM_CHART)/files/prometheusrule.yaml
	cp $(GRAFANA_DASHBOARD) $(HELM_CHART)/files/grafana-dashboard.json

.PHONY: helm-lint
helm-lint: ## Lint the chart (helm lint, via the Go library) with its default and HA values.
	$(HELM_GO) test ./... -count=1 -run 'TestLint' -v

.PHONY: helm-template
helm-template: ## Print the chart's manifests like "helm template --include-crds" (HELM_VALUES, HELM_RELEASE, HELM_NAMESPACE).
	@$(HELM_GO) run ./cmd/helm-template --release $(HELM_RELEASE) --namespace $(HELM_NAMESPACE) \
		$(foreach f,$(HELM_VALUES),-f $(abspath $(f))) $(CURDIR)/$(HELM_CHART)

.PHONY: helm-test
helm-test: test-env snapshot-env ## Test the chart: render (default, HA), lint, drift from config/, install on the local control plane.
	$(HELM_GO) test ./... -count=1 -v -timeout 10m $(HELM_TEST_FLAGS)

##@ OLM

.PHONY: bundle
bundle: manifests echo-image-check $(KUSTOMIZE) $(if $(filter command line environment,$(origin IMG)),,operator-ref) ## Generate bundle/ and bundle.Dockerfile (VERSION, PREVIOUS_VERSION, CHANNELS, DEFAULT_CHANNEL), then validate.
	$(KUSTOMIZE) build config/manifests | ($(OLM_GO) run ./cmd/bundle-gen \
		--package $(PACKAGE_NAME) --version $(VERSION) --previous-version "$(PREVIOUS_VERSION)" \
		--channels $(CHANNELS) --default-channel $(DEFAULT_CHANNEL) --image $(OPERATOR_IMG) \
		--output-dir $(CURDIR)/bundle --dockerfile $(CURDIR)/bundle.Dockerfile)
	$(MAKE) --no-print-directory bundle-validate

.PHONY: bundle-validate
bundle-validate: ## Validate bundle/ (default + operatorframework suite); fails on any error or warning.
	$(OLM_GO) run ./cmd/bundle-validate $(CURDIR)/bundle

.PHONY: opm
opm: $(OPM) ## Build opm (operator-registry, pinned in hack/olm/go.mod) once per machine.

$(OPM):
	mkdir -p $(OLM_STATIC_DIR)
	$(OLM_GO) build -tags=json1,containers_image_openpgp -ldflags '-s -w' -o $(OPM).tmp \
		github.com/operator-framework/operator-registry/cmd/opm
	mv $(OPM).tmp $(OPM)

$(CPB):
	mkdir -p $(OLM_STATIC_DIR)
	$(OLM_GO) build -ldflags '-s -w' -o $(CPB).tmp $(OLM_RUNTIME_PKG)/util/cpb
	mv $(CPB).tmp $(CPB)

$(OLM_CP): hack/olm/cmd/cp/main.go hack/olm/go.sum
	mkdir -p $(OLM_STATIC_DIR)
	$(OLM_GO) build -ldflags '-s -w' -o $(OLM_CP).tmp ./cmd/cp
	mv $(OLM_CP).tmp $(OLM_CP)

$(GRPC_HEALTH_PROBE):
	mkdir -p $(OLM_STATIC_DIR)/gobin
	cd $(OLM_STATIC_DIR) && GOWORK=off GOBIN=$(OLM_STATIC_DIR)/gobin CGO_ENABLED=0 \
		go install -trimpath -ldflags '-s -w' github.com/grpc-ecosystem/grpc-health-probe@$(GRPC_HEALTH_PROBE_VERSION)
	mv $(OLM_STATIC_DIR)/gobin/grpc-health-probe $(GRPC_HEALTH_PROBE)

.PHONY: catalog-serve
catalog-serve: $(CATALOG_SERVE) ## Build catalog-serve (opm serve's registry, on 127.0.0.1 only) next to opm.

$(CATALOG_SERVE): hack/olm/cmd/catalog-serve/main.go hack/olm/go.sum
	mkdir -p $(OLM_STATIC_DIR)
	$(OLM_GO) build -tags=json1,containers_image_openpgp -ldflags '-s -w' -o $(CATALOG_SERVE).tmp ./cmd/catalog-serve
	mv $(CATALOG_SERVE).tmp $(CATALOG_SERVE)

.PHONY: catalog
# The catalog renderer's inputs (hack/olm/render-catalog.sh).
RENDER_CATALOG = IMAGE_TOOL=$(IMAGE_TOOL) OPM=$(OPM) IMAGE_REPO_BASE=$(IMAGE_REPO_BASE) PACKAGE=$(PACKAGE_NAME) \
	CHANNEL=$(DEFAULT_CHANNEL) DEPRECATED_CHANNELS=$(DEPRECATED_CHANNELS) VERSION=$(VERSION) \
	RELEASED_BUNDLE_DIRS="$(RELEASED_BUNDLE_DIRS)" hack/olm/render-catalog.sh

catalog: $(OPM) $(IMAGE_TOOL) ## Render catalog/ from the bundle images of every released bundle (RELEASES) and bundle/, by digest (opm render of the pushed images).
	@echo "Rendering catalog/$(PACKAGE_NAME)/index.yaml from the bundle images, with $(OPM)"
	$(RENDER_CATALOG) $(CURDIR)/catalog $(IMAGES_DIR)/catalog-bundles
	rm -f catalog.Dockerfile
	$(OPM) generate dockerfile catalog -i $(OPM_IMAGE) -b $(OPM_IMAGE)
	$(MAKE) --no-print-directory catalog-validate

.PHONY: catalog-check
catalog-check: $(OPM) $(IMAGE_TOOL) ## Fail when catalog/ differs from a fresh render (e.g. a bundle image's digest changed).
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	$(RENDER_CATALOG) $$tmp/catalog $$tmp/layouts > /dev/null; \
	diff -ru catalog $$tmp/catalog || { echo "catalog/ differs from a fresh render: run 'make catalog' and commit"; exit 1; }; \
	echo "catalog/ is what the bundle images render to."

# The OLM e2e's catalog: catalog/'s bundles with their manifests inline (opm render of the bundle
# directories), since OLM without a container runtime cannot unpack bundle images.
.PHONY: catalog-inline
catalog-inline: $(OPM) ## Render OLM_E2E_CATALOG_DIR: the bundles of catalog/ inline (image ""), for OLM without a container runtime.
	$(OLM_GO) run ./cmd/catalog-gen --opm $(OPM) --package $(PACKAGE_NAME) --channel $(DEFAULT_CHANNEL) \
		--deprecated-channels "$(DEPRECATED_CHANNELS)" --output $(OLM_E2E_CATALOG_DIR)/$(PACKAGE_NAME)/index.yaml $(addprefix $(CURDIR)/,$(RELEASED_BUNDLE_DIRS)) $(CURDIR)/bundle

catalog-validate: $(OPM) ## Validate catalog/ with opm.
	$(OPM) validate catalog
	@echo "catalog/ is valid."

.PHONY: olm-test
olm-test: export OPM := $(OPM)
olm-test: export KUSTOMIZE := $(KUSTOMIZE)
olm-test: export IMAGE_TOOL := $(IMAGE_TOOL)
olm-test: $(OPM) $(KUSTOMIZE) $(IMAGE_TOOL) ## Go tests of hack/olm (validators, bundle determinism and freshness, catalog), of test/harness/olm and of hack/runbundle (run-bundle).
	$(OLM_GO) test -count=1 ./...
	go test -count=1 ./test/harness/olm/... ./hack/runbundle/...

##@ OLM: run the bundle

.PHONY: run-bundle
run-bundle: $(OPM) $(if $(filter host,$(CATALOG_MODE)),$(CATALOG_SERVE)) | $(LOCALBIN) ## Install bundle/ (or the bundle image BUNDLE_IMG=repo@sha256:...) through OLM into NAMESPACE (INSTALL_MODE, CATALOG_MODE=host|cluster) and wait for the CSV.
	@test -n "$(NAMESPACE)" || { echo "Set NAMESPACE, e.g. make run-bundle NAMESPACE=database-operator"; exit 2; }
	go build -o $(LOCALBIN)/run-bundle ./hack/runbundle/cmd/run-bundle
	$(LOCALBIN)/run-bundle install $(RUN_BUNDLE_FLAGS) --install-mode $(INSTALL_MODE) \
		--catalog-mode $(CATALOG_MODE) --opm $(OPM) --catalog-serve $(CATALOG_SERVE) \
		--port $(RUN_BUNDLE_PORT) --opm-image $(OPM_IMAGE) \
		$(if $(filter command line,$(origin BUNDLE_IMG)),--bundle-image $(BUNDLE_IMG)) \
		$(if $(BUNDLE_IMG_MIRROR),--mirror $(BUNDLE_IMG_MIRROR))

.PHONY: cleanup-bundle
cleanup-bundle: | $(LOCALBIN) ## Remove what run-bundle installed in NAMESPACE (Subscription, CSV, CatalogSource, OperatorGroup) and stop its catalog server.
	@test -n "$(NAMESPACE)" || { echo "Set NAMESPACE, e.g. make cleanup-bundle NAMESPACE=database-operator"; exit 2; }
	go build -o $(LOCALBIN)/run-bundle ./hack/runbundle/cmd/run-bundle
	$(LOCALBIN)/run-bundle cleanup $(RUN_BUNDLE_FLAGS)

##@ OLM e2e

.PHONY: olm-runtime
olm-runtime: $(OLM_RUNTIME_DIR)/.stamp ## Build OLM's olm and catalog binaries (+ its CRDs) once per machine.

# The CRDs are OLM's own (deploy/chart/crds, which has OLMConfig), copied from the module
# cache so that they always match the binaries. "go mod download -json" fetches the module and
# prints its Dir; "go list -m -f {{.Dir}}" prints an empty Dir while the module is not yet in the
# module cache (a fresh machine), which made this recipe copy from /deploy/chart/crds.
$(OLM_RUNTIME_DIR)/.stamp:
	@set -e; start=$$(date +%s); dir=$(OLM_RUNTIME_DIR); \
	cd $(CURDIR)/hack/olm; export $(OLM_GO_ENV); \
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
olm-e2e: build test-env snapshot-env opm catalog-serve catalog-inline olm-runtime $(MANAGER_PREVIOUS) $(GINKGO) ## OLM installs catalog/'s bundles inline (OwnNamespace, SingleNamespace, AllNamespaces; RBAC per mode), upgrade PREVIOUS_VERSION (its released manager) -> VERSION, manager as OLM's ServiceAccount; make run-bundle / cleanup-bundle.
	OLM_BIN_DIR=$(OLM_RUNTIME_DIR) OPM=$(OPM) CATALOG_SERVE=$(CATALOG_SERVE) MANAGER_BIN=$(LOCALBIN)/manager \
		PREVIOUS_MANAGER_BIN=$(MANAGER_PREVIOUS) \
		CATALOG_DIR=$(OLM_E2E_CATALOG_DIR) $(GINKGO) $(OLM_E2E_GINKGO_FLAGS) --tags olm ./test/olme2e

##@ Real node tier: build

.PHONY: node-env
node-env: $(NODE_ENV_DIR)/.stamp ## Build kubelet, kube-proxy, etcd and coredns once per machine into NODE_ENV_DIR.

$(NODE_ENV_DIR)/.stamp: hack/node/go.mod hack/node/go.sum hack/coredns/go.mod hack/coredns/go.sum \
		hack/build-node-env.sh hack/kube-ldflags.sh
	hack/build-node-env.sh $(NODE_ENV_DIR)

# The Debian packages the real node runs (containerd, runc, CNI plugins, iptables, iproute2,
# xfsprogs):
# every target that runs one of them depends on host-packages, so that a new machine has them
# before their first use. Beyond them make test runs only Go, git and what Debian's required and
# build-essential packages hold (docs/development.md, "Host packages").
.PHONY: host-packages
host-packages: ## Install the real node's Debian packages with apt-get when one is missing (root; else says why and does nothing).
	hack/node/install-host-packages.sh

.PHONY: test-env-node
test-env-node: node-env host-packages ## Node tier: binaries, host packages (apt-get, root only), images; prints the paths.
	@if [ "$$(id -u)" != 0 ]; then \
		echo "Real-node tier skipped: it needs root (containerd, kubelet, CNI, iptables); running as $$(id -un)."; \
		exit 0; fi; \
	$(MAKE) --no-print-directory node-images && \
	echo "NODE_ENV_DIR=$(NODE_ENV_DIR)  (kubelet kube-proxy etcd coredns)" && \
	echo "NODE_IMAGES_DIR=$(NODE_IMAGES_DIR)  (images.txt: <tarball> <image ref> per line)" && \
	echo "CONTAINERD=$$(command -v containerd) RUNC=$$(command -v runc) CNI_BIN_DIR=/usr/lib/cni"

.PHONY: node-images
node-images: node-env manager-static echo-ref postgres-image olm-runtime $(MANAGER_PREVIOUS) $(IMAGE_TOOL) $(OPM) $(CPB) $(OLM_CP) $(GRPC_HEALTH_PROBE) ## Build the node images (pause, etcd, testdb, coredns, the operator of PREVIOUS_VERSION and of VERSION) and the registry's (the operator, Echo, PostgreSQL, opm and OLM's images, both bundles, catalog-build's catalog image) into NODE_IMAGES_DIR.
	$(MAKE) --no-print-directory catalog-build CATALOG_IMG=$(NODE_CATALOG_IMG)
	IMAGE_TOOL=$(IMAGE_TOOL) MANAGER_BIN=$(MANAGER_STATIC) PREVIOUS_MANAGER_BIN=$(MANAGER_PREVIOUS) \
		OPM=$(OPM) CPB=$(CPB) OLM_BIN_DIR=$(OLM_RUNTIME_DIR) OLM_CP=$(OLM_CP) OPM_LAYOUT=$(OPM_IMAGE_LAYOUT) CATALOG_LAYOUT=$(IMAGES_DIR)/catalog \
		ECHO_LAYOUT=$(ECHO_IMAGE_LAYOUT) ECHO_IMAGE=$(ECHO_REPO):v$(VERSION) \
		POSTGRES_LAYOUT=$(POSTGRES_IMAGE_LAYOUT) POSTGRES_IMAGE=$(POSTGRES_IMAGE) \
		OPM_IMAGE=$(OPM_IMAGE) OLM_IMAGE=$(OLM_IMAGE) IMAGE_REPO_BASE=$(IMAGE_REPO_BASE) OPERATOR_REPO=$(OPERATOR_REPO) \
		CATALOG_IMAGE=$(NODE_CATALOG_IMG) PREVIOUS_BUNDLE_DIR=$(PREVIOUS_BUNDLE_DIR) RELEASED_BUNDLE_DIRS="$(RELEASED_BUNDLE_DIRS)" CHANNEL=$(DEFAULT_CHANNEL) DEPRECATED_CHANNELS=$(DEPRECATED_CHANNELS) PACKAGE=$(PACKAGE_NAME) \
		VERSION=$(VERSION) PREVIOUS_VERSION=$(PREVIOUS_VERSION) ARCH=$(ARCH) hack/node/build-images.sh $(NODE_IMAGES_DIR)

.PHONY: node-images-push
node-images-push: $(IMAGE_TOOL) ## Push every image the tests pull (NODE_IMAGES_DIR/registry.txt, make node-images) to REGISTRY, under its repository path (REGISTRY_INSECURE=1: plain HTTP beyond loopback).
	@test -n "$(REGISTRY)" || { echo "set REGISTRY=host[:port]"; exit 1; }
	@while read -r layout tag ref; do \
		$(IMAGE_TOOL) push --from $$layout --push $(REGISTRY)/$${tag#*/} $(if $(REGISTRY_INSECURE),--insecure) || exit 1; \
	done < $(NODE_IMAGES_DIR)/registry.txt

node-images-test: node-images host-packages $(IMAGE_TOOL) ## Unit tests of the test programs (and of the registry's verification, with image-tool) and of csisim's sized file systems (xfsprogs, loop devices); import every node image into a throwaway containerd and run them (root).
	IMAGE_TOOL=$(IMAGE_TOOL) go test -count=1 ./test/harness/realnode/ ./test/harness/operands/... ./hack/postgres/entrypoint/
	go test -count=1 -tags node -run TestSizedVolume ./test/harness/csisim/
	VERSION=$(VERSION) PREVIOUS_VERSION=$(PREVIOUS_VERSION) hack/node/images-test.sh $(NODE_IMAGES_DIR)

##@ Real node tier

.PHONY: test-node
test-node: test-env snapshot-env prometheus-env test-env-node olm-runtime $(GINKGO) ## Real node: OLM, deployed on the node, installs the operator from the grpc catalog image, unpacking bundle images pulled by digest from the node's registry; a 3-member etcd rolled, restarted, resized, across the operator's upgrade from PREVIOUS_VERSION (its released manager) and a killed leader; a retained store scaled 1-3-1-3; host restored.
	@if [ "$$(id -u)" != 0 ]; then echo "Real-node tier skipped: it needs root (running as $$(id -un))."; exit 0; fi; \
	OLM_BIN_DIR=$(OLM_RUNTIME_DIR) PROMETHEUS_BIN=$(PROMETHEUS_BIN) IMAGE_TOOL=$(IMAGE_TOOL) \
	OPM=$(OPM) OPM_IMAGE=$(OPM_IMAGE) OLM_IMAGE=$(OLM_IMAGE) \
	CATALOG_IMAGE=$(IMAGE_REPO_BASE)/$(PACKAGE_NAME)-catalog:$(NODE_IMAGE_TAG) OPERATOR_IMAGE=$(OPERATOR_REPO):$(NODE_IMAGE_TAG) ECHO_IMAGE=$(ECHO_REPO):$(NODE_IMAGE_TAG) \
	BUNDLE_IMAGE=$(NODE_BUNDLE_REPO):$(NODE_IMAGE_TAG) PREVIOUS_BUNDLE_IMAGE=$(NODE_BUNDLE_REPO):v$(PREVIOUS_VERSION) \
	POSTGRES_IMAGE=$(POSTGRES_IMAGE) NODE_RELEASE_DIR=$(if $(NODE_RELEASE_DIR),$(abspath $(NODE_RELEASE_DIR))) \
		$(GINKGO) $(NODE_GINKGO_FLAGS) --tags node ./test/nodee2e

##@ Release

# make release VERSION=x.y.z (docs/release.md): the release of the committed tree into
# RELEASE_DIR, its images pushed to REGISTRY (empty: image-tool's registry on 127.0.0.1 for the
# duration of the release), signed with a key pair generated into RELEASE_DIR (COSIGN_PASSWORD
# encrypts it; COSIGN_KEY=<file> COSIGN_PUBLIC_KEY=<file> sign with an existing key instead).
# RELEASE_VERIFY is the check a release must pass first; RELEASE_FUZZ the fuzzing it must pass
# next (make test does not fuzz: see docs/testing.md, Fuzzing), RELEASE_FUZZ_TIME executions of
# each target.
RELEASE_DIR ?= $(LOCALBIN)/release/$(VERSION)
RELEASE_VERIFY ?= $(MAKE) --no-print-directory verify
RELEASE_FUZZ_TIME ?= 10000x
RELEASE_FUZZ ?= $(MAKE) --no-print-directory test-fuzz FUZZ_TIME=$(RELEASE_FUZZ_TIME)
# The SBOM step of make release (release-sbom): "make sbom" into SBOM_DIR, copied into
# RELEASE_DIR/sbom, and attached to every image of the release's list (RELEASE_IMAGES) as an OCI
# referrer by RELEASE_SBOM_ATTACH (sbom-tool attach-release, set with the SBOM targets above;
# empty: not attached). make release runs it after the push and before the signatures, so the
# list holds the images only.
RELEASE_IMAGES ?= $(RELEASE_DIR)/images.txt

.PHONY: release
release: ## Cut release VERSION into RELEASE_DIR: refuses a dirty tree, a failing make verify or failing fuzzing (RELEASE_FUZZ); images pushed by digest to REGISTRY (default: a local registry), bundle, catalog, Helm chart, kubectl-dbc archives + checksums, SBOMs attached as referrers, cosign signatures + SLSA provenance, release notes.
	VERSION=$(VERSION) PREVIOUS_COMMIT=$(PREVIOUS_COMMIT) REGISTRY=$(REGISTRY) REGISTRY_INSECURE=$(REGISTRY_INSECURE) \
	RELEASE_DIR=$(RELEASE_DIR) RELEASE_VERIFY="$(RELEASE_VERIFY)" RELEASE_FUZZ="$(RELEASE_FUZZ)" MAKE="$(MAKE)" \
	IMAGE_TOOL=$(IMAGE_TOOL) IMAGES_DIR=$(IMAGES_DIR) IMAGE_REPO_BASE=$(IMAGE_REPO_BASE) OPERATOR_REPO=$(OPERATOR_REPO) \
	ECHO_REPO=$(ECHO_REPO) PACKAGE_NAME=$(PACKAGE_NAME) HELM_CHART=$(HELM_CHART) \
	OPM=$(OPM) CHANNEL=$(DEFAULT_CHANNEL) DEPRECATED_CHANNELS=$(DEPRECATED_CHANNELS) RELEASED_BUNDLE_DIRS="$(RELEASED_BUNDLE_DIRS)" \
		hack/release/release.sh

.PHONY: release-sbom
release-sbom: ## make release's SBOM step: make sbom, the SBOMs copied into RELEASE_DIR/sbom and attached to the pushed images of RELEASE_IMAGES (RELEASE_SBOM_ATTACH).
	$(MAKE) --no-print-directory sbom VERSION=$(VERSION)
	mkdir -p $(RELEASE_DIR)/sbom
	cp $(SBOM_DIR)/*.cdx.json $(RELEASE_DIR)/sbom/
	$(if $(RELEASE_SBOM_ATTACH),$(RELEASE_SBOM_ATTACH) --registry $(REGISTRY) --list $(RELEASE_IMAGES) --dir $(RELEASE_DIR)/sbom,@echo "release-sbom: RELEASE_SBOM_ATTACH is empty: the SBOMs are not attached to the images")

.PHONY: release-test
release-test: ## Go tests of the release tooling: release notes, and make release refusing a dirty tree or a failing verify.
	go test -count=1 ./hack/release/

##@ Benchmark

.PHONY: bench-build
bench-build: build ## Build the benchmark command (hack/bench) into bin/bench.
	go build -o $(LOCALBIN)/bench ./hack/bench

.PHONY: bench
bench: bench-build test-env snapshot-env ## Scale benchmark: N=100 and 1,000 DatabaseClusters, 5 min idle, leader case; JSON in bench-results/.
	$(LOCALBIN)/bench -manager $(LOCALBIN)/manager $(BENCH_FLAGS)

.PHONY: bench-leader
bench-leader: bench-build test-env snapshot-env ## Leader case only: hand-off (SIGTERM) and takeover (SIGKILL) times, 3 runs each.
	$(LOCALBIN)/bench -manager $(LOCALBIN)/manager -leader-only $(BENCH_LEADER_FLAGS)

.PHONY: bench-smoke
bench-smoke: bench-build test-env snapshot-env ## Benchmark harness smoke run (20 clusters, 20 s idle, one hand-off and one takeover, < 90 s).
	go test ./hack/bench/ ./test/harness/leader/
	$(LOCALBIN)/bench -manager $(LOCALBIN)/manager $(BENCH_SMOKE_FLAGS)

.PHONY: bench-docs
bench-docs: bench-build ## Render the tables of the report docs/benchmarks.md from the JSON results in docs/bench/ (make verify checks them and every figure its text quotes).
	$(LOCALBIN)/bench -render-docs docs/benchmarks.md,docs/bench/README.md -results docs/bench

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
