package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/seed1b407122/database-operator/hack/images"
)

// listImage is one line of an image list (hack/node/build-images.sh's registry.txt, a
// release's images.txt): "<layout> <ref:tag> <ref@sha256:digest>".
type listImage struct {
	layout, tag, digestRef string
}

// repo is the repository of the image as users name it (quay.io/org/name).
func (l listImage) repo() string { return l.digestRef[:strings.LastIndex(l.digestRef, "@")] }

// digest is the image's digest.
func (l listImage) digest() (v1.Hash, error) {
	return v1.NewHash(l.digestRef[strings.LastIndex(l.digestRef, "@")+1:])
}

// isSignature tells the .sig and .att images of a list apart from the images they sign.
func (l listImage) isSignature() bool {
	return strings.HasSuffix(l.tag, ".sig") || strings.HasSuffix(l.tag, ".att")
}

// at is the image's reference by digest in the registry addr (host[:port]): the repository
// path without its host, as the registries here hold them.
func (l listImage) at(addr string) string {
	_, path, _ := strings.Cut(l.digestRef, "/")
	return addr + "/" + path
}

func readList(file string) ([]listImage, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var list []listImage
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) != 3 || !strings.Contains(fields[2], "@sha256:") {
			return nil, fmt.Errorf("%s: %q: want <layout> <ref:tag> <ref@sha256:digest>", file, sc.Text())
		}
		layout := fields[0]
		if !filepath.IsAbs(layout) {
			layout = filepath.Join(filepath.Dir(file), layout)
		}
		list = append(list, listImage{layout: layout, tag: fields[1], digestRef: fields[2]})
	}
	return list, sc.Err()
}

// runKeygen is "image-tool keygen --dir DIR [--keep]": a cosign key pair in DIR, the private
// key encrypted with $COSIGN_PASSWORD (empty when unset, as cosign allows).
func runKeygen(args []string) error {
	fs := flag.NewFlagSet("keygen", flag.ExitOnError)
	dir := fs.String("dir", ".", "directory to write cosign.key and cosign.pub into")
	keep := fs.Bool("keep", false, "keep an existing key pair in DIR instead of failing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *keep && fileExists(filepath.Join(*dir, images.KeyFile)) && fileExists(filepath.Join(*dir, images.PublicKeyFile)) {
		fmt.Printf("keeping the key pair in %s\n", *dir)
		return nil
	}
	if err := images.GenerateKeyPair(*dir, []byte(os.Getenv(images.PasswordEnv))); err != nil {
		return err
	}
	fmt.Printf("key pair written: %s (encrypted with $%s), %s\n", filepath.Join(*dir, images.KeyFile),
		images.PasswordEnv, filepath.Join(*dir, images.PublicKeyFile))
	return nil
}

func fileExists(file string) bool {
	_, err := os.Stat(file)
	return err == nil
}

// runSign is "image-tool sign": signs every image of --list (or each REF@DIGEST argument) with
// --key and attests its provenance. With --registry, pushes repo:sha256-HEX.sig and .att
// next to each image there (the image must be there already); with --out-dir, writes them as
// OCI layouts into that directory and prints their list lines
// ("<layout> <repo>:sha256-HEX.sig <repo>@<digest>") for the registry list.
func runSign(args []string) error {
	fs := flag.NewFlagSet("sign", flag.ExitOnError)
	key := fs.String("key", images.KeyFile, "private key (cosign.key; password in $COSIGN_PASSWORD)")
	list := fs.String("list", "", "image list (<layout> <ref:tag> <ref@digest> per line) whose images to sign")
	reg := fs.String("registry", "", "registry host:port holding the images: push the signatures there")
	insecure := fs.Bool("insecure", false, "plain HTTP for a non-loopback registry")
	outDir := fs.String("out-dir", "", "write the signatures as OCI layouts here and print their list lines")
	var prov images.Provenance
	fs.StringVar(&prov.Commit, "commit", "", "source commit built (40 hex digits; required)")
	fs.StringVar(&prov.SourceURI, "source", "git+https://github.com/seed1b407122/database-operator", "source repository URI")
	fs.StringVar(&prov.Command, "command", "", "build command (required)")
	fs.StringVar(&prov.BuilderID, "builder", "https://github.com/seed1b407122/database-operator/blob/main/Makefile", "builder id (URI)")
	fs.StringVar(&prov.InvocationID, "invocation", "", "invocation id of this build")
	started := fs.Int64("started", 0, "start of the build (Unix seconds; 0: not recorded)")
	var params listFlag
	fs.Var(&params, "param", "KEY=VALUE external parameter of the build; repeatable")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if prov.Commit == "" || prov.Command == "" {
		return errors.New("--commit and --command are required")
	}
	if *reg == "" && *outDir == "" {
		return errors.New("--registry or --out-dir is required")
	}
	var err error
	if prov.Parameters, err = keyValues(params); err != nil {
		return err
	}
	if *started != 0 {
		prov.StartedOn = time.Unix(*started, 0)
	}
	prov.FinishedOn = time.Now()
	targets, err := signTargets(*list, fs.Args())
	if err != nil {
		return err
	}
	sv, err := images.LoadSigner(*key, []byte(os.Getenv(images.PasswordEnv)))
	if err != nil {
		return err
	}
	for _, t := range targets {
		if err := signOne(t, prov, sv, *reg, *insecure, *outDir); err != nil {
			return err
		}
	}
	return nil
}

