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

package specs

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/seed1b407122/database-operator/api/labels"
)

// This file owns the drift rules of the StatefulSet: DiffStatefulSet says whether the live
// StatefulSet must be patched and why, MergeStatefulSet writes what differs. No other code
// decides it.
//
// The pod template is compared by two means, so that no field needs a rule of its own:
//   - the template hash (TemplateHashAnnotation): any change of the spec's template, in any
//     field, changes the hash the builder records;
//   - a field-by-field walk of the whole template (compareValues), for a template someone else
//     changed: live must hold every value of desired, no list or map item more, and no field
//     desired leaves empty, except the fields the API server defaults (serverDefaulted).
//
// The walk runs only when the StatefulSet is not at the generation its record names
// (TemplateRecorded); when it finds the template in sync, the record is written again.

// Drift is what differs between the desired StatefulSet and the live one: the paths of the
// fields (and the operator's annotations) to write. Empty when the live one is in sync.
type Drift struct {
	// Paths name what differs, e.g. "spec.replicas" or "spec.template.spec.containers[0].env".
	Paths []string
	// spec: a field of the spec differs (the write moves the generation).
	spec bool
	// template: the pod template differs (the write rolls the pods).
	template bool
	// replicas: spec.replicas differs.
	replicas bool
}

// InSync says whether nothing differs.
func (d Drift) InSync() bool { return len(d.Paths) == 0 }

// TemplateChanged says whether the pod template is written: the pods roll.
func (d Drift) TemplateChanged() bool { return d.template }

// Scaled says whether spec.replicas differs.
func (d Drift) Scaled() bool { return d.replicas }

// RecordOnly says whether only the operator's own annotations of the StatefulSet differ (the
// record of the template's generation, a rollback annotation no longer wanted): a write of
// metadata the user did not ask for, which rolls and repairs nothing.
func (d Drift) RecordOnly() bool {
	if d.spec || len(d.Paths) == 0 {
		return false
	}
	for _, p := range d.Paths {
		if !strings.HasPrefix(p, "metadata.annotations[") {
			return false
		}
	}
	return true
}

// String lists the paths that differ, for the log and the events.
func (d Drift) String() string { return strings.Join(d.Paths, ", ") }

func (d *Drift) add(path string) { d.Paths = append(d.Paths, path) }

// maxTemplatePaths bounds the paths a drifted template names: the first few tell why.
const maxTemplatePaths = 5

// DiffStatefulSet compares the StatefulSet desired asks for with live, as the API server holds
// it (or as the cache holds it with the template TemplateRecorded says it has). The immutable
// fields (selector, serviceName, podManagementPolicy, volumeClaimTemplates) are set on create
// only and not compared.
func DiffStatefulSet(desired, live *appsv1.StatefulSet) Drift {
	var d Drift
	if !ptr.Equal(desired.Spec.Replicas, live.Spec.Replicas) {
		d.add("spec.replicas")
		d.spec, d.replicas = true, true
	}
	if !equality.Semantic.DeepDerivative(desired.Spec.UpdateStrategy, live.Spec.UpdateStrategy) {
		d.add("spec.updateStrategy")
		d.spec = true
	}
	if !equality.Semantic.DeepDerivative(desired.Spec.PersistentVolumeClaimRetentionPolicy, live.Spec.PersistentVolumeClaimRetentionPolicy) {
		d.add("spec.persistentVolumeClaimRetentionPolicy")
		d.spec = true
	}
	if paths := templateDrift(desired, live); len(paths) > 0 {
		d.Paths = append(d.Paths, paths...)
		d.spec, d.template = true, true
	} else if !d.spec && !Recorded(live) {
		d.add("metadata.annotations[" + TemplateGenerationAnnotation + "]")
	}
	for _, key := range removedWhenUnwanted {
		_, want := desired.Annotations[key]
		if _, have := live.Annotations[key]; have && !want {
			d.add("metadata.annotations[" + key + "]")
		}
	}
	return d
}

// templateDrift names what differs between the pod templates of desired and live: the hash both
// record, or (when live is not at the generation of its record) the fields.
func templateDrift(desired, live *appsv1.StatefulSet) []string {
	want, had := desired.Annotations[TemplateHashAnnotation], live.Annotations[TemplateHashAnnotation]
	if want != "" && had != "" && want != had {
		return []string{"spec.template (hash " + short(had) + " -> " + short(want) + ")"}
	}
	if TemplateRecorded(desired, live) {
		return nil
	}
	return DiffTemplates(desired.Spec.Template, live.Spec.Template)
}

