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

package repodir

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRootFromThisPackage(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if want := filepath.Join(root, "test", "harness", "repodir"); wd != want {
		t.Errorf("Root() = %s: the working directory %s is not its test/harness/repodir", root, wd)
	}
}

// TestRootSkipsOtherModules: a nested module (hack/olm and the other tools modules) is not the root.
func TestRootSkipsOtherModules(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+Module+"\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(dir, "hack", "olm")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(nested, "go.mod"), []byte("module "+Module+"/hack/olm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(nested)
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if root != dir {
		t.Errorf("Root() = %s, want %s", root, dir)
	}
	t.Chdir(t.TempDir())
	if _, err := Root(); err == nil {
		t.Error("Root() outside the repository returned no error")
	}
}
