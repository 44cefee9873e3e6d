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

// The role series of a DatabaseCluster with an engine (spec.engine etcd or postgresql): what the
// operator's last read of its members' agents (every 10 s) found. A cluster without an engine has
// neither series: its roles are not known, and a 0 there would read as "no primary".
var (
	// Primaries is the number of a DatabaseCluster's members that report themselves primary
	// (etcd: the leader) and are not fenced: 1 is the normal state, 0 is a cluster that takes
	// no writes, 2 or more is a split brain (no member is labelled primary then, and NAME-rw
	// routes nowhere).
	Primaries = newClusterGauge("database_operator_databasecluster_primaries",
		"The members of a DatabaseCluster with an engine that report themselves primary (etcd: the leader) and are not fenced, at the operator's last read of their agents: 1 normally, 0 when no member takes writes, 2 or more in a split brain. Absent without an engine.")
	// MembersUnreachable is the number of a DatabaseCluster's members whose agent did not
	// answer the operator's last read (status.members[].role unknown; a pod without an IP or
	// being deleted counts too): the operator can neither see nor change their roles.
	MembersUnreachable = newClusterGauge("database_operator_databasecluster_members_unreachable",
		"The members of a DatabaseCluster with an engine whose agent did not answer the operator's last read (role unknown): the operator can neither see nor change their role. Absent without an engine.")
)

// RecordRoles sets the role series of one DatabaseCluster with an engine, from the last read of
// its members: primaries, the members that report themselves primary and are not fenced, and
// unreachable, those whose agent did not answer. ForgetRoles removes them (a cluster without an
// engine), and ForgetCluster with the cluster's other series.
func RecordRoles(namespace, name string, primaries, unreachable int) {
	key := objectKey{namespace, name}
	Primaries.set(key, float64(primaries))
	MembersUnreachable.set(key, float64(unreachable))
}

// ForgetRoles removes the role series of one DatabaseCluster: the controller calls it for a
// cluster without an engine, which must have none.
func ForgetRoles(namespace, name string) {
	key := objectKey{namespace, name}
	Primaries.delete(key)
	MembersUnreachable.delete(key)
}
