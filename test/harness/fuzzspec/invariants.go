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

package fuzzspec

import (
	"errors"
	"fmt"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Name rules of the children's kinds, as the API server applies them.
var (
	// DNSLabel: Services (DNS-1035 labels), and pod hostnames.
	DNSLabel = apimachineryvalidation.NameIsDNS1035Label
	// DNSSubdomain: StatefulSets, Jobs, CronJobs, ConfigMaps, PodDisruptionBudgets (the names
	// that end up in pod labels are checked as label values too).
	DNSSubdomain = apimachineryvalidation.NameIsDNSSubdomain
)

// Child checks the metadata of a built child of owner (whose kind is ownerGVK): valid as the API
// server validates object metadata (name by the kind's rule, labels, annotations, owner
// references), in owner's namespace, and controlled by owner alone (one owner reference, the
// controller, blocking owner deletion, naming owner's kind, name and UID).
func Child(obj, owner client.Object, ownerGVK schema.GroupVersionKind, name apimachineryvalidation.ValidateNameFunc) error {
	errs := apimachineryvalidation.ValidateObjectMetaAccessor(obj, true, name, field.NewPath("metadata"))
	if obj.GetNamespace() != owner.GetNamespace() {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), obj.GetNamespace(), "not the owner's"))
	}
	refs := obj.GetOwnerReferences()
	want := metav1.OwnerReference{
		APIVersion: ownerGVK.GroupVersion().String(), Kind: ownerGVK.Kind, Name: owner.GetName(), UID: owner.GetUID(),
	}
	if len(refs) != 1 {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "ownerReferences"), len(refs), "want exactly one"))
	} else {
		got := refs[0]
		if got.APIVersion != want.APIVersion || got.Kind != want.Kind || got.Name != want.Name || got.UID != want.UID ||
			got.Controller == nil || !*got.Controller || got.BlockOwnerDeletion == nil || !*got.BlockOwnerDeletion {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "ownerReferences").Index(0), got,
				fmt.Sprintf("want the controller reference %s %s (uid %s), blocking owner deletion", want.Kind, want.Name, want.UID)))
		}
	}
	return errs.ToAggregate()
}

// Labels checks that every key and value of m is a valid label (field names where it is).
func Labels(m map[string]string, where string) error {
	return metav1validation.ValidateLabels(m, field.NewPath(where)).ToAggregate()
}

// Annotations checks that m is valid as metadata.annotations (keys, total size).
func Annotations(m map[string]string, where string) error {
	return apimachineryvalidation.ValidateAnnotations(m, field.NewPath(where)).ToAggregate()
}

// LabelValue checks that v is a valid label value; where names what carries it.
func LabelValue(v, where string) error {
	if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
		return fmt.Errorf("%s %q is not a label value: %v", where, v, msgs)
	}
	return nil
}

// Selects checks that the selector is valid, not empty (it would select every pod of the
// namespace), and matches podLabels.
func Selects(selector *metav1.LabelSelector, podLabels map[string]string, where string) error {
	if selector == nil || (len(selector.MatchLabels) == 0 && len(selector.MatchExpressions) == 0) {
		return fmt.Errorf("%s is empty: it would select every pod of the namespace", where)
	}
	if errs := metav1validation.ValidateLabelSelector(selector, metav1validation.LabelSelectorValidationOptions{},
		field.NewPath(where)); len(errs) > 0 {
		return errs.ToAggregate()
	}
	s, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if !s.Matches(labels.Set(podLabels)) {
		return fmt.Errorf("%s %s does not match the pod labels %v", where, s, podLabels)
	}
	return nil
}

// SelectsMap is Selects for the map selector of a Service.
func SelectsMap(selector, podLabels map[string]string, where string) error {
	return Selects(&metav1.LabelSelector{MatchLabels: selector}, podLabels, where)
}

// JoinErrors joins the failed checks of one object (nil when all passed).
func JoinErrors(errs []error) error { return errors.Join(errs...) }
