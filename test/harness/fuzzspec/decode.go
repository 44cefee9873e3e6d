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
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
)

// The namespace and UID of every decoded resource: the builders copy both into their children.
const (
	Namespace = "fuzz"
	UID       = types.UID("0f0e0d0c-0b0a-4909-8807-060504030201")
)

// Bits of the flags argument of DatabaseCluster.
const (
	FlagPaused          = 1 << iota // spec.paused
	FlagPDBSet                      // spec.podDisruptionBudget.enabled is set ...
	FlagPDBEnabled                  // ... to true
	FlagDeleteOnDeleted             // pvcRetentionPolicy.whenDeleted: Delete
	FlagDeleteOnScaled              // pvcRetentionPolicy.whenScaled: Delete
	FlagAffinity                    // a required node affinity instead of the default anti-affinity
)

// DatabaseCluster decodes a fuzz input into a DatabaseCluster, or nil when a quantity does not
// parse (the typed API cannot hold it). Maps and lists are one entry per line:
//
//	resources, podLabels, podAnnotations, nodeSelector, env: key=value
//	  (resources keys are requests.<name> and limits.<name>)
//	args: one argument per line
//	tolerations: key=value:Effect (operator Equal), key:Effect (Exists), :Effect (every key)
//
// port 0 and empty strings leave their field unset, so that the CRD's defaults apply; the
// restartedAt annotation is set when restartedAt is not empty.
func DatabaseCluster(name, image, size, storageClass string, replicas, port int32, flags uint8,
	resources, podLabels, podAnnotations, nodeSelector, env, args, tolerations,
	priorityClassName, restartedAt string,
) *databasev1alpha1.DatabaseCluster {
	dc := &databasev1alpha1.DatabaseCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, UID: UID},
		Spec: databasev1alpha1.DatabaseClusterSpec{
			Replicas:          ptr.To(replicas),
			Image:             image,
			Port:              port,
			Storage:           databasev1alpha1.StorageSpec{StorageClassName: storageClass, Size: size},
			PodLabels:         pairs(podLabels),
			PodAnnotations:    pairs(podAnnotations),
			NodeSelector:      pairs(nodeSelector),
			Args:              lines(args),
			Tolerations:       decodeTolerations(tolerations),
			PriorityClassName: priorityClassName,
			Paused:            flags&FlagPaused != 0,
		},
	}
	for _, kv := range orderedPairs(env) {
		dc.Spec.Env = append(dc.Spec.Env, corev1.EnvVar{Name: kv[0], Value: kv[1]})
	}
	var ok bool
	if dc.Spec.Resources, ok = decodeResources(resources); !ok {
		return nil
	}
	if flags&FlagPDBSet != 0 {
		dc.Spec.PodDisruptionBudget = &databasev1alpha1.PodDisruptionBudgetSpec{Enabled: ptr.To(flags&FlagPDBEnabled != 0)}
	}
	if flags&(FlagDeleteOnDeleted|FlagDeleteOnScaled) != 0 {
		policy := &databasev1alpha1.PVCRetentionPolicy{WhenDeleted: databasev1alpha1.RetainPVC, WhenScaled: databasev1alpha1.RetainPVC}
		if flags&FlagDeleteOnDeleted != 0 {
			policy.WhenDeleted = databasev1alpha1.DeletePVC
		}
		if flags&FlagDeleteOnScaled != 0 {
			policy.WhenScaled = databasev1alpha1.DeletePVC
		}
		dc.Spec.PVCRetentionPolicy = policy
	}
	if flags&FlagAffinity != 0 {
		dc.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"linux"},
				}}}},
			},
		}}
	}
	if restartedAt != "" {
		dc.Annotations = map[string]string{databasev1alpha1.RestartedAtAnnotation: restartedAt}
	}
	return dc
}

// Echo decodes a fuzz input into an Echo.
func Echo(name, message string) *echov1alpha1.Echo {
	return &echov1alpha1.Echo{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, UID: UID},
		Spec:       echov1alpha1.EchoSpec{Message: message},
	}
}

// ScheduledEcho decodes a fuzz input into a ScheduledEcho.
func ScheduledEcho(name, message, schedule string, suspend bool) *echov1alpha1.ScheduledEcho {
	return &echov1alpha1.ScheduledEcho{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, UID: UID},
		Spec:       echov1alpha1.ScheduledEchoSpec{Message: message, Schedule: schedule, Suspend: suspend},
	}
}

// VoteConfig decodes a fuzz input into a VoteConfig; options are id=label lines, in order.
func VoteConfig(name, title, targetDeployment, options string) *votingv1alpha1.VoteConfig {
	vc := &votingv1alpha1.VoteConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, UID: UID},
		Spec:       votingv1alpha1.VoteConfigSpec{Title: title, TargetDeployment: targetDeployment},
	}
	for _, kv := range orderedPairs(options) {
		vc.Spec.Options = append(vc.Spec.Options, votingv1alpha1.VoteOption{ID: kv[0], Label: kv[1]})
	}
	return vc
}

// lines splits s into lines; an empty s is no lines (nil, so that the field stays unset).
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// orderedPairs splits every line of s at its first '=' (a line without one is a key with an
// empty value).
func orderedPairs(s string) [][2]string {
	var out [][2]string
	for _, line := range lines(s) {
		k, v, _ := strings.Cut(line, "=")
		out = append(out, [2]string{k, v})
	}
	return out
}

// pairs is orderedPairs as a map (a later line wins), nil when s is empty.
func pairs(s string) map[string]string {
	if s == "" {
		return nil
	}
	m := map[string]string{}
	for _, kv := range orderedPairs(s) {
		m[kv[0]] = kv[1]
	}
	return m
}

func decodeResources(s string) (corev1.ResourceRequirements, bool) {
	var r corev1.ResourceRequirements
	for _, kv := range orderedPairs(s) {
		q, err := resource.ParseQuantity(kv[1])
		if err != nil {
			return r, false
		}
		list, name, _ := strings.Cut(kv[0], ".")
		switch list {
		case "requests":
			if r.Requests == nil {
				r.Requests = corev1.ResourceList{}
			}
			r.Requests[corev1.ResourceName(name)] = q
		case "limits":
			if r.Limits == nil {
				r.Limits = corev1.ResourceList{}
			}
			r.Limits[corev1.ResourceName(name)] = q
		default:
			return r, false
		}
	}
	return r, true
}

func decodeTolerations(s string) []corev1.Toleration {
	var out []corev1.Toleration
	for _, line := range lines(s) {
		t := corev1.Toleration{Operator: corev1.TolerationOpExists}
		if i := strings.LastIndex(line, ":"); i >= 0 {
			line, t.Effect = line[:i], corev1.TaintEffect(line[i+1:])
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			t.Key, t.Value, t.Operator = k, v, corev1.TolerationOpEqual
		} else {
			t.Key = line
		}
		out = append(out, t)
	}
	return out
}

// Pairs decodes key=value lines into a map (nil when s is empty), as the decoders do.
func Pairs(s string) map[string]string { return pairs(s) }
