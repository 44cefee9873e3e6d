# Helm chart: charts/database-operator, the install path for the highly available operator.
# The Helm tooling (helm.sh/helm/v3 as a Go library: render, lint) lives in its own module,
# hack/helm; the operator's go.mod never sees Helm.
#
#   make helm-crds   # copy the CRDs and the manager's ClusterRole rules from config/ into the chart
#   make helm-lint   # helm lint (Go library) with the default and the HA values
#   make helm-template HELM_VALUES=charts/database-operator/ci/ha-values.yaml   # print the manifests
#   make helm-test   # render + lint + drift checks, then install on the local control plane

##@ Helm

HELM_CHART ?= charts/database-operator
# Go commands run inside the hack/helm module.
HELM_GO = cd $(CURDIR)/hack/helm && GOWORK=off go
# Values file(s) of helm-template (space separated) and the release's name and namespace.
HELM_VALUES ?=
HELM_RELEASE ?= database-operator
HELM_NAMESPACE ?= database-operator-system
# Flags of "go test" in helm-test, e.g. HELM_TEST_FLAGS='-run TestRender'.
HELM_TEST_FLAGS ?=

.PHONY: helm-crds
helm-crds: manifests ## Sync the chart with config/: crds/ from config/crd/bases, files/manager-role.yaml from config/rbac/role.yaml.
	rm -f $(HELM_CHART)/crds/*.yaml
	cp config/crd/bases/*.yaml $(HELM_CHART)/crds/
	cp config/rbac/role.yaml $(HELM_CHART)/files/manager-role.yaml

.PHONY: helm-lint
helm-lint: ## Lint the chart (helm lint, via the Go library) with its default and HA values.
	$(HELM_GO) test ./... -count=1 -run 'TestLint' -v

.PHONY: helm-template
helm-template: ## Print the chart's manifests like "helm template --include-crds" (HELM_VALUES, HELM_RELEASE, HELM_NAMESPACE).
	@$(HELM_GO) run ./cmd/helm-template --release $(HELM_RELEASE) --namespace $(HELM_NAMESPACE) \
		$(foreach f,$(HELM_VALUES),-f $(abspath $(f))) $(CURDIR)/$(HELM_CHART)

.PHONY: helm-test
helm-test: test-env ## Test the chart: render (default, HA), lint, drift from config/, install on the local control plane.
	$(HELM_GO) test ./... -count=1 -v -timeout 10m $(HELM_TEST_FLAGS)
