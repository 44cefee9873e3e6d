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

package operator

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/seed1b407122/database-operator/controllers/internal/skeleton"
)

// SetupOneChild registers the controller named name of k, a Kind whose resources (of obj's kind)
// each own children of one kind, child, and whose controller needs nothing else: a resource is
// queued when its generation changes, and when one of its children changes in a way childChanged
// lets through, behind its own changes (skeleton.OwnedBy). The reconciles are skeleton.Reconcile's
// with b's client and memory of own writes, at most b.MaxConcurrentReconciles at once. Taking k
// as a skeleton.Kind checks at compile time that it is one.
func SetupOneChild[T skeleton.Object[T]](mgr ctrl.Manager, b ReconcilerBase, name string, obj T, child client.Object,
	childChanged predicate.Predicate, k skeleton.Kind[T],
) error {
	return skeleton.NewController(mgr, name, b.MaxConcurrentReconciles, obj.DeepCopy(), predicate.GenerationChangedPredicate{}).
		Watches(child, skeleton.OwnedBy(mgr, obj.DeepCopy()), builder.WithPredicates(childChanged)).
		Complete(skeleton.ReconcilerOf(b.Client, b.OwnWrites, obj, k))
}
