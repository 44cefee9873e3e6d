#!/usr/bin/env bash
# Checks the layout rule of docs/development.md ("Layout") over "go list" of every package of the module
# (all build tags, test imports included). Part of "make verify"; exits 1 on a broken rule.
#   1. The product's code (main.go, api/, controllers/, cmd/) imports nothing from test/ or hack/,
#      and no test framework (testing, Ginkgo, Gomega, envtest): test support lives in
#      test/harness/. Its tests may import harness libraries, never a suite or hack/.
#   2. Harness libraries (test/harness/...) never import a suite or hack/.
#   3. Suites (test/e2e, test/ha, test/faults, test/olme2e, test/nodee2e) hold only *_test.go
#      files; nothing imports a suite.
#   4. Commands and their libraries (hack/...) never import a suite.
#   5. No two packages share a name (main and the API version packages aside).
#   6. Every file of a suite carries its suite's build tag (the "//go:build" line of its
#      suite_test.go), so that "go vet ./..." and "go test ./..." without tags compile and skip it.
#   7. The front page and the benchmark report stay short: README.md at most 200 lines,
#      docs/benchmarks.md at most 450 (a report leads with its conclusions and current figures;
#      per-run tables and the history go to the index of runs, docs/bench/README.md). Checked
#      first, and alone with DOCS_ONLY=1; DOCS_ROOT=<dir> checks the copies under <dir> instead.
#   8. The pure layer (PURE_PACKAGES: the desired objects, the comparator, the deciders) depends
#      on no client: none of its dependencies is controller-runtime's client or cache, client-go,
#      or a package of the module outside the API, the pure layer and the leaf helpers it may use
#      (PURE_ALLOWED). The phases are the only code that reads or writes the API.
set -euo pipefail
cd "$(dirname "$0")/.."
docs_root=${DOCS_ROOT:-.}
for limit in "README.md:200:keep the front page to what the project is and where to read on; the detail goes to docs/" \
  "docs/benchmarks.md:450:lead with the conclusions and the current figures; move per-run tables and the entries of What was tried to docs/bench/README.md"; do
  IFS=: read -r doc max hint <<< "$limit"
  lines=$(wc -l < "$docs_root/$doc")
  if [ "$lines" -gt "$max" ]; then
    echo "rule 7: $doc has $lines lines, more than $max: $hint"
    bad7=1
  fi
done
if [ -n "${bad7:-}" ]; then echo "The layout rule is broken (rule 7, the length of the front page and the report)."; exit 1; fi
if [ -n "${DOCS_ONLY:-}" ]; then echo "Rule 7 holds: README.md and docs/benchmarks.md are within their limits."; exit 0; fi
module=$(go list -m)
suites="test/e2e test/ha test/faults test/olme2e test/nodee2e"
# The imports of the package's own files and of its tests are two fields, each led by a comma (so
# that an empty list is still a field).
format='{{.ImportPath}} {{.Name}} {{len .GoFiles}} ,{{join .Imports ","}} ,{{join .TestImports ","}},{{join .XTestImports ","}}'
# The root module, and the tools module that imports it (hack/helm: the Helm test).
listing=$(go list -tags 'e2e olm node' -f "$format" ./...; cd hack/helm && GOWORK=off go list -f "$format" ./...)

awk -v module="$module" -v suites="$suites" '
BEGIN {
  n = split(suites, s, " ")
  for (i = 1; i <= n; i++) suite[module "/" s[i]] = 1
}
{
  pkg = $1; name = $2; gofiles = $3
  rel = pkg == module ? "." : substr(pkg, length(module) + 2)
  product = rel == "." || rel ~ /^(api|controllers|cmd)(\/|$)/
  harness = rel ~ /^test\/harness\//
  if (pkg in suite && gofiles > 0) {
    printf "rule 3: suite %s has non-test files\n", rel; bad = 1
  }
  if (name != "main" && name !~ /^v[0-9]+((alpha|beta)[0-9]+)?$/ && !(name ~ /_test$/)) {
    if (name in owner && owner[name] != rel) {
      printf "rule 5: package name %s is used by %s and %s\n", name, owner[name], rel; bad = 1
    }
    owner[name] = rel
  }
  m = split($4, imports, ",")
  n = split($5, testImports, ",")
  for (i = 1; i <= m + n; i++) {
    ofTests = i > m
    imp = ofTests ? testImports[i - m] : imports[i]
    if (product && !ofTests && imp ~ /^(testing|github\.com\/onsi\/(ginkgo|gomega)|sigs\.k8s\.io\/controller-runtime\/pkg\/envtest)(\/|$)/) {
      printf "rule 1: %s imports the test framework %s outside its tests\n", rel, imp; bad = 1
    }
    if (imp == "" || index(imp, module "/") != 1 || imp == pkg) continue
    to = substr(imp, length(module) + 2)
    if (product && !ofTests && to ~ /^(test|hack)\//) { printf "rule 1: %s imports %s\n", rel, to; bad = 1 }
    if (product && ofTests && to ~ /^hack\//) { printf "rule 1: the tests of %s import %s\n", rel, to; bad = 1 }
    if (harness && to ~ /^hack\//) { printf "rule 2: %s imports %s\n", rel, to; bad = 1 }
    if (imp in suite) { printf "rule 3/4: %s imports the suite %s\n", rel, to; bad = 1 }
  }
}
END {
  if (bad) { print "The layout rule is broken (docs/development.md, Layout)."; exit 1 }
}' <<< "$listing"
for s in $suites; do
  want=$(grep -m1 '^//go:build' "$s/suite_test.go" || true)
  if [ -z "$want" ]; then echo "rule 6: $s/suite_test.go has no build tag"; exit 1; fi
  for f in "$s"/*.go; do
    if [ "$(grep -m1 '^//go:build' "$f" || true)" != "$want" ]; then
      echo "rule 6: $f does not carry its suite's build tag ($want)"; bad6=1
    fi
  done
done
if [ -n "${bad6:-}" ]; then echo "The layout rule is broken (docs/development.md, Layout)."; exit 1; fi
pure=${PURE_PACKAGES:-./controllers/databasecluster/specs ./controllers/databasecluster/roles}
allowed="$module/api/ $module/controllers/databasecluster/specs $module/controllers/databasecluster/roles $module/controllers/internal/certs \
$module/controllers/internal/podsecurity $module/controllers/storageagent"
for dep in $(go list -deps $pure); do
  case "$dep" in
    sigs.k8s.io/controller-runtime/pkg/client* | sigs.k8s.io/controller-runtime/pkg/cache* | k8s.io/client-go/*)
      echo "rule 8: the pure layer ($pure) depends on $dep"; bad8=1 ;;
    "$module"/*)
      ok=""
      for a in $allowed; do case "$dep" in "$a"*) ok=1 ;; esac; done
      if [ -z "$ok" ]; then echo "rule 8: the pure layer ($pure) depends on $dep, which is not pure"; bad8=1; fi ;;
  esac
done
if [ -n "${bad8:-}" ]; then echo "The layout rule is broken (rule 8: the pure layer reads and writes nothing)."; exit 1; fi
echo "Layout rule holds ($(wc -l <<< "$listing") packages)."
