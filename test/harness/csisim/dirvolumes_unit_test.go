package csisim_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/seed1b407122/database-operator/test/harness/csisim"
)

// TestCopyTree: a copy keeps contents, modes, owners (as root), symlinks and modification
// times; it appears whole (no .partial left); an existing copy is kept; a missing source fails
// and leaves nothing.
func TestCopyTree(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "pvc-a")
	writeTree(t, src)
	dst := csisim.SnapshotDirectory(dir, "snap-1")
	if err := csisim.CopyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	if got, want := describeTree(t, dst), describeTree(t, src); !slices.Equal(got, want) {
		t.Fatalf("copy differs from its source:\n got %q\nwant %q", got, want)
	}
	if _, err := os.Stat(dst + ".partial"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("unfinished copy left: %v", err)
	}

	// A later change of the source does not reach a copy that exists already.
	if err := os.WriteFile(filepath.Join(src, "later"), []byte("after the snapshot"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := csisim.CopyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dst, "later")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an existing copy was redone: %v", err)
	}

	missing := filepath.Join(dir, "pvc-missing-copy")
	if err := csisim.CopyTree(filepath.Join(dir, "pvc-missing"), missing); err == nil {
		t.Fatal("copying a missing directory succeeded")
	}
	for _, path := range []string{missing, missing + ".partial"} {
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a failed copy left %s: %v", path, err)
		}
	}
	if err := csisim.RemoveTree(dst); err != nil {
		t.Fatal(err)
	}
	if err := csisim.RemoveTree(dst); err != nil {
		t.Fatalf("removing a removed copy: %v", err)
	}
}

// writeTree writes a small database directory: a 0700 data directory, a 0600 file and a
// symlink, owned by 65532:65532 when run as root, with an old modification time.
func writeTree(t *testing.T, root string) {
	t.Helper()
	data := filepath.Join(root, "etcd", "member")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(data, "db")
	if err := os.WriteFile(file, []byte("three thousand keys"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("member/db", filepath.Join(root, "etcd", "current")); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(file, old, old); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		for _, path := range []string{root, filepath.Join(root, "etcd"), data, file} {
			if err := os.Lchown(path, 65532, 65532); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// describeTree lists every entry below root: path, mode, owner, size, modification time of
// files, link target of symlinks, contents of files.
func describeTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		rel, _ := filepath.Rel(root, path)
		line := fmt.Sprintf("%s %s %d:%d", rel, info.Mode(), st.Uid, st.Gid)
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			line += " -> " + target
		case info.Mode().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %s %q", info.ModTime().UTC().Format(time.RFC3339), data)
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