// Recorded says whether live records the generation it is at as the one its template was
// written or compared at.
func Recorded(live *appsv1.StatefulSet) bool {
	return live.Annotations[TemplateGenerationAnnotation] == strconv.FormatInt(live.Generation, 10)
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

// MergeStatefulSet writes into patched (a copy of live) the fields of desired that differ, the
// operator's annotations (the template hash, the rollback's, or their removal), and the record of
// the template's generation: the generation the write makes when it changes the
// spec (the write is made under live's resourceVersion, so no other write comes between), or
// live's. A template in sync is kept as it is: a scale must not write defaults the stored
// template lacks, which would roll the pods.
func MergeStatefulSet(desired, patched *appsv1.StatefulSet) {
	d := DiffStatefulSet(desired, patched)
	generation := patched.Generation
	if d.spec {
		generation++
	}
	patched.Spec.Replicas = desired.Spec.Replicas
	patched.Spec.UpdateStrategy = desired.Spec.UpdateStrategy
	patched.Spec.PersistentVolumeClaimRetentionPolicy = desired.Spec.PersistentVolumeClaimRetentionPolicy
	if d.template {
		patched.Spec.Template = *desired.Spec.Template.DeepCopy()
	}
	annotations := maps.Clone(patched.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	if hash, ok := desired.Annotations[TemplateHashAnnotation]; ok {
		annotations[TemplateHashAnnotation] = hash
	}
	for _, key := range removedWhenUnwanted {
		if value, want := desired.Annotations[key]; want {
			annotations[key] = value
		} else {
			delete(annotations, key)
		}
	}
	annotations[TemplateGenerationAnnotation] = strconv.FormatInt(generation, 10)
	patched.Annotations = annotations
}

// OwnAnnotations are the StatefulSet annotations that DiffStatefulSet and MergeStatefulSet
// decide, which the generic metadata merge of a child must leave to them.
var OwnAnnotations = []string{TemplateGenerationAnnotation}

// DiffTemplates names what differs between the pod templates desired and live, field by field
// (at most maxTemplatePaths paths); none when they are in sync. The spread constraints have one exception of their own: a StatefulSet
// written before the default spread existed (none stored, the default wanted) is in sync, so
// that an upgrade rolls no pod.
func DiffTemplates(desired, live corev1.PodTemplateSpec) []string {
	if len(live.Spec.TopologySpreadConstraints) == 0 &&
		equality.Semantic.DeepEqual(desired.Spec.TopologySpreadConstraints, defaultSpread(
			labels.Selector(desired.Labels[labels.Name], desired.Labels[labels.Instance]))) {
		desired.Spec.TopologySpreadConstraints = nil
	}
	var paths []string
	w := walker{paths: &paths}
	w.compare("spec.template", reflect.ValueOf(desired), reflect.ValueOf(live))
	return paths
}

// walker walks two values of one type side by side.
type walker struct{ paths *[]string }

func (w walker) differs(path string) {
	if len(*w.paths) < maxTemplatePaths {
		*w.paths = append(*w.paths, path)
	}
}

var quantityType = reflect.TypeFor[resource.Quantity]()

// compare appends the paths under path where live differs from want: want's values must be in
// live, and live must hold nothing want lacks (an item of a list or map, a field want leaves
// empty) but what the API server defaults.
func (w walker) compare(path string, want, live reflect.Value) {
	switch want.Kind() {
	case reflect.Pointer:
		switch {
		case want.IsNil() && live.IsNil():
		case want.IsNil():
			w.differs(path)
		case live.IsNil():
			w.differs(path)
		default:
			w.compare(path, want.Elem(), live.Elem())
		}
	case reflect.Struct:
		w.compareStruct(path, want, live)
	case reflect.Slice:
		if want.Len() != live.Len() {
			w.differs(path)
			return
		}
		for i := range want.Len() {
			w.compare(fmt.Sprintf("%s[%d]", path, i), want.Index(i), live.Index(i))
		}
	case reflect.Map:
		w.compareMap(path, want, live)
	default:
		if !want.Equal(live) {
			w.differs(path)
		}
	}
}

// compareStruct compares the exported fields; a field want leaves empty may be set in live only
// when the API server defaults it.
func (w walker) compareStruct(path string, want, live reflect.Value) {
	if want.Type() == quantityType {
		wq, lq := want.Interface().(resource.Quantity), live.Interface().(resource.Quantity)
		if wq.Cmp(lq) != 0 {
			w.differs(path)
		}
		return
	}
	for i := range want.NumField() {
		field := want.Type().Field(i)
		if !field.IsExported() {
			continue
		}
		fieldPath := path + "." + jsonName(field)
		if field.Anonymous {
			fieldPath = path
		}
		wv, lv := want.Field(i), live.Field(i)
		if wv.IsZero() && !lv.IsZero() && serverDefaulted(want.Type(), field.Name) {
			continue
		}
		w.compare(fieldPath, wv, lv)
	}
}

func (w walker) compareMap(path string, want, live reflect.Value) {
	if want.Len() != live.Len() {
		w.differs(path)
		return
	}
	keys := want.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	for _, key := range keys {
		lv := live.MapIndex(key)
		keyPath := fmt.Sprintf("%s[%v]", path, key)
		if !lv.IsValid() {
			w.differs(keyPath)
			continue
		}
		w.compare(keyPath, want.MapIndex(key), lv)
	}
}

// jsonName is the name of field in the API's JSON.
func jsonName(field reflect.StructField) string {
	name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
	if name == "" || name == "-" {
		return field.Name
	}
	return name
}

// defaultedFields are the fields of a pod template the API server sets when they are left empty
// (k8s.io/kubernetes pkg/apis/core/v1/defaults.go), by the struct that holds them. A field
// desired leaves empty and live holds is a change unless it is listed here.
// TestServerDefaultsAreKnown writes the builder's richest template to a real API server and
// proves the list covers what it defaults; a field missing from it costs one write that
// changes nothing (the server's generation stays, and MergeStatefulSet's record follows it),
// never a roll.
var defaultedFields = map[reflect.Type][]string{
	reflect.TypeFor[corev1.PodSpec](): {"DNSPolicy", "RestartPolicy", "TerminationGracePeriodSeconds",
		"SecurityContext", "SchedulerName", "DeprecatedServiceAccount", "EnableServiceLinks"},
	reflect.TypeFor[corev1.Container]():                     {"TerminationMessagePath", "TerminationMessagePolicy", "ImagePullPolicy"},
	reflect.TypeFor[corev1.ContainerPort]():                 {"Protocol"},
	reflect.TypeFor[corev1.Probe]():                         {"TimeoutSeconds", "PeriodSeconds", "SuccessThreshold", "FailureThreshold"},
	reflect.TypeFor[corev1.HTTPGetAction]():                 {"Scheme"},
	reflect.TypeFor[corev1.VolumeSource]():                  {"EmptyDir"},
	reflect.TypeFor[corev1.ConfigMapVolumeSource]():         {defaultMode},
	reflect.TypeFor[corev1.SecretVolumeSource]():            {defaultMode},
	reflect.TypeFor[corev1.ProjectedVolumeSource]():         {defaultMode},
	reflect.TypeFor[corev1.DownwardAPIVolumeSource]():       {defaultMode},
	reflect.TypeFor[corev1.HostPathVolumeSource]():          {"Type"},
	reflect.TypeFor[corev1.ObjectFieldSelector]():           {"APIVersion"},
	reflect.TypeFor[corev1.ServiceAccountTokenProjection](): {"ExpirationSeconds"},
	reflect.TypeFor[corev1.PersistentVolumeClaimSpec]():     {"VolumeMode"},
	reflect.TypeFor[corev1.ISCSIVolumeSource]():             {"ISCSIInterface"},
	reflect.TypeFor[corev1.RBDVolumeSource]():               {"RBDPool", "RadosUser", "Keyring"},
	reflect.TypeFor[corev1.AzureDiskVolumeSource]():         {"CachingMode", "FSType", "ReadOnly", "Kind"},
	reflect.TypeFor[corev1.ScaleIOVolumeSource]():           {"StorageMode", "FSType"},
}

// defaultMode is the field of the volume sources that carry a file mode.
const defaultMode = "DefaultMode"

// serverDefaulted says whether the API server defaults field name of struct type t.
func serverDefaulted(t reflect.Type, name string) bool {
	return slices.Contains(defaultedFields[t], name)
}
