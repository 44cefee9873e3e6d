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

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// RolloutStuck is 1 while a DatabaseCluster's rollout is stuck (Progressing False with reason
// RolloutStuck), 0 otherwise. The condition series cannot say it: they carry no reason.
var RolloutStuck = newClusterGauge(prometheus.GaugeOpts{Name: "database_operator_databasecluster_rollout_stuck",
	Help: "1 while a member of a DatabaseCluster's update revision is stuck (Progressing False, reason RolloutStuck), 0 otherwise."})

func init() {
	metrics.Registry.MustRegister(RolloutStuck)
}

// RecordRolloutStuck sets the rollout series of one DatabaseCluster; ForgetCluster removes it.
func RecordRolloutStuck(namespace, name string, stuck bool) {
	value := 0.0
	if stuck {
		value = 1
	}
	RolloutStuck.set(objectKey{namespace, name}, value)
}
