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

const rolloutStuckHelp = `
# HELP database_operator_databasecluster_rollout_stuck 1 while a member of a DatabaseCluster's update revision is stuck (Progressing False, reason RolloutStuck), 0 otherwise.
# TYPE database_operator_databasecluster_rollout_stuck gauge
`

// TestRecordRolloutStuckAndForgetCluster: 1 while stuck, 0 once not, gone with the cluster.
func TestRecordRolloutStuckAndForgetCluster(t *testing.T) {
	RolloutStuck.Reset()
	RecordRolloutStuck("ns", "db", true)
	RecordRolloutStuck("ns", "other", true)
	RecordRolloutStuck("ns", "other", false)
	compare(t, RolloutStuck, rolloutStuckHelp+`database_operator_databasecluster_rollout_stuck{name="db",namespace="ns"} 1
database_operator_databasecluster_rollout_stuck{name="other",namespace="ns"} 0
`)
	ForgetCluster("ns", "db")
	compare(t, RolloutStuck, rolloutStuckHelp+`database_operator_databasecluster_rollout_stuck{name="other",namespace="ns"} 0
`)
}

const membersLostHelp = `
# HELP database_operator_databasecluster_members_lost The members of a DatabaseCluster lost with their nodes: their pod cannot be scheduled on a node their volume is pinned to, or is stuck terminating, and that node is gone, unreachable or NotReady past spec.autoHeal.lostMemberAfterSeconds.
# TYPE database_operator_databasecluster_members_lost gauge
`

// TestRecordMembersLostAndForgetCluster: the count while lost, 0 once none is, gone with the
// cluster.
func TestRecordMembersLostAndForgetCluster(t *testing.T) {
	MembersLost.Reset()
	RecordMembersLost("ns", "db", 2)
	RecordMembersLost("ns", "other", 1)
	RecordMembersLost("ns", "other", 0)
	compare(t, MembersLost, membersLostHelp+`database_operator_databasecluster_members_lost{name="db",namespace="ns"} 2
database_operator_databasecluster_members_lost{name="other",namespace="ns"} 0
`)
	ForgetCluster("ns", "db")
	compare(t, MembersLost, membersLostHelp+`database_operator_databasecluster_members_lost{name="other",namespace="ns"} 0
`)
}
