// Command image-tool builds the operator, bundle and catalog images without a Docker engine
// (see package images), pushes them, and signs and verifies them as cosign does (a key pair,
// signatures and SLSA provenance attestations next to each image). Used by the Makefile
// (docker-build, bundle-build, catalog-build, node-images, release).
//
//	image-tool operator --binary bin/images/manager-linux-amd64 --dockerfile Dockerfile --arch amd64 \
//	    --tag database-operator:0.2.0 --layout bin/images/database-operator --tarball bin/images/database-operator.tar
//	image-tool bundle --dir bundle --tag database-operator-bundle:0.2.0 --layout bin/images/database-operator-bundle
//	image-tool catalog --dir catalog --dockerfile catalog.Dockerfile [--base REF] --tag ... --layout ...
//	image-tool static --file bin/etcd:/usr/local/bin/etcd --entrypoint /usr/local/bin/etcd \
//	    --user 65532:65532 --tag database-operator.test/etcd:v1 --tarball bin/node-images/etcd-v1.tar
//	image-tool rootfs --dir bin/postgres/rootfs --file bin/pg-entrypoint:/usr/local/bin/entrypoint \
//	    --entrypoint /usr/local/bin/entrypoint --user 65532:65532 --tag ... --layout ...
//	image-tool push --from bin/images/database-operator --push 127.0.0.1:5000/database-operator:0.2.0
//	image-tool registry --addr 10.89.0.1:0 --ready FILE --push LAYOUT=REPO[:TAG]... [-- COMMAND...]
//	image-tool digest --from bin/images/catalog
//	image-tool keygen --dir bin/release/0.4.0 [--keep]          (cosign.key, cosign.pub; $COSIGN_PASSWORD)
//	image-tool sign --key cosign.key --commit SHA --command 'make release VERSION=0.4.0' \
//	    (--registry HOST:PORT | --out-dir DIR) (--list images.txt | REPO@sha256:...)
//	image-tool verify --key cosign.pub [--commit SHA] (--list images.txt (--registry HOST:PORT | --serve) | REPO@sha256:...)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/seed1b407122/database-operator/hack/images"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	if err := run(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "image-tool %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: image-tool operator|bundle|catalog|static|rootfs|push|registry|digest|keygen|sign|verify [flags] (-h for the flags)")
	os.Exit(2)
}

