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
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Stored returns obj as the API server would store it on create: through JSON, with the defaults
// of the built-in kinds that the drift checks meet filled in (those of k8s.io/kubernetes'
// pkg/apis/*/v1/defaults.go for StatefulSets, Services, Jobs, CronJobs and pod templates). It is
// an emulation for the fuzz targets, which cannot run an API server per input; the seed-corpus
// envtest spec checks the same children against the real one.
func Stored[T client.Object](obj T) (T, error) {
	out, err := roundTrip(obj, nil)
	if err != nil {
		return out, err
	}
	serverDefaults(out)
	out.SetGeneration(1)
	return out, nil
}

// Patched returns the object the API server stores when the write path sends the merge patch
// from observed to patched (client.MergeFrom, as controllers/internal/child does): the patch
// applied to observed's JSON with the API server's merge-patch code, then defaulted again.
func Patched[T client.Object](observed, patched T) (T, error) {
	data, err := client.MergeFrom(observed).Data(patched)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("computing the merge patch: %w", err)
	}
	out, err := roundTrip(observed, data)
	if err != nil {
		return out, err
	}
	serverDefaults(out)
	out.SetGeneration(observed.GetGeneration())
	if changed, err := specChanged(observed, out); err != nil || changed {
		// A write that changes the spec moves the generation by one, as the API server's
		// strategies of the kinds with a generation do.
		out.SetGeneration(observed.GetGeneration() + 1)
		return out, err
	}
	return out, nil
}

// specChanged says whether the spec of after differs from before's, as their JSON holds it.
func specChanged(before, after client.Object) (bool, error) {
	spec := func(obj client.Object) (any, error) {
		data, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		var fields map[string]any
		err = json.Unmarshal(data, &fields)
		return fields["spec"], err
	}
	a, err := spec(before)
	if err != nil {
		return false, err
	}
	b, err := spec(after)
	return !reflect.DeepEqual(a, b), err
}

// roundTrip encodes obj, applies the merge patch when there is one, and decodes the result into
// a new object of obj's type.
func roundTrip[T client.Object](obj T, patch []byte) (T, error) {
	var zero T
	data, err := json.Marshal(obj)
	if err != nil {
		return zero, err
	}
	if patch != nil {
		if data, err = jsonpatch.MergePatch(data, patch); err != nil {
			return zero, fmt.Errorf("applying the merge patch %s: %w", patch, err)
		}
	}
	out := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(T)
	if err := json.Unmarshal(data, out); err != nil {
		return zero, err
	}
	return out, nil
}

func serverDefaults(obj client.Object) {
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		statefulSetDefaults(&o.Spec)
	case *corev1.Service:
		serviceDefaults(&o.Spec)
	case *batchv1.Job:
		jobDefaults(o.Name, &o.Spec)
	case *batchv1.CronJob:
		cronJobDefaults(&o.Spec)
	}
}

