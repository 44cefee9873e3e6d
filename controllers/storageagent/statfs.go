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

package storageagent

import "syscall"

// Statfs measures the file system of path with statfs(2). Used is its size minus its free
// blocks; capacity is used plus the blocks available to unprivileged users.
func Statfs(path string) (Usage, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return Usage{}, err
	}
	return fromCounters(uint64(st.Bsize), st.Blocks, st.Bfree, st.Bavail), nil
}

// fromCounters turns statfs's block counts into a Usage.
func fromCounters(blockSize, blocks, free, available uint64) Usage {
	used := (blocks - free) * blockSize
	return Usage{UsedBytes: int64(used), CapacityBytes: int64(used + available*blockSize)}
}
