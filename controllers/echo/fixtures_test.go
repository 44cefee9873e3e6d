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
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// testImage is the image the operator under test is configured with (ECHO_IMAGE): in the fuzz
// targets too, it is not user input.
const testImage = "registry.example/tools/busybox:1.36"

// conditionOf returns type, status, reason and message of one condition, for exact comparison.
var conditionOf = testenv.ConditionOf

// startWith is testenv.StartInBeforeAll with the controller that setup registers, a method of a
// Reconciler given what the manager gives it and testImage: each integration container runs
// the controller of its Kind alone.
func startWith(setup func(*Reconciler, ctrl.Manager) error) *testenv.Env {
	return testenv.StartInBeforeAll(func(mgr ctrl.Manager) error {
		return setup(&Reconciler{ReconcilerBase: testenv.ReconcilerBase(mgr), Image: testImage}, mgr)
	})
}
