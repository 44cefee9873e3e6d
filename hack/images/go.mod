module github.com/seed1b407122/database-operator/hack/images

go 1.26

require (
	github.com/google/go-containerregistry v0.21.6
	go.yaml.in/yaml/v3 v3.0.4
)

require (
	github.com/docker/cli v29.4.3+incompatible // indirect
	github.com/docker/docker-credential-helpers v0.9.3 // indirect
	github.com/klauspost/compress v1.18.6 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	github.com/sirupsen/logrus v1.9.4 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.44.0 // indirect
	gotest.tools/v3 v3.5.2 // indirect
)
