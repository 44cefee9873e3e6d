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
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/skeleton"
)

// Phases runs the one phase of an Echo, its Job (reconcile_job.go), and sets the status of e to
// what it observed. A Job the API server will never take is a terminal error: the Failed
// condition says why.
func (r *echoReconciler) Phases(ctx context.Context, e *echov1alpha1.Echo) (ctrl.Result, error) {
	obs := r.reconcileJob(ctx, e)
	e.Status = echoStatus(e, obs)
	return ctrl.Result{}, skeleton.TerminalIf(obs.err, apierrors.IsInvalid)
}

// Phases runs the one phase of a ScheduledEcho, its CronJob (reconcile_cronjob.go), and sets the
// status of s to what it observed. A spec the CronJob API rejects is a terminal error: retrying
// cannot help until the user changes it, and Ready says why.
func (r *scheduledEchoReconciler) Phases(ctx context.Context, s *echov1alpha1.ScheduledEcho) (ctrl.Result, error) {
	obs := r.reconcileCronJob(ctx, s)
	s.Status = scheduledEchoStatus(s, obs)
	return ctrl.Result{}, skeleton.TerminalIf(obs.err, isTerminal)
}
