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

// Package child is the write path of a child and the ownership rule. Ensure is the one write
// path the controllers use for the objects they own: Get (from the cache) → Create when missing →
// merge patch of the fields the operator owns (Meta, and a Spec such as ConfigMapData), and only
// when those fields differ from what was observed. It never sends a blind Update, so fields that
// the API server or other controllers default are left alone and an unchanged child costs no
// write; ReadsOwnCreates is the client that keeps it from creating a child twice. A child whose
// name is held by an object the resource does not control is left as it is (Conflict,
// IsConflict) and told in the Degraded condition (DegradedCondition) and in one warning event
// when that turns True (ConflictBegan, WarnConflictBegan).
package child

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/api/conditions"
)

// Result says what Ensure did.
type Result string

// Results of Ensure.
const (
	Created   Result = "Created"
	Patched   Result = "Patched"
	Unchanged Result = "Unchanged"
)

// Spec describes how one kind of child is kept in place.
type Spec[T client.Object] struct {
	// InSync reports whether the observed object already holds every field of the desired one
	// that the operator owns.
	InSync func(desired, observed T) bool
	// Merge copies the fields the operator owns from desired into observed.
	Merge func(desired, observed T)
	// Owned, when set, says whether observed is the resource's own child by a mark other than
	// the controller reference (a child meant to outlive the resource carries none); nil: only
	// a child controlled by desired's controller (the same UID) is the resource's.
	Owned func(observed T) bool
	// OwnAnnotations are annotation keys that InSync and Merge decide (e.g. a record of the
	// generation a write makes): the generic metadata comparison and merge leave them alone.
	OwnAnnotations []string
	// OptimisticLock makes the patch carry observed's resourceVersion, so that it fails with a
	// Conflict when another write came between the read and the patch: for a Merge that
	// records what the server holds after it.
	OptimisticLock bool
}

// Ensure creates desired when it does not exist and otherwise patches the owned fields of the
// observed object, only when they differ. observed must be an empty object of the same type; it
// is left holding the child as it was before the patch. The returned object is the child as the
// server holds it afterwards.
//
// Only a child whose controller reference is the desired one's (same UID), or that spec.Owned
// says is the resource's, is ever patched. A name held by anything else — an object with no
// controller, one controlled by another resource, or one left by an earlier resource of the
// same name (another UID) — is left exactly as it is and Ensure returns a *ConflictError
// naming the holder; the caller reports it and retries with back-off, and creates the child
// once the name is free.
//
// c is the manager's client of ReadsOwnCreates: a child it created moments ago and the cache
// does not show yet is read from the API server rather than created again.
//
// The cache only holds children that carry the operator's managed-by label. When someone removed
// that label by hand the cache cannot see the child, Create answers AlreadyExists, and the object
// is read with the uncached reader; if it is still ours it is patched back (labels included).
func Ensure[T client.Object](ctx context.Context, c client.Client, uncached client.Reader,
	desired, observed T, spec Spec[T],
) (T, Result, error) {
	key := client.ObjectKeyFromObject(desired)
	err := c.Get(ctx, key, observed)
	if apierrors.IsNotFound(err) {
		err = c.Create(ctx, desired)
		if err == nil {
			return desired, Created, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return observed, "", fmt.Errorf("creating %s: %w", describe(desired), err)
		}
		err = uncached.Get(ctx, key, observed)
	}
	if err != nil {
		return observed, "", fmt.Errorf("reading %s: %w", describe(desired), err)
	}
	owned := spec.Owned != nil && spec.Owned(observed)
	if err := checkOwner(desired, observed); err != nil && !owned {
		return observed, "", err
	}
	// A child being deleted is left alone: patching it cannot keep it, and the next reconcile
	// after it is gone creates it again.
	if observed.GetDeletionTimestamp() != nil {
		return observed, Unchanged, nil
	}
	if metaInSync(desired, observed, spec.OwnAnnotations) && spec.InSync(desired, observed) {
		return observed, Unchanged, nil
	}
	patched := observed.DeepCopyObject().(T)
	// Merge sees the observed metadata before desired's is merged in, so that it can compare a
	// record an earlier write left (e.g. which annotations came from the spec) with desired's.
	spec.Merge(desired, patched)
	mergeMeta(desired, patched, spec.OwnAnnotations)
	patch := client.MergeFrom(observed)
	if spec.OptimisticLock {
		patch = client.MergeFromWithOptions(observed, client.MergeFromWithOptimisticLock{})
	}
	if err := c.Patch(ctx, patched, patch); err != nil {
		return observed, "", fmt.Errorf("patching %s: %w", describe(desired), err)
	}
	return patched, Patched, nil
}

// Meta is the metadata of a child of owner (of kind gvk): its name, owner's namespace, labels,
// and a controller reference to owner, so that the child is garbage collected with it.
func Meta(owner metav1.Object, gvk schema.GroupVersionKind, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       owner.GetNamespace(),
		Labels:          labels,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, gvk)},
	}
}

// describe names a child in errors: "StatefulSet ns/name".
func describe(obj client.Object) string {
	return kindOf(obj) + " " + client.ObjectKeyFromObject(obj).String()
}

// kindOf is the Go type name of a typed child, which is its kind: "StatefulSet".
func kindOf(obj client.Object) string {
	name := fmt.Sprintf("%T", obj)
	return name[strings.LastIndex(name, ".")+1:]
}

