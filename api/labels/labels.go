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

// Package labels holds the label keys and the managed-by value the operator sets on the children
// of every kind, in every API group. The manager's cache selects the children of all kinds by
// the managed-by label, so its key and value must be the same everywhere: the API groups, the
// controllers and the tests take them from here.
package labels

// Keys of the recommended app.kubernetes.io labels the operator sets.
const (
	// Name is the application of a child, one value per kind (e.g. "database").
	Name = "app.kubernetes.io/name"
	// Instance is the name of the resource the child belongs to.
	Instance = "app.kubernetes.io/instance"
	// ManagedBy marks every child of the operator, with the value ManagedByValue.
	ManagedBy = "app.kubernetes.io/managed-by"
)

// ManagedByValue is the value of ManagedBy on every child of the operator.
const ManagedByValue = "database-operator"

// Selector returns the labels that select the children (and pods) of one resource: the
// application of its kind and its name. Selectors of StatefulSets and Jobs are immutable, so
// nothing that may change belongs here.
func Selector(app, instance string) map[string]string {
	return map[string]string{Name: app, Instance: instance}
}

// Child returns the labels of every child of one resource: the selector labels plus managed-by,
// which the manager's cache selects by.
func Child(app, instance string) map[string]string {
	l := Selector(app, instance)
	l[ManagedBy] = ManagedByValue
	return l
}
