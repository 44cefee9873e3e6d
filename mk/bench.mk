# Scale benchmark of the operator on the local control plane (test/bench, docs/benchmarks.md):
# raw API write rate, time until N DatabaseClusters are Available, the operator's requests per
# cluster (by verb and resource), its writes while idle, its memory. "bench" takes ~15-20 min on
# 2 cores; "bench-smoke" (< 60 s, part of "make test") proves the harness works.

##@ Benchmark

# Flags of test/bench under "make bench" (see bin/bench -help), e.g.
# BENCH_FLAGS="-n 1000 -concurrency 4,16,32 -qps 50,500 -burst 100,1000".
BENCH_FLAGS ?= -n 100,1000 -idle 5m
BENCH_SMOKE_FLAGS ?= -n 20 -idle 20s -raw-duration 2s -fail-on-idle-writes

.PHONY: bench-build
bench-build: build
	go build -o $(LOCALBIN)/bench ./test/bench

.PHONY: bench
bench: bench-build test-env ## Scale benchmark: N=100 and 1,000 DatabaseClusters, 5 min idle; JSON in bench-results/.
	$(LOCALBIN)/bench -manager $(LOCALBIN)/manager $(BENCH_FLAGS)

.PHONY: bench-smoke
bench-smoke: bench-build test-env ## Benchmark harness smoke run (20 clusters, 20 s idle, < 60 s).
	go test ./test/bench/
	$(LOCALBIN)/bench -manager $(LOCALBIN)/manager $(BENCH_SMOKE_FLAGS)