func statefulSetDefaults(s *appsv1.StatefulSetSpec) {
	if s.PodManagementPolicy == "" {
		s.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if s.UpdateStrategy.Type == "" {
		s.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
	}
	if s.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && s.UpdateStrategy.RollingUpdate == nil {
		s.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](0)}
	}
	if s.PersistentVolumeClaimRetentionPolicy == nil {
		s.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if s.PersistentVolumeClaimRetentionPolicy.WhenDeleted == "" {
		s.PersistentVolumeClaimRetentionPolicy.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if s.PersistentVolumeClaimRetentionPolicy.WhenScaled == "" {
		s.PersistentVolumeClaimRetentionPolicy.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if s.Replicas == nil {
		s.Replicas = ptr.To[int32](1)
	}
	if s.RevisionHistoryLimit == nil {
		s.RevisionHistoryLimit = ptr.To[int32](10)
	}
	for i := range s.VolumeClaimTemplates {
		if s.VolumeClaimTemplates[i].Spec.VolumeMode == nil {
			s.VolumeClaimTemplates[i].Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
		}
	}
	podDefaults(&s.Template.Spec, corev1.RestartPolicyAlways)
}

func serviceDefaults(s *corev1.ServiceSpec) {
	if s.Type == "" {
		s.Type = corev1.ServiceTypeClusterIP
	}
	if s.ClusterIP == "" {
		s.ClusterIP = "10.96.0.10" // allocated
	}
	if len(s.ClusterIPs) == 0 {
		s.ClusterIPs = []string{s.ClusterIP}
	}
	if s.SessionAffinity == "" {
		s.SessionAffinity = corev1.ServiceAffinityNone
	}
	if s.InternalTrafficPolicy == nil {
		s.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
	}
	if len(s.IPFamilies) == 0 {
		s.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	if s.IPFamilyPolicy == nil {
		s.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
	}
	for i := range s.Ports {
		p := &s.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == (intstr.IntOrString{}) {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
}

func jobDefaults(name string, s *batchv1.JobSpec) {
	if s.Completions == nil {
		s.Completions = ptr.To[int32](1)
	}
	if s.Parallelism == nil {
		s.Parallelism = ptr.To[int32](1)
	}
	if s.BackoffLimit == nil {
		s.BackoffLimit = ptr.To[int32](6)
	}
	if s.CompletionMode == nil {
		s.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	}
	if s.Suspend == nil {
		s.Suspend = ptr.To(false)
	}
	if s.ManualSelector == nil {
		s.ManualSelector = ptr.To(false)
	}
	if s.PodReplacementPolicy == nil {
		s.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
	}
	// The Job controller's labels on the template (and the selector from them).
	if s.Template.Labels == nil {
		s.Template.Labels = map[string]string{}
	}
	s.Template.Labels[batchv1.ControllerUidLabel] = "11111111-2222-4333-8444-555555555555"
	s.Template.Labels[batchv1.JobNameLabel] = name
	podDefaults(&s.Template.Spec, corev1.RestartPolicyNever)
}

func cronJobDefaults(s *batchv1.CronJobSpec) {
	if s.ConcurrencyPolicy == "" {
		s.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if s.Suspend == nil {
		s.Suspend = ptr.To(false)
	}
	if s.SuccessfulJobsHistoryLimit == nil {
		s.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
	}
	if s.FailedJobsHistoryLimit == nil {
		s.FailedJobsHistoryLimit = ptr.To[int32](1)
	}
	podDefaults(&s.JobTemplate.Spec.Template.Spec, corev1.RestartPolicyNever)
}

// podDefaults fills in what the API server defaults in a pod template.
func podDefaults(s *corev1.PodSpec, restart corev1.RestartPolicy) {
	if s.RestartPolicy == "" {
		s.RestartPolicy = restart
	}
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = ptr.To[int64](30)
	}
	if s.DNSPolicy == "" {
		s.DNSPolicy = corev1.DNSClusterFirst
	}
	if s.SchedulerName == "" {
		s.SchedulerName = corev1.DefaultSchedulerName
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	for i := range s.Tolerations {
		if s.Tolerations[i].Operator == "" {
			s.Tolerations[i].Operator = corev1.TolerationOpEqual
		}
	}
	for i := range s.Containers {
		containerDefaults(&s.Containers[i])
	}
}

func containerDefaults(c *corev1.Container) {
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = corev1.PullIfNotPresent
		if tagIsLatest(c.Image) {
			c.ImagePullPolicy = corev1.PullAlways
		}
	}
	for j := range c.Ports {
		if c.Ports[j].Protocol == "" {
			c.Ports[j].Protocol = corev1.ProtocolTCP
		}
	}
	for j := range c.Env {
		if f := c.Env[j].ValueFrom; f != nil && f.FieldRef != nil && f.FieldRef.APIVersion == "" {
			f.FieldRef.APIVersion = "v1"
		}
	}
	for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
		probeDefaults(p)
	}
}

func probeDefaults(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
}

// tagIsLatest is the API server's rule for the default pull policy: Always for an image without
// a tag or digest, or tagged latest.
func tagIsLatest(image string) bool {
	if strings.Contains(image, "@") {
		return false
	}
	name := image[strings.LastIndex(image, "/")+1:]
	_, tag, ok := strings.Cut(name, ":")
	return !ok || tag == "latest"
}
