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
	"reflect"
	"testing"
)

// TestParseSeed reads every spelling go writes in a seed corpus file for the types the fuzz
// targets take (an int32 as a rune literal, a uint8 as a byte literal) and refuses the rest.
func TestParseSeed(t *testing.T) {
	got, err := ParseSeed("go test fuzz v1\nstring(\"db\\n\\xca\")\nint32(-3)\nrune('\\x03')\nuint8(4)\nbyte('\\x01')\nbool(true)\nint64(7)\n[]byte(\"a\")\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"db\n\xca", int32(-3), int32(3), uint8(4), uint8(1), true, int64(7), []byte("a")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
	for _, bad := range []string{"", "go test fuzz v2\n", "go test fuzz v1\nfloat64(1)\n", "go test fuzz v1\nstring(db)\n", "go test fuzz v1\nint8(300)\n"} {
		if _, err := ParseSeed(bad); err == nil {
			t.Errorf("ParseSeed(%q) did not fail", bad)
		}
	}
	if _, err := Call(DatabaseCluster, []any{"too few"}); err == nil {
		t.Error("Call with too few arguments did not fail")
	}
	if _, err := Call(Echo, []any{"name", int32(1)}); err == nil {
		t.Error("Call with an argument of the wrong type did not fail")
	}
}
