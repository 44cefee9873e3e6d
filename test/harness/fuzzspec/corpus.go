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

package fuzzspec

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// corpusHeader is the first line of every file of a Go seed corpus.
const corpusHeader = "go test fuzz v1"

// Seed is one entry of a committed seed corpus: testdata/fuzz/<target>/<file>.
type Seed struct {
	// Target and File name it, e.g. FuzzStatefulSet and minimal.
	Target, File string
	// Args are the values of the fuzz function's arguments, in order.
	Args []any
}

// Corpus reads the seed corpus of target in the package directory pkg, relative to the
// repository root (e.g. "controllers/databasecluster", "FuzzStatefulSet"), sorted by file name.
func Corpus(pkg, target string) ([]Seed, error) {
	dir := filepath.Join(RepoRoot(), pkg, "testdata", "fuzz", target)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var seeds []Seed
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		args, err := ParseSeed(string(data))
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", target, e.Name(), err)
		}
		seeds = append(seeds, Seed{Target: target, File: e.Name(), Args: args})
	}
	return seeds, nil
}

// ParseSeed reads one file of the "go test fuzz v1" format, for the types the fuzz targets of
// this repository take: string, []byte, bool and the integer types.
func ParseSeed(data string) ([]any, error) {
	lines := strings.Split(strings.TrimRight(data, "\n"), "\n")
	if len(lines) == 0 || lines[0] != corpusHeader {
		return nil, fmt.Errorf("does not start with %q", corpusHeader)
	}
	var args []any
	for i, line := range lines[1:] {
		typ, lit, ok := strings.Cut(line, "(")
		if !ok || !strings.HasSuffix(lit, ")") {
			return nil, fmt.Errorf("line %d: %q is not type(value)", i+2, line)
		}
		lit = strings.TrimSuffix(lit, ")")
		v, err := parseValue(typ, lit)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+2, err)
		}
		args = append(args, v)
	}
	return args, nil
}

func parseValue(typ, lit string) (any, error) {
	switch typ {
	case "string":
		return strconv.Unquote(lit)
	case "[]byte":
		s, err := strconv.Unquote(lit)
		return []byte(s), err
	case "bool":
		return strconv.ParseBool(lit)
	case "rune":
		// and an int32 as a rune literal: rune('\x03').
		r, err := strconv.Unquote(lit)
		runes := []rune(r)
		if err != nil || len(runes) != 1 {
			return nil, fmt.Errorf("rune(%s) is not one rune", lit)
		}
		return runes[0], nil
	case "byte":
		// go writes a uint8 as a character literal: byte('\x01').
		r, err := strconv.Unquote(lit)
		if err != nil || len(r) != 1 {
			return nil, fmt.Errorf("byte(%s) is not one byte", lit)
		}
		return r[0], nil
	}
	kinds := map[string]reflect.Type{
		"int": reflect.TypeFor[int](), "int8": reflect.TypeFor[int8](), "int16": reflect.TypeFor[int16](),
		"int32": reflect.TypeFor[int32](), "int64": reflect.TypeFor[int64](), "uint": reflect.TypeFor[uint](),
		"uint8": reflect.TypeFor[uint8](), "uint16": reflect.TypeFor[uint16](), "uint32": reflect.TypeFor[uint32](),
		"uint64": reflect.TypeFor[uint64](),
	}
	t, ok := kinds[typ]
	if !ok {
		return nil, fmt.Errorf("type %s is not supported", typ)
	}
	v := reflect.New(t).Elem()
	if strings.HasPrefix(typ, "u") {
		n, err := strconv.ParseUint(lit, 0, t.Bits())
		if err != nil {
			return nil, err
		}
		v.SetUint(n)
	} else {
		n, err := strconv.ParseInt(lit, 0, t.Bits())
		if err != nil {
			return nil, err
		}
		v.SetInt(n)
	}
	return v.Interface(), nil
}

// Call calls fn (a decoder such as DatabaseCluster) with the arguments of a seed, which must
// match its parameters in number and type, and returns its first result.
func Call(fn any, args []any) (any, error) {
	f := reflect.ValueOf(fn)
	if f.Kind() != reflect.Func || f.Type().NumIn() != len(args) {
		return nil, fmt.Errorf("%d arguments for a function of %d parameters", len(args), f.Type().NumIn())
	}
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		v := reflect.ValueOf(a)
		if v.Type() != f.Type().In(i) {
			return nil, fmt.Errorf("argument %d is a %s, the parameter a %s", i, v.Type(), f.Type().In(i))
		}
		in[i] = v
	}
	return f.Call(in)[0].Interface(), nil
}

// ChildRefusedPrefix names the seeds of specs the API server admits although it refuses a child
// built from them: the fields admission does not check yet.
const ChildRefusedPrefix = "child-refused-"

// AdmittedSeed is the resource of one seed that the API server admits, with its defaults.
type AdmittedSeed[T client.Object] struct {
	File   string
	Object T
}

// AdmittedSeeds decodes the seed corpus of target with decode and returns, in namespace ns, the
// resources the API server admits whose children it accepts too (not ChildRefusedPrefix).
func AdmittedSeeds[T client.Object](pkg, target string, decode any, ns string) ([]AdmittedSeed[T], error) {
	seeds, err := Corpus(pkg, target)
	if err != nil {
		return nil, err
	}
	a, err := NewAdmitter()
	if err != nil {
		return nil, err
	}
	var out []AdmittedSeed[T]
	for _, seed := range seeds {
		if strings.HasPrefix(seed.File, ChildRefusedPrefix) {
			continue
		}
		decoded, err := Call(decode, seed.Args)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", seed.File, err)
		}
		obj, ok := decoded.(T)
		if !ok || reflect.ValueOf(obj).IsNil() {
			continue
		}
		obj.SetNamespace(ns)
		refused, err := a.Admit(obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", seed.File, err)
		}
		if len(refused) == 0 {
			out = append(out, AdmittedSeed[T]{File: seed.File, Object: obj})
		}
	}
	return out, nil
}
