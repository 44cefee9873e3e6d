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

package databasecluster

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

var _ = Describe("holdPrimary", Label("unit"), func() {
	DescribeTable("keeps the primary's pod while a scale-down would take it",
		func(primary string, switchover *databasev1alpha1.SwitchoverStatus, want, have int32, hold *int32) {
			dc := newCluster("db", withEngine(databasev1alpha1.EnginePostgreSQL))
			dc.Status.CurrentPrimary, dc.Status.Switchover = primary, switchover
			Expect(holdPrimary(dc, want, have)).To(Equal(hold))
		},
		Entry("3 -> 2 with db-2 the primary: db-2's pod stays", "db-2", nil, int32(2), int32(3), ptr.To[int32](3)),
		Entry("5 -> 2 with db-3 the primary: held at 4", "db-3", nil, int32(2), int32(5), ptr.To[int32](4)),
		Entry("3 -> 2 with db-0 the primary: no hold", "db-0", nil, int32(2), int32(3), (*int32)(nil)),
		Entry("the switchover from db-2 in flight, db-1 its target: still held", "db-1",
			&databasev1alpha1.SwitchoverStatus{From: "db-2", To: "db-1"}, int32(2), int32(3), ptr.To[int32](3)),
		Entry("no primary known: no hold", "", nil, int32(2), int32(3), (*int32)(nil)),
	)
})
