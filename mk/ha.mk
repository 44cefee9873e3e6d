# High-availability e2e test: two manager processes with leader election on the local control
# plane (its own cluster, build tag "e2e", ./test/ha). It proves that only the leader writes,
# measures the hand-off after a graceful stop (SIGTERM, the Lease is released) and the takeover
# after a crash (SIGKILL, the Lease expires), and reports both durations. About 1-2 minutes.

##@ HA e2e

.PHONY: test-ha
test-ha: build test-env $(GINKGO) ## Leader election e2e: 2 managers, graceful hand-off and crash takeover.
	MANAGER_BIN=$(LOCALBIN)/manager $(GINKGO) $(GINKGO_FLAGS) --tags e2e ./test/ha
