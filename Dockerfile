# The operator image: a static binary on distroless, running as a non-root user.
# Build: make docker-build IMG=database-operator:0.1.0 (needs a Docker engine).
FROM golang:1.26 AS builder
ARG TARGETOS
ARG TARGETARCH
WORKDIR /workspace
# Dependencies first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY main.go main.go
COPY api/ api/
COPY controllers/ controllers/
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath -ldflags="-s -w" -o manager .

FROM gcr.io/distroless/static:nonroot
LABEL org.opencontainers.image.title="database-operator" \
      org.opencontainers.image.description="Runs stateful DatabaseClusters on Kubernetes" \
      org.opencontainers.image.source="https://github.com/seed1b407122/database-operator" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /
COPY --from=builder /workspace/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
