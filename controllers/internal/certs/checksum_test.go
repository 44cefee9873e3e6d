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

package certs

import (
	"strconv"
	"testing"
)

// TestChecksumPinned pins the encoding: a change would roll every pod on an operator upgrade.
// The values were computed apart from this package (Python's hashlib over the length-prefixed
// bytes).
func TestChecksumPinned(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"no part", Checksum(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"one empty part", Checksum(nil), "af5570f5a1810b7af78caf4bc70a660f0df51e42baf91d4de5b2328de0e83dfc"},
		{"two parts", Checksum([]byte("tls.crt"), []byte("x")), "ed379947a5d6e14520542399068f7802788fb0b99b348a469aa0d2d68c9a226e"},
		{"a map", ChecksumMap(map[string]string{"tls.crt": "x"}), "ed379947a5d6e14520542399068f7802788fb0b99b348a469aa0d2d68c9a226e"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, tc.got, tc.want)
		}
	}
}

func TestChecksumSensitivity(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b string
		same bool
	}{
		{"the same parts", Checksum([]byte("a"), []byte("b")), Checksum([]byte("a"), []byte("b")), true},
		{"nil and empty parts", Checksum(nil), Checksum([]byte{}), true},
		{"a boundary moved", Checksum([]byte("ab"), []byte("c")), Checksum([]byte("a"), []byte("bc")), false},
		{"an empty part added", Checksum([]byte("a")), Checksum([]byte("a"), nil), false},
		{"no part and one empty part", Checksum(), Checksum(nil), false},
		{"the order of parts", Checksum([]byte("a"), []byte("b")), Checksum([]byte("b"), []byte("a")), false},
		{"one byte changed", Checksum([]byte("tls.crt")), Checksum([]byte("tls.crs")), false},
		{"a map boundary moved", ChecksumMap(map[string]string{"ab": "c"}), ChecksumMap(map[string]string{"a": "bc"}), false},
		{"values swapped between keys", ChecksumMap(map[string]string{"a": "1", "b": "2"}),
			ChecksumMap(map[string]string{"a": "2", "b": "1"}), false},
		{"a key added", ChecksumMap(map[string]string{"a": "1"}), ChecksumMap(map[string]string{"a": "1", "b": ""}), false},
		{"string and byte values", ChecksumMap(map[string]string{"a": "1", "b": "2"}),
			ChecksumMap(map[string][]byte{"b": []byte("2"), "a": []byte("1")}), true},
		{"nil and empty maps", ChecksumMap(map[string][]byte(nil)), ChecksumMap(map[string][]byte{}), true},
		{"a map is its sorted keys and values", ChecksumMap(map[string]string{"b": "2", "a": "1"}),
			Checksum([]byte("a"), []byte("1"), []byte("b"), []byte("2")), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if (tc.a == tc.b) != tc.same {
				t.Errorf("same = %v, want %v (%s, %s)", tc.a == tc.b, tc.same, tc.a, tc.b)
			}
		})
	}
}

// TestChecksumMapOrder: Go randomises map iteration; the checksum must not follow it.
func TestChecksumMapOrder(t *testing.T) {
	m := map[string][]byte{}
	for i := range 50 {
		m["key-"+strconv.Itoa(i)] = []byte(strconv.Itoa(i * i))
	}
	want := ChecksumMap(m)
	for range 20 {
		if got := ChecksumMap(m); got != want {
			t.Fatalf("ChecksumMap changed between calls: %s, then %s", want, got)
		}
	}
}
