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
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"slices"
)

// Checksum is the SHA-256, in hex, of parts, each prefixed by its length (8 bytes, big-endian),
// so that no two different lists give the same input: ("ab", "c") and ("a", "bc") differ, and so
// do () and (""). The pod template carries it as an annotation, so that new content (a renewed
// certificate, a changed Secret) rolls the pods. The encoding is fixed: changing it would change
// every annotation and roll every pod of every cluster on an operator upgrade (a test pins it).
func Checksum(parts ...[]byte) string {
	h := sha256.New()
	var size [8]byte
	for _, part := range parts {
		binary.BigEndian.PutUint64(size[:], uint64(len(part)))
		h.Write(size[:])
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ChecksumMap is the Checksum of m's keys and values in the order of the sorted keys (key1,
// value1, key2, value2, ...): the same for the same content whatever the map's iteration order.
// It takes a Secret's data ([]byte values) and a ConfigMap's (string values) alike.
func ChecksumMap[V ~string | ~[]byte](m map[string]V) string {
	parts := make([][]byte, 0, 2*len(m))
	for _, key := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, []byte(key), []byte(m[key]))
	}
	return Checksum(parts...)
}
