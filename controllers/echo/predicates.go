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

package echo

import (
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/seed1b407122/database-operator/controllers/internal/skeleton"
)

// jobChanged lets an update of an owned Job through only when it changed what the operator
// reads: its spec (generation, so hand edits are repaired), its labels (the cache selects by
// them), or the state the Echo's status is computed from. The Job controller's other status
// writes (ready and terminating counts, uncounted pods) cause no reconcile.
func jobChanged() predicate.Predicate {
	return skeleton.OwnedChanged(func(before, after *batchv1.Job) bool {
		return !stateOf(before.Name, before, nil).sameAs(stateOf(after.Name, after, nil))
	})
}

// cronJobChanged lets an update of an owned CronJob through only when it changed what the
// operator reads: its spec (generation, so hand edits are repaired), its labels (the cache
// selects by them), or the last schedule time the status reports. The CronJob controller's
// other status writes (the list of active Jobs, lastSuccessfulTime) cause no reconcile.
func cronJobChanged() predicate.Predicate {
	return skeleton.OwnedChanged(func(before, after *batchv1.CronJob) bool {
		return !before.Status.LastScheduleTime.Equal(after.Status.LastScheduleTime)
	})
}
