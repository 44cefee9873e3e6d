// Copyright 2026 The database-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

// Command cp is /bin/cp of the real node's OLM image (its util image): the bundle unpack Job's
// first init container runs "/bin/cp -Rv /bin/cpb /util/cpb". It takes what POSIX cp takes for
// that and little more: "cp [-R|-r] [-v] [-f] SOURCE... TARGET", files copied with their mode,
// directories only with -R, into TARGET when it is a directory. It is built here, static and
// reproducible, so that building the image reads nothing from the host (it was Debian's
// busybox-static, which a new machine did not have when the image was built).
package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// options are cp's flags.
type options struct {
	recursive bool
	verbose   bool
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cp:", err)
		os.Exit(1)
	}
}

// run copies as "cp ARGS" does, printing "'SOURCE' -> 'TARGET'" per file to out with -v.
func run(args []string, out io.Writer) error {
	opts, operands, err := parse(args)
	if err != nil {
		return err
	}
	if len(operands) < 2 {
		return errors.New("usage: cp [-R] [-v] [-f] SOURCE... TARGET")
	}
	sources, target := operands[:len(operands)-1], operands[len(operands)-1]
	info, err := os.Stat(target)
	targetIsDir := err == nil && info.IsDir()
	if len(sources) > 1 && !targetIsDir {
		return fmt.Errorf("target %q is not a directory", target)
	}
	for _, src := range sources {
		dst := target
		if targetIsDir {
			dst = filepath.Join(target, filepath.Base(src))
		}
		if err := copyPath(src, dst, opts, out); err != nil {
			return err
		}
	}
	return nil
}

// parse splits args into flags (single letters, combinable: -Rv) and operands ("--" ends flags).
func parse(args []string) (options, []string, error) {
	var opts options
	for i, arg := range args {
		if arg == "--" {
			return opts, args[i+1:], nil
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			return opts, args[i:], nil
		}
		for _, c := range arg[1:] {
			switch c {
			case 'R', 'r':
				opts.recursive = true
			case 'v':
				opts.verbose = true
			case 'f':
				// The target is always replaced: nothing to do.
			default:
				return opts, nil, fmt.Errorf("unknown option -%c", c)
			}
		}
	}
	return opts, nil, nil
}

// copyPath copies the file or (with -R) the directory tree src to dst.
func copyPath(src, dst string, opts options, out io.Writer) error {
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return copyFile(src, dst, info.Mode().Perm(), opts, out)
	}
	if !opts.recursive {
		return fmt.Errorf("-R not specified; omitting directory %q", src)
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		}
		return copyFile(path, to, info.Mode().Perm(), opts, out)
	})
}

// copyFile writes src's content to dst with mode perm (replacing dst) and reports it with -v.
func copyFile(src, dst string, perm fs.FileMode, opts options, out io.Writer) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	to, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(to, in); err != nil {
		_ = to.Close()
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	// O_CREATE applies perm only to a new file, and the umask to it: set it as cp -p would not,
	// but as OLM needs (cpb must stay executable).
	if err := to.Chmod(perm); err != nil {
		_ = to.Close()
		return err
	}
	if err := to.Close(); err != nil {
		return err
	}
	if opts.verbose {
		_, _ = fmt.Fprintf(out, "'%s' -> '%s'\n", src, dst)
	}
	return nil
}