// ConflictError says that the name of a child is held by an object the resource does not control.
type ConflictError struct {
	// Kind and Name name the child, e.g. "Service" and "db-headless".
	Kind, Name string
	// Holder says who holds the name: "no controller", or the kind, name and UID of the
	// controller reference.
	Holder string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %s exists and is not controlled by this resource (held by %s): it is left as it is until the name is free",
		e.Kind, e.Name, e.Holder)
}

// IsConflict reports whether err is or wraps a *ConflictError.
func IsConflict(err error) bool {
	_, ok := Conflict(err)
	return ok
}

// Conflict returns the message of the *ConflictError err is or wraps, and whether there is one:
// what every Kind's Degraded condition says when the name of a child is held by another object.
func Conflict(err error) (string, bool) {
	var conflict *ConflictError
	if !errors.As(err, &conflict) {
		return "", false
	}
	return conflict.Error(), true
}

// checkOwner returns a *ConflictError unless observed is controlled by desired's controller (the
// same UID: a resource deleted and created again under the same name is another resource).
func checkOwner(desired, observed client.Object) error {
	want := metav1.GetControllerOf(desired)
	have := metav1.GetControllerOfNoCopy(observed)
	if want != nil && have != nil && have.UID == want.UID {
		return nil
	}
	holder := "no controller"
	if have != nil {
		holder = fmt.Sprintf("%s %s (uid %s)", have.Kind, have.Name, have.UID)
	}
	return &ConflictError{Kind: kindOf(desired), Name: desired.GetName(), Holder: holder}
}

// metaInSync reports whether observed carries the desired labels, annotations and owner.
func metaInSync(desired, observed metav1.Object, own []string) bool {
	return containsAll(observed.GetLabels(), desired.GetLabels()) &&
		containsAll(observed.GetAnnotations(), without(desired.GetAnnotations(), own)) &&
		hasControllerRef(observed, desired.GetOwnerReferences())
}

// mergeMeta adds the desired labels, annotations and controller reference to observed, keeping
// whatever else others put there.
func mergeMeta(desired, observed metav1.Object, own []string) {
	observed.SetLabels(mergeMaps(observed.GetLabels(), desired.GetLabels()))
	observed.SetAnnotations(mergeMaps(observed.GetAnnotations(), without(desired.GetAnnotations(), own)))
	if !hasControllerRef(observed, desired.GetOwnerReferences()) {
		refs := observed.GetOwnerReferences()
		for _, ref := range desired.GetOwnerReferences() {
			refs = replaceRef(refs, ref)
		}
		observed.SetOwnerReferences(refs)
	}
}

// without is m without the keys (m itself when it holds none of them).
func without(m map[string]string, keys []string) map[string]string {
	for _, key := range keys {
		if _, ok := m[key]; ok {
			m = maps.Clone(m)
			for _, k := range keys {
				delete(m, k)
			}
			return m
		}
	}
	return m
}

func containsAll(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func mergeMaps(have, want map[string]string) map[string]string {
	if len(want) == 0 {
		return have
	}
	merged := make(map[string]string, len(have)+len(want))
	maps.Copy(merged, have)
	maps.Copy(merged, want)
	return merged
}

func hasControllerRef(obj metav1.Object, want []metav1.OwnerReference) bool {
	for _, w := range want {
		found := false
		for _, ref := range obj.GetOwnerReferences() {
			if ref.UID == w.UID && ref.Kind == w.Kind && ref.APIVersion == w.APIVersion &&
				ptrEqual(ref.Controller, w.Controller) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// replaceRef puts ref in refs, replacing any reference to the same UID.
func replaceRef(refs []metav1.OwnerReference, ref metav1.OwnerReference) []metav1.OwnerReference {
	out := make([]metav1.OwnerReference, 0, len(refs)+1)
	for _, r := range refs {
		if r.UID != ref.UID {
			out = append(out, r)
		}
	}
	return append(out, ref)
}

func ptrEqual(a, b *bool) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// DegradedCondition is the Degraded condition of a resource whose reconcile ended with err:
// True with reason ChildConflict and the conflict's message when a child's name is held by an
// object the resource does not control, False otherwise.
func DegradedCondition(err error, generation int64) metav1.Condition {
	cond := metav1.Condition{
		Type:               conditions.Degraded,
		Status:             metav1.ConditionFalse,
		Reason:             conditions.ReasonAsExpected,
		Message:            "every child is controlled by this resource",
		ObservedGeneration: generation,
	}
	if message, ok := Conflict(err); ok {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, conditions.ReasonChildConflict, message
	}
	return cond
}

// ConflictBegan returns the message of the Degraded condition when it turned True between
// before and after, so that the conflict is told in one event, not in one per retry.
func ConflictBegan(before, after []metav1.Condition) (string, bool) {
	now := meta.FindStatusCondition(after, conditions.Degraded)
	if now == nil || now.Status != metav1.ConditionTrue || meta.IsStatusConditionTrue(before, conditions.Degraded) {
		return "", false
	}
	return now.Message, true
}

// ConfigMapData keeps the content of a ConfigMap child exactly: a key added, changed or removed
// by hand is put back, and binary data is removed.
var ConfigMapData = Spec[*corev1.ConfigMap]{
	InSync: func(desired, observed *corev1.ConfigMap) bool {
		return maps.Equal(desired.Data, observed.Data) && len(observed.BinaryData) == 0
	},
	Merge: func(desired, observed *corev1.ConfigMap) {
		observed.Data = desired.Data
		observed.BinaryData = nil
	},
}
