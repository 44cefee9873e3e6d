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
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The reasons of ReconcileErrors: a fixed set, so that the series stay few.
const (
	ReasonConflict  = "conflict"
	ReasonInvalid   = "invalid"
	ReasonForbidden = "forbidden"
	ReasonNotFound  = "notfound"
	ReasonTimeout   = "timeout"
	ReasonOther     = "other"
)

// errorReasons are every reason ErrorReason returns.
var errorReasons = []string{ReasonConflict, ReasonInvalid, ReasonForbidden, ReasonNotFound, ReasonTimeout, ReasonOther}

// ReconcileErrors counts the reconciles that returned an error, by kind and by the reason of
// the API error behind it. controller-runtime's controller_runtime_reconcile_errors_total
// counts them per controller without saying why.
var ReconcileErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "database_operator_reconcile_errors_total",
	Help: "Reconciles that returned an error, by kind and reason (conflict, invalid, forbidden, notfound, timeout, other).",
}, []string{labelKind, "reason"})

// ErrorReason sorts err into one of the reasons of ReconcileErrors by the first API error in
// its chain (wrapped, joined or terminal errors included): conflict for a write that lost to
// another (Conflict, AlreadyExists), invalid for an object the API server refused (Invalid,
// BadRequest), forbidden for missing rights (Forbidden, Unauthorized), notfound, timeout for
// an API server or a context that ran out of time (Timeout, ServerTimeout, TooManyRequests,
// context.DeadlineExceeded), and other for the rest.
func ErrorReason(err error) string {
	switch {
	case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
		return ReasonConflict
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		return ReasonInvalid
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		return ReasonForbidden
	case apierrors.IsNotFound(err):
		return ReasonNotFound
	case apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) ||
		errors.Is(err, context.DeadlineExceeded):
		return ReasonTimeout
	}
	return ReasonOther
}

// InitReconcileErrors creates the error series of a kind at 0, so that rate() sees the first
// error (a counter that appears at 1 has no increase to show).
func InitReconcileErrors(kind string) {
	for _, reason := range errorReasons {
		ReconcileErrors.WithLabelValues(kind, reason)
	}
}

// RecordReconcileError counts err, a reconcile's result, when it is not nil.
func RecordReconcileError(kind string, err error) {
	if err != nil {
		ReconcileErrors.WithLabelValues(kind, ErrorReason(err)).Inc()
	}
}
