// Copyright 2026 The database-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
// 	http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package scheduledecho

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/controllers/internal/testenv"
)

// The ownership rule for the CronJob of a ScheduledEcho: a CronJob of that name held by anything
// but the ScheduledEcho is left exactly as it is and reported, never adopted.
var _ = testenv.DescribeOwnership("ScheduledEcho ownership of its CronJob", testenv.OwnershipTable{
	Setup:    setupController,
	Resource: func(ns string) client.Object { return newScheduledEcho("se", withNamespace(ns)) },
	Held: []client.Object{&batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "se-echo"},
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Template: testenv.SomeonesPod("backup"),
		}}},
	}},
})
