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

package opmetrics

import "testing"

const (
	memberUsedHelp = `
# HELP database_operator_databasecluster_member_storage_used_bytes Bytes used on the data file system of a DatabaseCluster member, as measured by its storage agent (spec.storage.autoGrow only).
# TYPE database_operator_databasecluster_member_storage_used_bytes gauge
`
	fullAtMaxHelp = `
# HELP database_operator_databasecluster_storage_full_at_max_size_ratio Highest used ratio (0-1) of the DatabaseCluster members whose claim is at spec.storage.autoGrow.maxSize and over its threshold; absent when none is.
# TYPE database_operator_databasecluster_storage_full_at_max_size_ratio gauge
`
)

// TestRecordAutoGrowAndForgetCluster: one series per measured member, a member no longer
// measured loses its series, the at-maxSize ratio only while set, all gone with the cluster.
func TestRecordAutoGrowAndForgetCluster(t *testing.T) {
	MemberStorageUsed.Reset()
	MemberStorageCapacity.Reset()
	StorageFullAtMaxSize.Reset()
	RecordAutoGrow("ns", "db", []MemberUsage{{"db-0", 800, 1000}, {"db-1", 100, 1000}}, 0.92)
	RecordAutoGrow("ns", "other", []MemberUsage{{"other-0", 5, 10}}, 0)
	compare(t, MemberStorageUsed, memberUsedHelp+`database_operator_databasecluster_member_storage_used_bytes{member="db-0",name="db",namespace="ns"} 800
database_operator_databasecluster_member_storage_used_bytes{member="db-1",name="db",namespace="ns"} 100
database_operator_databasecluster_member_storage_used_bytes{member="other-0",name="other",namespace="ns"} 5
`)
	compare(t, StorageFullAtMaxSize, fullAtMaxHelp+`database_operator_databasecluster_storage_full_at_max_size_ratio{name="db",namespace="ns"} 0.92
`)
	RecordAutoGrow("ns", "db", []MemberUsage{{"db-0", 810, 1000}}, 0)
	compare(t, MemberStorageUsed, memberUsedHelp+`database_operator_databasecluster_member_storage_used_bytes{member="db-0",name="db",namespace="ns"} 810
database_operator_databasecluster_member_storage_used_bytes{member="other-0",name="other",namespace="ns"} 5
`)
	compare(t, StorageFullAtMaxSize, "")
	RecordAutoGrow("ns", "db", nil, 0.95)
	ForgetCluster("ns", "db")
	compare(t, MemberStorageUsed, memberUsedHelp+`database_operator_databasecluster_member_storage_used_bytes{member="other-0",name="other",namespace="ns"} 5
`)
	compare(t, StorageFullAtMaxSize, "")
	if n := len(MemberStorageCapacity.values); n != 1 {
		t.Fatalf("capacity series after ForgetCluster: %d, want 1 (other-0)", n)
	}
}
