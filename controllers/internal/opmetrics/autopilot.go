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

// The Auto Pilot gauges: what the condition series cannot say, since they carry no reason.
var (
	// RolloutStuck is 1 while a DatabaseCluster's rollout is stuck (Progressing False with reason
	// RolloutStuck), 0 otherwise.
	RolloutStuck = newClusterGauge("database_operator_databasecluster_rollout_stuck",
		"1 while a member of a DatabaseCluster's update revision is stuck (Progressing False, reason RolloutStuck), 0 otherwise.")
	// MembersLost is the number of a DatabaseCluster's members lost with their nodes (MemberLost
	// True with reason MemberLost).
	MembersLost = newClusterGauge("database_operator_databasecluster_members_lost",
		"The members of a DatabaseCluster lost with their nodes: their pod cannot be scheduled on a node their volume is pinned to, or is stuck terminating, and that node is gone, unreachable or NotReady past spec.autoHeal.lostMemberAfterSeconds.")
)

// RecordRolloutStuck sets the rollout series of one DatabaseCluster; ForgetCluster removes it.
func RecordRolloutStuck(namespace, name string, stuck bool) {
	value := 0.0
	if stuck {
		value = 1
	}
	RolloutStuck.set(objectKey{namespace, name}, value)
}

// RecordMembersLost sets the lost-member series of one DatabaseCluster; ForgetCluster removes it.
func RecordMembersLost(namespace, name string, lost int) {
	MembersLost.set(objectKey{namespace, name}, float64(lost))
}
