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

package testenv

import (
	"reflect"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
)

// The fixtures of every controller's specs are test resources changed by functional options
// (newEcho("ec", withMessage("hi"))); what they share is here.

// Meta is the metadata of a test resource as the API server would have stored it: name in
// namespace "default", a UID, generation 1.
func Meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", UID: "uid-1234", Generation: 1}
}

// Apply changes obj by each option in turn and returns it.
func Apply[T any, Option ~func(T)](obj T, opts ...Option) T {
	for _, opt := range opts {
		opt(obj)
	}
	return obj
}

// InNamespace is the option that moves a test resource to namespace ns.
func InNamespace[T client.Object](ns string) func(T) {
	return func(obj T) { obj.SetNamespace(ns) }
}

// Parent is a resource as the metadata of its children name it; the specs compare each child's
// metadata with what it says, to the letter.
type Parent struct {
	// APIVersion and Kind of the resource, e.g. "echo.seed1b407122.io/v1alpha1" and "Echo".
	APIVersion, Kind string
	// App is the app.kubernetes.io/name of the kind's children, e.g. "echo".
	App  string
	Name string
	UID  types.UID
}

// ParentOf is obj as the metadata of its children name it, its API version and kind read from
// the operator's scheme; app is the app.kubernetes.io/name of the kind's children.
func ParentOf(obj client.Object, app string) Parent {
	gvk, err := apiutil.GVKForObject(obj, scheme.Must())
	if err != nil {
		panic(err) // a fixture of a kind the operator does not know: a mistake in the spec itself
	}
	return Parent{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, App: app, Name: obj.GetName(), UID: obj.GetUID()}
}

// Selector is the selector labels of the children: app name and instance.
func (p Parent) Selector() map[string]string {
	return map[string]string{"app.kubernetes.io/name": p.App, "app.kubernetes.io/instance": p.Name}
}

// Labels is the labels of every child: the selector labels and managed-by.
func (p Parent) Labels() map[string]string {
	labels := p.Selector()
	labels["app.kubernetes.io/managed-by"] = "database-operator"
	return labels
}

// OwnerReferences is the resource as a child's one owner: its controller, blocking its deletion.
func (p Parent) OwnerReferences() []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion: p.APIVersion, Kind: p.Kind, Name: p.Name, UID: p.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
}

// ChildMeta is the metadata of the child name in the namespace "default" of Meta.
func (p Parent) ChildMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", Labels: p.Labels(), OwnerReferences: p.OwnerReferences()}
}

// ConditionOf returns type, status, reason and message of the condition conditionType, for an
// exact comparison; nil if there is none.
func ConditionOf(conditions []metav1.Condition, conditionType string) []string {
	c := meta.FindStatusCondition(conditions, conditionType)
	if c == nil {
		return nil
	}
	return []string{c.Type, string(c.Status), c.Reason, c.Message}
}

// CacheSelector is the label selector by which the operator's cache (cachecfg, as main.go sets
// it up) selects the objects of obj's type; nil if the cache has no entry for that type.
func CacheSelector(obj client.Object) labels.Selector {
	for entry, byObject := range cachecfg.Options(nil, nil).ByObject {
		if reflect.TypeOf(entry) == reflect.TypeOf(obj) {
			return byObject.Label
		}
	}
	return nil
}

// Invalid is the error the API server answers for the object name of kind (in the group) whose
// field path holds a value it refuses, for detail.
func Invalid(kind schema.GroupKind, name string, path *field.Path, value, detail string) error {
	return apierrors.NewInvalid(kind, name, field.ErrorList{field.Invalid(path, value, detail)})
}

// SetOn runs set on an empty list of conditions, as a condition setter of a controller fills
// it, checks that every condition it set observed generation 1 (that of Meta) and returns the
// list.
func SetOn(set func(conditions *[]metav1.Condition)) []metav1.Condition {
	ginkgo.GinkgoHelper()
	var conditions []metav1.Condition
	set(&conditions)
	for _, c := range conditions {
		gomega.Expect(c.ObservedGeneration).To(gomega.Equal(int64(1)), "condition %s", c.Type)
	}
	return conditions
}
