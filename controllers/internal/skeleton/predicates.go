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

package skeleton

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// UpdateChanged lets an update of a T through only when changed says what the operator reads of
// it changed. Create and delete events pass; an update of another type passes too.
func UpdateChanged[T client.Object](changed func(before, after T) bool) predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		before, okBefore := e.ObjectOld.(T)
		after, okAfter := e.ObjectNew.(T)
		if !okBefore || !okAfter {
			return true
		}
		return changed(before, after)
	}}
}

// OwnedChanged lets an update of an owned child through only when it changed what the operator
// reads: its spec (generation, so hand edits are repaired), its labels (the cache selects by
// them), or what statusChanged compares. The other status writes of the child's own controller
// cause no reconcile.
func OwnedChanged[T client.Object](statusChanged func(before, after T) bool) predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
		UpdateChanged(statusChanged))
}
