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

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path, content string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
}

func check(t *testing.T, path, content string, perm os.FileMode) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != content {
		t.Errorf("%s holds %q, want %q", path, got, content)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != perm {
		t.Errorf("%s has mode %v, want %v", path, info.Mode().Perm(), perm)
	}
}

// TestOLMUnpack runs the command OLM's unpack Job runs: "/bin/cp -Rv /bin/cpb /util/cpb" into an
// empty directory, and again over the copy (a restarted init container).
func TestOLMUnpack(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "bin", "cpb"), filepath.Join(dir, "util", "cpb")
	write(t, src, "#!cpb", 0o755)
	if err := os.Mkdir(filepath.Join(dir, "util"), 0o777); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		var out bytes.Buffer
		if err := run([]string{"-Rv", src, dst}, &out); err != nil {
			t.Fatal(err)
		}
		check(t, dst, "#!cpb", 0o755)
		if want := "'" + src + "' -> '" + dst + "'\n"; out.String() != want {
			t.Errorf("printed %q, want %q", out.String(), want)
		}
	}
}

func TestIntoDirectoryAndTree(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a"), "A", 0o640)
	write(t, filepath.Join(dir, "tree", "x"), "X", 0o600)
	write(t, filepath.Join(dir, "tree", "sub", "y"), "Y", 0o755)
	target := filepath.Join(dir, "target")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-R", filepath.Join(dir, "a"), filepath.Join(dir, "tree"), target}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	check(t, filepath.Join(target, "a"), "A", 0o640)
	check(t, filepath.Join(target, "tree", "x"), "X", 0o600)
	check(t, filepath.Join(target, "tree", "sub", "y"), "Y", 0o755)
}

func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a"), "A", 0o644)
	write(t, filepath.Join(dir, "tree", "x"), "X", 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"one operand", []string{filepath.Join(dir, "a")}, "usage: cp [-R] [-v] [-f] SOURCE... TARGET"},
		{"unknown flag", []string{"-p", "a", "b"}, "unknown option -p"},
		{"directory without -R", []string{filepath.Join(dir, "tree"), filepath.Join(dir, "t2")},
			`-R not specified; omitting directory "` + filepath.Join(dir, "tree") + `"`},
		{"several sources, target not a directory", []string{filepath.Join(dir, "a"), filepath.Join(dir, "a"), filepath.Join(dir, "b")},
			`target "` + filepath.Join(dir, "b") + `" is not a directory`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.args, &bytes.Buffer{})
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
