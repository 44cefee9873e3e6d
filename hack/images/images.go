// Package images builds the project's three OCI images without a Docker engine, with
// go-containerregistry as a library:
//
//   - the operator image: the static manager binary as /manager on an empty base, with the
//     labels, USER, WORKDIR and ENTRYPOINT of ../../Dockerfile's final stage;
//   - the bundle image: bundle/ (manifests/, metadata/, tests/scorecard/) at the image root,
//     labelled with every annotation of bundle/metadata/annotations.yaml (bundle.Dockerfile);
//   - the catalog image: catalog/ at /configs, labelled like catalog.Dockerfile. Its real base is
//     the opm image, which is unreachable here: without a base the image carries only the
//     configs layer (enough for registry-side tests and "opm render"); see CatalogImage;
//   - static images for the real-node tier (StaticImage): static binaries on an empty base with a
//     given entrypoint and user (the CRI pause image, etcd, the test database, CoreDNS).
//
// Images are reproducible: every timestamp is Created (SOURCE_DATE_EPOCH or the epoch), files are
// written in lexical order with uid/gid 0, so the same inputs give the same digests.
package images

import (
	"archive/tar"
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"go.yaml.in/yaml/v3"
)

const (
	// NonRootUser is distroless' "nonroot" user, numeric: runAsNonRoot can check it without
	// reading /etc/passwd.
	NonRootUser = "65532:65532"
	// CatalogConfigsLabel names the directory of the file-based catalog inside a catalog image.
	CatalogConfigsLabel = "operators.operatorframework.io.index.configs.v1"
)

// Created returns the time stamped into images: SOURCE_DATE_EPOCH when set, else the epoch.
func Created() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", s, err)
	}
	return time.Unix(n, 0).UTC(), nil
}

// Stage is what the final stage of a Dockerfile sets on the image config.
type Stage struct {
	From       string
	Labels     map[string]string
	User       string
	WorkingDir string
	Entrypoint []string
	Cmd        []string
	// Copies are the COPY/ADD instructions' [sources..., destination], flags dropped.
	Copies [][]string
}

// ParseDockerfile reads the final stage of a Dockerfile: FROM, LABEL (key=value, quoted or not),
// USER, WORKDIR, ENTRYPOINT and CMD (exec form), COPY and ADD. It is not a full Dockerfile parser,
// only enough for this project's three Dockerfiles; unknown instructions are ignored.
func ParseDockerfile(file string) (*Stage, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var st *Stage
	for _, l := range logicalLines(data) {
		instr, rest, _ := strings.Cut(l, " ")
		instr, rest = strings.ToUpper(instr), strings.TrimSpace(rest)
		if instr == "FROM" {
			st = &Stage{Labels: map[string]string{}}
			if from := strings.Fields(rest); len(from) > 0 {
				st.From = from[0]
			}
			continue
		}
		if st == nil {
			return nil, fmt.Errorf("%s: %s before FROM", file, instr)
		}
		if err := st.apply(instr, rest); err != nil {
			return nil, fmt.Errorf("%s: %q: %w", file, l, err)
		}
	}
	if st == nil {
		return nil, fmt.Errorf("%s: no FROM", file)
	}
	return st, nil
}

// logicalLines joins backslash continuations and drops comments and blank lines.
func logicalLines(data []byte) []string {
	var lines []string
	var cur strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") || (l == "" && cur.Len() == 0) {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSuffix(l, "\\"))
			cur.WriteString(" ")
			continue
		}
		cur.WriteString(l)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

// apply records one instruction (upper case) of the stage.
func (st *Stage) apply(instr, rest string) error {
	switch instr {
	case "LABEL":
		words, err := splitWords(rest)
		if err != nil {
			return err
		}
		for _, w := range words {
			k, v, ok := strings.Cut(w, "=")
			if !ok {
				return fmt.Errorf("LABEL %q: only key=value is supported", w)
			}
			st.Labels[k] = v
		}
	case "USER":
		st.User = rest
	case "WORKDIR":
		st.WorkingDir = rest
	case "ENTRYPOINT", "CMD":
		var argv []string
		if err := json.Unmarshal([]byte(rest), &argv); err != nil {
			return fmt.Errorf("%s must use the exec (JSON) form: %w", instr, err)
		}
		if instr == "ENTRYPOINT" {
			st.Entrypoint = argv
		} else {
			st.Cmd = argv
		}
	case "COPY", "ADD":
		var args []string
		for _, f := range strings.Fields(rest) {
			if !strings.HasPrefix(f, "--") {
				args = append(args, f)
			}
		}
		st.Copies = append(st.Copies, args)
	}
	return nil
}

