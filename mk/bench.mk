# Scale benchmark of the operator on the local control plane (hack/bench, docs/benchmarks.md):
# raw API write rate, time until N DatabaseClusters are Available, the operator's requests per
# cluster (by verb and resource), its writes while idle, its memory; and the leader case (the
# harness of test/harness/leader, shared with test/ha): graceful hand-off and crash takeover
# between 2 managers with leader election. "bench" takes ~15-20 min on 2 cores, "bench-leader"
# ~2 min; "bench-smoke" (< 90 s, part of "make test") proves the harness works.

##@ Benchmark

# Flags of hack/bench under "make bench" (see bin/bench -help), e.g.
# BENCH_FLAGS="-n 1000 -concurrency 4,16,32 -qps 50,500 -burst 100,1000".
BENCH_FLAGS ?= -n 100,1000 -idle 5m -leader
BENCH_SMOKE_FLAGS ?= -n 20 -idle 20s -raw-duration 2s -fail-on-idle-writes -leader -leader-repeat 1
BENCH_LEADER_FLAGS ?= -leader-repeat 3

.PHONY: bench-build
bench-build: build
	go build -o $(LOCALBIN)/bench ./hack/bench

.PHONY: bench
bench: bench-build test-env ## Scale benchmark: N=100 and 1,000 DatabaseClusters, 5 min idle, leader case; JSON in bench-results/.
	$(LOCALBIN)/bench -manager $(LOCALBIN)/manager $(BENCH_FLAGS)

.PHONY: bench-leader
bench-leader: bench-build test-env ## Leader case only: hand-off (SIGTERM) and takeover (SIGKILL) times, 3 runs each.
	$(LOCALBIN)/bench -manager $(LOCALBIN)/manager -leader-only $(BENCH_LEADER_FLAGS)

.PHONY: bench-smoke
bench-smoke: bench-build test-env ## Benchmark harness smoke run (20 clusters, 20 s idle, one hand-off and one takeover, < 90 s).
	go test ./hack/bench/ ./test/harness/leader/
	$(LOCALBIN)/bench -manager $(LOCALBIN)/manager $(BENCH_SMOKE_FLAGS)
