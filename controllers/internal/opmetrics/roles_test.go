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
	primariesHelp = `
# HELP database_operator_databasecluster_primaries The members of a DatabaseCluster with an engine that report themselves primary (etcd: the leader) and are not fenced, at the operator's last read of their agents: 1 normally, 0 when no member takes writes, 2 or more in a split brain. Absent without an engine.
# TYPE database_operator_databasecluster_primaries gauge
`
	unreachableHelp = `
# HELP database_operator_databasecluster_members_unreachable The members of a DatabaseCluster with an engine whose agent did not answer the operator's last read (role unknown): the operator can neither see nor change their role. Absent without an engine.
# TYPE database_operator_databasecluster_members_unreachable gauge
`
)

// TestRecordRolesForgetRolesAndForgetCluster: the counts of the last read, 0 kept as a value (no
// primary is what the alert looks for), no series once ForgetRoles says the cluster has no
// engine, and none left with the cluster.
func TestRecordRolesForgetRolesAndForgetCluster(t *testing.T) {
	Primaries.Reset()
	MembersUnreachable.Reset()
	RecordRoles("ns", "split", 2, 0)
	RecordRoles("ns", "headless", 0, 1)
	RecordRoles("ns", "plain", 1, 0)
	RecordRoles("other", "split", 1, 2)
	compare(t, Primaries, primariesHelp+`database_operator_databasecluster_primaries{name="headless",namespace="ns"} 0
database_operator_databasecluster_primaries{name="plain",namespace="ns"} 1
database_operator_databasecluster_primaries{name="split",namespace="ns"} 2
database_operator_databasecluster_primaries{name="split",namespace="other"} 1
`)
	compare(t, MembersUnreachable, unreachableHelp+`database_operator_databasecluster_members_unreachable{name="headless",namespace="ns"} 1
database_operator_databasecluster_members_unreachable{name="plain",namespace="ns"} 0
database_operator_databasecluster_members_unreachable{name="split",namespace="ns"} 0
database_operator_databasecluster_members_unreachable{name="split",namespace="other"} 2
`)

	// The split brain resolved, the headless cluster's agent back with a primary.
	RecordRoles("ns", "split", 1, 0)
	RecordRoles("ns", "headless", 1, 0)
	// A cluster without an engine: no series, and ForgetRoles of one that never had any is harmless.
	ForgetRoles("ns", "plain")
	ForgetRoles("ns", "never")
	compare(t, Primaries, primariesHelp+`database_operator_databasecluster_primaries{name="headless",namespace="ns"} 1
database_operator_databasecluster_primaries{name="split",namespace="ns"} 1
database_operator_databasecluster_primaries{name="split",namespace="other"} 1
`)
	compare(t, MembersUnreachable, unreachableHelp+`database_operator_databasecluster_members_unreachable{name="headless",namespace="ns"} 0
database_operator_databasecluster_members_unreachable{name="split",namespace="ns"} 0
database_operator_databasecluster_members_unreachable{name="split",namespace="other"} 2
`)

	// Gone with the cluster, only that cluster's (same name in another namespace stays).
	ForgetCluster("ns", "split")
	ForgetCluster("ns", "headless")
	compare(t, Primaries, primariesHelp+`database_operator_databasecluster_primaries{name="split",namespace="other"} 1
`)
	compare(t, MembersUnreachable, unreachableHelp+`database_operator_databasecluster_members_unreachable{name="split",namespace="other"} 2
`)
	ForgetCluster("other", "split")
	compare(t, Primaries, "")
	compare(t, MembersUnreachable, "")
}