// splitWords splits on blanks, honouring double quotes and backslash escapes inside them.
func splitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
		case c == '"':
			quoted = !quoted
			inWord = true
		case !quoted && (c == ' ' || c == '\t'):
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unterminated quote")
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// ReadAnnotations returns the annotations of a bundle's metadata/annotations.yaml.
func ReadAnnotations(file string) (map[string]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Annotations map[string]string `yaml:"annotations"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Annotations) == 0 {
		return nil, fmt.Errorf("%s: no annotations", file)
	}
	return doc.Annotations, nil
}

// entry is one file, directory or symbolic link of a layer.
type entry struct {
	name string // relative, slash separated, no leading slash; directories end in "/"
	mode int64
	data []byte
	uid  int    // owner (uid and gid); 0: root
	link string // target of a symbolic link; empty for files and directories
}

// layer builds a gzip'd OCI layer from entries, adding missing parent directories.
func layer(entries []entry, created time.Time) (v1.Layer, error) {
	seen := map[string]bool{}
	var all []entry
	for _, e := range entries {
		dir := strings.TrimSuffix(e.name, "/")
		var parents []entry
		for d := path.Dir(dir); d != "." && d != "/" && !seen[d+"/"]; d = path.Dir(d) {
			seen[d+"/"] = true
			parents = append([]entry{{name: d + "/", mode: 0o755}}, parents...)
		}
		all = append(all, parents...)
		if strings.HasSuffix(e.name, "/") {
			if seen[e.name] {
				continue
			}
			seen[e.name] = true
		}
		all = append(all, e)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range all {
		hdr := &tar.Header{
			Name:     e.name,
			Mode:     e.mode,
			ModTime:  created,
			Typeflag: tar.TypeReg,
			Size:     int64(len(e.data)),
			Uid:      e.uid,
			Gid:      e.uid,
			Format:   tar.FormatPAX,
		}
		switch {
		case strings.HasSuffix(e.name, "/"):
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		case e.link != "":
			hdr.Typeflag, hdr.Size, hdr.Linkname = tar.TypeSymlink, 0, e.link
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// dirEntries returns the files under dir, named prefix + their path relative to dir. Only
// regular files and directories are allowed; executables keep mode 0755, others get 0644.
func dirEntries(dir, prefix string) ([]entry, error) {
	var out []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := path.Join(prefix, filepath.ToSlash(rel))
		if d.IsDir() {
			if name != "." && name != "" {
				out = append(out, entry{name: name + "/", mode: 0o755})
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		mode := int64(0o644)
		if info.Mode()&0o111 != 0 {
			mode = 0o755
		}
		out = append(out, entry{name: name, mode: mode, data: data})
		return nil
	})
	return out, err
}

// defaultPath is the PATH of an image whose config names none.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Config is what an image built here sets on its config.
type Config struct {
	Labels     map[string]string
	User       string
	WorkingDir string
	Entrypoint []string
	Cmd        []string
	Env        []string
	// Platform; OS defaults to linux, Architecture to amd64.
	OS, Architecture string
	// History comment of the layer.
	CreatedBy string
}

// assemble appends l to base (an empty OCI image when nil) and sets cfg and created.
func assemble(base v1.Image, l v1.Layer, cfg Config, created time.Time) (v1.Image, error) {
	if base == nil {
		base = mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	}
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     l,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: created}, CreatedBy: cfg.CreatedBy},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = cfg.OS, cfg.Architecture
	if cf.OS == "" {
		cf.OS = "linux"
	}
	if cf.Architecture == "" {
		cf.Architecture = "amd64"
	}
	if cf.Config.Labels == nil {
		cf.Config.Labels = map[string]string{}
	}
	for k, v := range cfg.Labels {
		cf.Config.Labels[k] = v
	}
	if cfg.User != "" {
		cf.Config.User = cfg.User
	}
	if cfg.WorkingDir != "" {
		cf.Config.WorkingDir = cfg.WorkingDir
	}
	if cfg.Entrypoint != nil {
		cf.Config.Entrypoint = cfg.Entrypoint
		cf.Config.Cmd = nil // as in Docker: a new ENTRYPOINT resets the base's CMD
	}
	if cfg.Cmd != nil {
		cf.Config.Cmd = cfg.Cmd
	}
	if cfg.Env != nil {
		cf.Config.Env = cfg.Env
	}
	cf.Created = v1.Time{Time: created}
	return mutate.ConfigFile(img, cf)
}

// OperatorImage builds the operator image from the static manager binary and the final stage of
// the operator's Dockerfile (labels, USER, WORKDIR, ENTRYPOINT). The base is empty: the binary is
// static, so no shell or libc is needed; the layer adds /tmp (1777) and distroless' /etc/passwd
// and /etc/group (see accounts). arch is the binary's GOARCH.
func OperatorImage(binary, dockerfile, arch string, created time.Time) (v1.Image, error) {
	st, err := ParseDockerfile(dockerfile)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	entrypoint := st.Entrypoint
	if len(entrypoint) == 0 {
		return nil, fmt.Errorf("%s: no ENTRYPOINT", dockerfile)
	}
	bin := strings.TrimPrefix(entrypoint[0], "/")
	entries := append(accounts(), entry{name: bin, mode: 0o755, data: data}, tmpDir())
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	l, err := layer(entries, created)
	if err != nil {
		return nil, err
	}
	user := st.User
	if user == "" {
		user = NonRootUser
	}
	return assemble(nil, l, Config{
		Labels:       st.Labels,
		User:         user,
		WorkingDir:   st.WorkingDir,
		Entrypoint:   entrypoint,
		Env:          []string{defaultPath},
		Architecture: arch,
		CreatedBy:    "hack/images: COPY manager /" + bin,
	}, created)
}

// accounts are distroless' /etc/passwd and /etc/group. A numeric USER is not enough on a real
// node: the kubelet passes only the image's uid to the runtime (runAsUser), and containerd takes
// the primary group from the image's /etc/passwd, or 0 without one. With these files a
// USER 65532:65532 process runs with gid 65532, as on distroless, not with gid 0.
func accounts() []entry {
	return []entry{
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n")},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\n" +
			"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
			"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
	}
}

// File is a host file placed into a StaticImage.
type File struct {
	// Source is the file on the host.
	Source string
	// Path is where it goes in the image, absolute (e.g. /usr/local/bin/etcd).
	Path string
}

// StaticImage builds an image of static binaries on an empty base, like OperatorImage but with
// the config given instead of read from a Dockerfile: the real-node tier's images (pause, etcd,
// testdb, coredns). Every file that is an ELF executable must be static (no interpreter, no
// shared libraries): there is no libc in the image. Files keep mode 0755; /tmp (1777),
// /etc/passwd and /etc/group are added like distroless has them (see accounts). cfg.Env
// defaults to a PATH, cfg.User to NonRootUser, cfg.WorkingDir to /, cfg.Entrypoint to the
// first file.
func StaticImage(files []File, cfg Config, created time.Time) (v1.Image, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("no files")
	}
	entries := make([]entry, 0, len(files)+1)
	var paths []string
	for _, f := range files {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || f.Path == "/" {
			return nil, fmt.Errorf("%s: image path %q must be absolute and clean", f.Source, f.Path)
		}
		data, err := os.ReadFile(f.Source)
		if err != nil {
			return nil, err
		}
		if err := checkStatic(data); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Source, err)
		}
		entries = append(entries, entry{name: strings.TrimPrefix(f.Path, "/"), mode: 0o755, data: data})
		paths = append(paths, f.Path)
	}
	entries = append(entries, tmpDir())
	entries = append(entries, accounts()...)
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	l, err := layer(entries, created)
	if err != nil {
		return nil, err
	}
	if cfg.User == "" {
		cfg.User = NonRootUser
	}
	if cfg.WorkingDir == "" {
		cfg.WorkingDir = "/"
	}
	if cfg.Entrypoint == nil {
		cfg.Entrypoint = []string{files[0].Path}
	}
	if cfg.Env == nil {
		cfg.Env = []string{defaultPath}
	}
	if cfg.CreatedBy == "" {
		cfg.CreatedBy = "hack/images: COPY " + strings.Join(paths, " ")
	}
	return assemble(nil, l, cfg, created)
}

// RootfsImage builds an image of a directory tree (e.g. Debian packages unpacked with dpkg-deb
// -x) plus files (static binaries, e.g. an entrypoint): the tree's regular files keep their
// permission bits, its symbolic links their targets, and everything is owned by root. /tmp (1777)
// is added, and distroless' /etc/passwd and /etc/group unless the tree has its own. Other file
// types (devices, sockets, hard links' second names are plain copies) are refused. cfg defaults
// as in StaticImage, except that the entrypoint must be given.
func RootfsImage(dir string, files []File, cfg Config, created time.Time) (v1.Image, error) {
	if cfg.Entrypoint == nil && cfg.Cmd == nil {
		return nil, fmt.Errorf("a rootfs image needs an entrypoint or a command")
	}
	entries, err := treeEntries(dir)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, e := range entries {
		have[e.name] = true
	}
	added, paths, err := addedFiles(files, have)
	if err != nil {
		return nil, fmt.Errorf("adding to the tree %s: %w", dir, err)
	}
	entries = append(entries, added...)
	if !have["tmp/"] {
		entries = append(entries, tmpDir())
	}
	for _, a := range accounts() {
		if !have[a.name] {
			entries = append(entries, a)
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	l, err := layer(entries, created)
	if err != nil {
		return nil, err
	}
	if cfg.CreatedBy == "" {
		cfg.CreatedBy = "hack/images: COPY " + filepath.Base(dir) + " / " + strings.Join(paths, " ")
	}
	return assemble(nil, l, rootfsDefaults(cfg), created)
}

// rootfsDefaults fills in what RootfsImage's config leaves empty: the user, the working
// directory and a PATH.
func rootfsDefaults(cfg Config) Config {
	if cfg.User == "" {
		cfg.User = NonRootUser
	}
	if cfg.WorkingDir == "" {
		cfg.WorkingDir = "/"
	}
	if cfg.Env == nil {
		cfg.Env = []string{defaultPath}
	}
	return cfg
}

// addedFiles are the entries of files (mode 0755) and their image paths; a path that the tree
// (have) holds already is refused, and recorded in have otherwise.
func addedFiles(files []File, have map[string]bool) ([]entry, []string, error) {
	var entries []entry
	var paths []string
	for _, f := range files {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || f.Path == "/" {
			return nil, nil, fmt.Errorf("%s: image path %q must be absolute and clean", f.Source, f.Path)
		}
		data, err := os.ReadFile(f.Source)
		if err != nil {
			return nil, nil, err
		}
		name := strings.TrimPrefix(f.Path, "/")
		if have[name] {
			return nil, nil, fmt.Errorf("%s: %s is there already", f.Source, f.Path)
		}
		have[name] = true
		entries = append(entries, entry{name: name, mode: 0o755, data: data})
		paths = append(paths, f.Path)
	}
	return entries, paths, nil
}

// treeEntries returns the directories, regular files (with their permission bits) and symbolic
// links under dir, named by their path relative to dir.
func treeEntries(dir string) ([]entry, error) {
	var out []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		name := filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		perm := int64(info.Mode().Perm())
		switch {
		case d.IsDir():
			out = append(out, entry{name: name + "/", mode: perm})
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out = append(out, entry{name: name, mode: 0o777, link: target})
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out = append(out, entry{name: name, mode: perm, data: data})
		default:
			return fmt.Errorf("%s: not a regular file, directory or symbolic link", p)
		}
		return nil
	})
	return out, err
}

// checkStatic refuses an ELF file that needs a dynamic loader or shared libraries; other files
// (scripts, data) pass.
func checkStatic(data []byte) error {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil // not ELF
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			return fmt.Errorf("not a static executable (%s program header): build it with CGO_ENABLED=0", p.Type)
		}
	}
	return nil
}

// BundleImage builds the bundle image: every file of dir (a bundle: manifests/, metadata/,
// tests/scorecard/) at the image root, labelled with all of metadata/annotations.yaml.
func BundleImage(dir string, created time.Time) (v1.Image, error) {
	labels, err := ReadAnnotations(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return nil, err
	}
	entries, err := dirEntries(dir, "")
	if err != nil {
		return nil, err
	}
	l, err := layer(entries, created)
	if err != nil {
		return nil, err
	}
	return assemble(nil, l, Config{Labels: labels, CreatedBy: "hack/images: COPY bundle/ /"}, created)
}

// CatalogImage builds the catalog image: dir (the file-based catalog) at the directory the
// catalog Dockerfile's CatalogConfigsLabel names (/configs), with that Dockerfile's labels.
//
// With base == nil the image carries only the configs layer and the labels (no ENTRYPOINT:
// there is no opm to run) — enough for registry-side tests and "opm render". With a base (an
// opm image: /bin/opm, /bin/grpc_health_probe; see OPMImage), the layer goes on top of it and
// the Dockerfile's ENTRYPOINT and CMD are set, and cacheDir, when not empty, is the serve cache
// "opm serve DIR --cache-only" pre-built, placed where the CMD's --cache-dir says, as the
// Dockerfile's builder stage does.
func CatalogImage(dir, dockerfile string, base v1.Image, cacheDir string, created time.Time) (v1.Image, error) {
	st, err := ParseDockerfile(dockerfile)
	if err != nil {
		return nil, err
	}
	configs := st.Labels[CatalogConfigsLabel]
	if configs == "" {
		return nil, fmt.Errorf("%s: no %s label", dockerfile, CatalogConfigsLabel)
	}
	entries, err := dirEntries(dir, strings.Trim(configs, "/"))
	if err != nil {
		return nil, err
	}
	cfg := Config{Labels: st.Labels, CreatedBy: "hack/images: ADD catalog " + configs}
	if base != nil {
		cfg.Entrypoint, cfg.Cmd = st.Entrypoint, st.Cmd
		cf, err := base.ConfigFile()
		if err != nil {
			return nil, err
		}
		cfg.OS, cfg.Architecture = cf.OS, cf.Architecture
	}
	if cacheDir != "" {
		cache := cacheDirOf(st.Cmd)
		if base == nil || cache == "" {
			return nil, fmt.Errorf("a serve cache needs a base and a CMD with --cache-dir= (%s)", dockerfile)
		}
		cached, err := dirEntries(cacheDir, strings.Trim(cache, "/"))
		if err != nil {
			return nil, err
		}
		// opm opens the cache read-write (a lock file, its database): it belongs to the user
		// the image runs as, as when the Dockerfile's builder stage writes it.
		uid, err := numericUser(base)
		if err != nil {
			return nil, err
		}
		for i := range cached {
			cached[i].uid = uid
		}
		// The cache's parents keep the base's modes (/tmp 1777), not the layer's default 0755.
		entries = append(entries, tmpDir())
		entries = append(entries, cached...)
		cfg.CreatedBy += " and the serve cache " + cache
	}
	l, err := layer(entries, created)
	if err != nil {
		return nil, err
	}
	return assemble(base, l, cfg, created)
}

// tmpDir is /tmp as distroless has it: mode 1777.
func tmpDir() entry { return entry{name: "tmp/", mode: 0o1777} }

// numericUser returns the uid of img's USER, which must be numeric ("1001" or "1001:1001").
func numericUser(img v1.Image) (int, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return 0, err
	}
	user, _, _ := strings.Cut(cf.Config.User, ":")
	uid, err := strconv.Atoi(user)
	if err != nil {
		return 0, fmt.Errorf("the base's USER %q is not numeric", cf.Config.User)
	}
	return uid, nil
}

// cacheDirOf returns the value of a --cache-dir=DIR argument of cmd, or "".
func cacheDirOf(cmd []string) string {
	for _, a := range cmd {
		if v, ok := strings.CutPrefix(a, "--cache-dir="); ok {
			return v
		}
	}
	return ""
}

// Files returns the regular files of an image's flattened filesystem, by path without a
// leading slash, and the modes of all entries (files and directories).
func Files(img v1.Image) (map[string][]byte, map[string]int64, error) {
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	files := map[string][]byte{}
	modes := map[string]int64{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files, modes, nil
		}
		if err != nil {
			return nil, nil, err
		}
		name := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		modes[name] = hdr.Mode
		if hdr.Typeflag == tar.TypeReg {
			data, err := io.ReadAll(tr)
			if err != nil {
				return nil, nil, err
			}
			files[name] = data
		}
	}
}

// SortedKeys returns m's keys in order.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