// signOne signs t and pushes the signatures to reg, writes them into outDir, or both.
func signOne(t listImage, prov images.Provenance, sv signature.SignerVerifier, reg string, insecure bool, outDir string) error {
	h, err := t.digest()
	if err != nil {
		return err
	}
	sg, err := images.SignImage(t.repo(), h, prov, sv)
	if err != nil {
		return err
	}
	if reg != "" {
		if err := images.PushSigned(context.Background(), t.at(reg), sg, insecure); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "signed %s (pushed to %s)\n", t.digestRef, reg)
	}
	if outDir != "" {
		return writeSigned(outDir, t, h, sg)
	}
	return nil
}

// signTargets are the images of the list file (without its signatures) and of the arguments.
func signTargets(list string, refs []string) ([]listImage, error) {
	var targets []listImage
	if list != "" {
		all, err := readList(list)
		if err != nil {
			return nil, err
		}
		for _, l := range all {
			if !l.isSignature() {
				targets = append(targets, l)
			}
		}
	}
	for _, r := range refs {
		if !strings.Contains(r, "@sha256:") {
			return nil, fmt.Errorf("%q: want a reference by digest (repo@sha256:HEX)", r)
		}
		targets = append(targets, listImage{tag: r, digestRef: r})
	}
	if len(targets) == 0 {
		return nil, errors.New("nothing to sign: give --list or REF@DIGEST arguments")
	}
	return targets, nil
}

// writeSigned writes sg's images as OCI layouts under dir and prints their list lines.
func writeSigned(dir string, t listImage, h v1.Hash, sg images.Signed) error {
	for _, s := range []struct {
		suffix string
		img    v1.Image
	}{{"sig", sg.Signature}, {"att", sg.Attestation}} {
		tag := t.repo() + ":" + images.SignatureTag(h, s.suffix)
		layout := filepath.Join(dir, strings.NewReplacer("/", "_", ":", "_").Replace(tag))
		if err := images.WriteLayout(layout, s.img, tag); err != nil {
			return err
		}
		d, err := s.img.Digest()
		if err != nil {
			return err
		}
		abs, err := filepath.Abs(layout)
		if err != nil {
			return err
		}
		fmt.Printf("%s %s %s@%s\n", abs, tag, t.repo(), d)
	}
	return nil
}

// runVerify is "image-tool verify": verifies every image of --list (not its signatures) or
// each REF@DIGEST argument against --key, and fails on the first refusal. The images are read
// from --registry (their repository path there), or, with --serve, from an in-process registry
// on 127.0.0.1 holding every layout of the list (the offline check of a release directory).
func runVerify(args []string) error {
	fs := flag.NewFlagSet("verify", flag.ExitOnError)
	key := fs.String("key", images.PublicKeyFile, "public key (cosign.pub)")
	list := fs.String("list", "", "image list (<layout> <ref:tag> <ref@digest> per line) whose images to verify")
	reg := fs.String("registry", "", "registry host:port the list's images are read from")
	serve := fs.Bool("serve", false, "serve the list's layouts (images and signatures) on 127.0.0.1 and verify there")
	insecure := fs.Bool("insecure", false, "plain HTTP for a non-loopback registry")
	commit := fs.String("commit", "", "the source commit every provenance must name (default: any)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	v, err := images.LoadVerifier(*key)
	if err != nil {
		return err
	}
	var all []listImage
	if *list != "" {
		if all, err = readList(*list); err != nil {
			return err
		}
	}
	addr := *reg
	if *serve {
		r, err := serveLayouts(all)
		if err != nil {
			return err
		}
		defer func() { _ = r.Close() }()
		addr = r.Addr
	}
	refs, err := verifyTargets(all, addr, fs.Args())
	if err != nil {
		return err
	}
	for _, ref := range refs {
		got, err := images.Verify(context.Background(), ref, v, images.VerifyOptions{Insecure: *insecure, Commit: *commit})
		if err != nil {
			return fmt.Errorf("REFUSED %w", err)
		}
		fmt.Printf("verified %s: signed as %s, %s layers, built from %s by %q\n", got.Ref, got.Identity,
			strconv.Itoa(got.Layers), got.Provenance.Commit, got.Provenance.Command)
	}
	fmt.Printf("%d images verified with %s\n", len(refs), *key)
	return nil
}

// serveLayouts serves every layout of list (images and signatures) from an in-process registry
// on 127.0.0.1, under its repository path.
func serveLayouts(list []listImage) (*images.Registry, error) {
	if len(list) == 0 {
		return nil, errors.New("--serve needs a --list with images")
	}
	r, err := images.ServeRegistry("127.0.0.1:0", nil)
	if err != nil {
		return nil, err
	}
	for _, l := range list {
		_, path, _ := strings.Cut(l.tag, "/")
		if _, err := r.PushLayout(context.Background(), l.layout, path); err != nil {
			return nil, errors.Join(err, r.Close())
		}
	}
	return r, nil
}

// verifyTargets are the references to verify: the images of list (not its signatures) in the
// registry addr, then refs.
func verifyTargets(list []listImage, addr string, refs []string) ([]string, error) {
	var out []string
	for _, l := range list {
		if l.isSignature() {
			continue
		}
		if addr == "" {
			return nil, errors.New("--list needs --registry or --serve")
		}
		out = append(out, l.at(addr))
	}
	out = append(out, refs...)
	if len(out) == 0 {
		return nil, errors.New("nothing to verify: give --list or REF@DIGEST arguments")
	}
	return out, nil
}
