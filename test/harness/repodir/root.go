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

// Package repodir finds this repository's root directory for tests that read its files (the
// CRDs of config/crd/bases, the fuzz seed corpora).
package repodir

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Module is this repository's module path, as its go.mod declares it.
const Module = "github.com/seed1b407122/database-operator"

// Root is the nearest directory at or above the working directory (a test's: its package's
// directory) whose go.mod declares Module. The source file's location (runtime.Caller) is not
// used: every build is -trimpath (the Makefile), which turns it into a module path.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if declares(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module %s at or above the working directory", Module)
		}
		dir = parent
	}
}

// MustRoot is Root for test set-up, which cannot go on without it: it panics on error.
func MustRoot() string {
	root, err := Root()
	if err != nil {
		panic(err)
	}
	return root
}

// declares reports whether the go.mod at path declares Module.
func declares(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if line := strings.TrimSpace(scanner.Text()); strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module ")) == Module
		}
	}
	return false
}