func run(cmd string, args []string) error {
	switch cmd {
	case "registry":
		return runRegistry(args)
	case "digest":
		return printDigest(args)
	case "keygen":
		return runKeygen(args)
	case "sign":
		return runSign(args)
	case "verify":
		return runVerify(args)
	}
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	out := outputs{
		tag:      fs.String("tag", "", "image name:tag recorded in the layout and tarball"),
		layout:   fs.String("layout", "", "write an OCI image layout to this directory (replaced)"),
		tarball:  fs.String("tarball", "", "also write a docker-archive tarball (ctr images import, docker load)"),
		push:     fs.String("push", "", "also push to this reference, e.g. 127.0.0.1:5000/name:tag"),
		insecure: fs.Bool("insecure", false, "plain HTTP for a non-loopback registry"),
	}
	ctx := context.Background()
	build := builder(ctx, cmd, fs, out.insecure)
	if build == nil {
		usage()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	img, err := build()
	if err != nil {
		return err
	}
	return out.write(ctx, img)
}

// builder registers the flags of cmd and returns the function that makes its image.
func builder(ctx context.Context, cmd string, fs *flag.FlagSet, insecure *bool) func() (v1.Image, error) {
	switch cmd {
	case "operator":
		return operatorBuilder(fs)
	case "bundle":
		return bundleBuilder(fs)
	case "catalog":
		return catalogBuilder(ctx, fs, insecure)
	case "static":
		return staticBuilder(fs)
	case "rootfs":
		return rootfsBuilder(fs)
	case "push":
		return pushBuilder(fs)
	}
	return nil
}

// operatorBuilder registers the flags of "operator" and returns the function that makes its image.
func operatorBuilder(fs *flag.FlagSet) func() (v1.Image, error) {
	binary := fs.String("binary", "", "static manager binary (CGO_ENABLED=0)")
	dockerfile := fs.String("dockerfile", "Dockerfile", "Dockerfile whose final stage gives labels, USER, WORKDIR, ENTRYPOINT")
	arch := fs.String("arch", "amd64", "GOARCH of the binary")
	return func() (v1.Image, error) {
		created, err := images.Created()
		if err != nil {
			return nil, err
		}
		return images.OperatorImage(*binary, *dockerfile, *arch, created)
	}
}

// bundleBuilder registers the flags of "bundle" and returns the function that makes its image.
func bundleBuilder(fs *flag.FlagSet) func() (v1.Image, error) {
	dir := fs.String("dir", "bundle", "bundle directory (manifests/, metadata/annotations.yaml)")
	return func() (v1.Image, error) {
		created, err := images.Created()
		if err != nil {
			return nil, err
		}
		return images.BundleImage(*dir, created)
	}
}

// catalogBuilder registers the flags of "catalog" and returns the function that makes its image.
func catalogBuilder(ctx context.Context, fs *flag.FlagSet, insecure *bool) func() (v1.Image, error) {
	dir := fs.String("dir", "catalog", "file-based catalog directory")
	dockerfile := fs.String("dockerfile", "catalog.Dockerfile", "catalog Dockerfile (labels, ENTRYPOINT, CMD)")
	base := fs.String("base", "", "base image in a registry (an opm image); empty: configs layer only")
	baseLayout := fs.String("base-layout", "", "base image from an OCI layout directory instead (image-tool static's opm image)")
	cache := fs.String("cache", "", `pre-built serve cache ("opm serve DIR --cache-dir=CACHE --cache-only"), placed at the CMD's --cache-dir`)
	return func() (v1.Image, error) {
		created, err := images.Created()
		if err != nil {
			return nil, err
		}
		var b v1.Image
		switch {
		case *base != "":
			if b, err = images.Pull(ctx, *base, *insecure); err != nil {
				return nil, fmt.Errorf("base %s: %w", *base, err)
			}
		case *baseLayout != "":
			if b, err = images.ReadLayout(*baseLayout); err != nil {
				return nil, fmt.Errorf("base %s: %w", *baseLayout, err)
			}
		}
		return images.CatalogImage(*dir, *dockerfile, b, *cache, created)
	}
}

// staticBuilder registers the flags of "static" and returns the function that makes its image.
func staticBuilder(fs *flag.FlagSet) func() (v1.Image, error) {
	var files, env, labels listFlag
	fs.Var(&files, "file", "SOURCE:/PATH, a static binary (or other file) and where it goes; repeatable")
	fs.Var(&env, "env", "KEY=VALUE of the image config; repeatable (default: a PATH)")
	fs.Var(&labels, "label", "KEY=VALUE label; repeatable")
	entrypoint := fs.String("entrypoint", "", `entrypoint: a path, or the exec form '["/bin", "arg"]' (default: the first --file, none with --cmd)`)
	cmd := fs.String("cmd", "", `CMD of the image config, a path or the exec form; with --cmd and no --entrypoint the image has no entrypoint, like an upstream image built "CMD [...]"`)
	user := fs.String("user", images.NonRootUser, "USER of the image config (numeric: there is no /etc/passwd)")
	workdir := fs.String("workdir", "/", "WORKDIR of the image config")
	arch := fs.String("arch", "amd64", "GOARCH of the binaries")
	return func() (v1.Image, error) {
		created, err := images.Created()
		if err != nil {
			return nil, err
		}
		cfg := images.Config{User: *user, WorkingDir: *workdir, Architecture: *arch}
		if cfg.Entrypoint, err = parseEntrypoint("--entrypoint", *entrypoint); err != nil {
			return nil, err
		}
		if cfg.Cmd, err = parseEntrypoint("--cmd", *cmd); err != nil {
			return nil, err
		}
		if cfg.Cmd != nil && cfg.Entrypoint == nil {
			cfg.Entrypoint = []string{} // no entrypoint: the CMD is the program
		}
		if len(env) > 0 {
			cfg.Env = env
		}
		if cfg.Labels, err = keyValues(labels); err != nil {
			return nil, err
		}
		fl, err := parseFiles(files)
		if err != nil {
			return nil, err
		}
		return images.StaticImage(fl, cfg, created)
	}
}

// parseFiles parses the --file flags, SOURCE:/PATH each.
func parseFiles(files listFlag) ([]images.File, error) {
	var fl []images.File
	for _, f := range files {
		src, dst, ok := strings.Cut(f, ":")
		if !ok || src == "" || dst == "" {
			return nil, fmt.Errorf("--file %q: want SOURCE:/PATH", f)
		}
		fl = append(fl, images.File{Source: src, Path: dst})
	}
	return fl, nil
}

// rootfsBuilder registers the flags of "rootfs" and returns the function that makes its image.
func rootfsBuilder(fs *flag.FlagSet) func() (v1.Image, error) {
	dir := fs.String("dir", "", "directory tree that becomes the image's root (e.g. Debian packages unpacked with dpkg-deb -x)")
	var files, env, labels listFlag
	fs.Var(&files, "file", "SOURCE:/PATH, a file added to the tree (mode 0755); repeatable")
	fs.Var(&env, "env", "KEY=VALUE of the image config; repeatable (default: a PATH)")
	fs.Var(&labels, "label", "KEY=VALUE label; repeatable")
	entrypoint := fs.String("entrypoint", "", `entrypoint: a path, or the exec form '["/bin", "arg"]'`)
	cmd := fs.String("cmd", "", `CMD of the image config, a path or the exec form`)
	user := fs.String("user", images.NonRootUser, "USER of the image config")
	workdir := fs.String("workdir", "/", "WORKDIR of the image config")
	arch := fs.String("arch", "amd64", "architecture of the tree's binaries")
	return func() (v1.Image, error) {
		if *dir == "" {
			return nil, fmt.Errorf("--dir is required")
		}
		created, err := images.Created()
		if err != nil {
			return nil, err
		}
		cfg := images.Config{User: *user, WorkingDir: *workdir, Architecture: *arch}
		if cfg.Entrypoint, err = parseEntrypoint("--entrypoint", *entrypoint); err != nil {
			return nil, err
		}
		if cfg.Cmd, err = parseEntrypoint("--cmd", *cmd); err != nil {
			return nil, err
		}
		if len(env) > 0 {
			cfg.Env = env
		}
		if cfg.Labels, err = keyValues(labels); err != nil {
			return nil, err
		}
		fl, err := parseFiles(files)
		if err != nil {
			return nil, err
		}
		return images.RootfsImage(*dir, fl, cfg, created)
	}
}

// pushBuilder registers the flags of "push" and returns the function that makes its image.
func pushBuilder(fs *flag.FlagSet) func() (v1.Image, error) {
	from := fs.String("from", "", "OCI layout directory to push (written by this tool)")
	return func() (v1.Image, error) {
		if *from == "" {
			return nil, fmt.Errorf("--from is required")
		}
		return images.ReadLayout(*from)
	}
}

// outputs are where an image goes: an OCI layout, a docker-archive tarball, a registry.
type outputs struct {
	tag, layout, tarball, push *string
	insecure                   *bool
}

func (o outputs) write(ctx context.Context, img v1.Image) error {
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	if (*o.layout != "" || *o.tarball != "") && *o.tag == "" {
		return fmt.Errorf("--layout and --tarball need --tag")
	}
	if *o.layout != "" {
		if err := images.WriteLayout(*o.layout, img, *o.tag); err != nil {
			return err
		}
		fmt.Printf("%s %s -> %s (OCI layout)\n", *o.tag, digest, *o.layout)
	}
	if *o.tarball != "" {
		if err := images.WriteTarball(*o.tarball, img, *o.tag); err != nil {
			return err
		}
		fmt.Printf("%s %s -> %s (docker-archive)\n", *o.tag, digest, *o.tarball)
	}
	if *o.push != "" {
		ref, err := images.Push(ctx, img, *o.push, *o.insecure)
		if err != nil {
			return err
		}
		fmt.Printf("pushed %s@%s\n", ref, digest)
	}
	return nil
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// parseEntrypoint reads --entrypoint or --cmd (flag): empty (the default), a JSON array, or a
// single path.
func parseEntrypoint(flag, s string) ([]string, error) {
	switch {
	case s == "":
		return nil, nil
	case strings.HasPrefix(s, "["):
		var argv []string
		if err := json.Unmarshal([]byte(s), &argv); err != nil || len(argv) == 0 {
			return nil, fmt.Errorf("%s %q: want a non-empty JSON array of strings", flag, s)
		}
		return argv, nil
	}
	return []string{s}, nil
}

// keyValues turns KEY=VALUE flags into a map.
func keyValues(kvs []string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want KEY=VALUE", kv)
		}
		m[k] = v
	}
	return m, nil
}

// printDigest is "image-tool digest --from LAYOUT": prints the digest of the layout's image.
func printDigest(args []string) error {
	fs := flag.NewFlagSet("digest", flag.ExitOnError)
	from := fs.String("from", "", "OCI layout directory (written by this tool)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	img, err := images.ReadLayout(*from)
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Println(digest)
	return nil
}
