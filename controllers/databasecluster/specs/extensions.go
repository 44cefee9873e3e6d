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
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/podsecurity"
)

// defaultTerminationGracePeriod is the API server's default, set explicitly so that removing
// spec.terminationGracePeriodSeconds is applied too (the drift check compares it exactly).
const defaultTerminationGracePeriod int64 = 30

// checkPodExtensions reports the rules on spec's pod extensions that admission cannot check at an
// acceptable cost (it cannot bound the comparison of every name of one list with every name of
// another): a sidecar and an init container sharing a name, and a mount of a volume the pods do
// not have. The builder refuses such a spec, so Degraded says why and no pod is changed.
func checkPodExtensions(spec *databasev1alpha1.DatabaseClusterSpec) error {
	for _, s := range spec.Sidecars {
		if slices.ContainsFunc(spec.InitContainers, func(c corev1.Container) bool { return c.Name == s.Name }) {
			return fmt.Errorf("spec.sidecars and spec.initContainers both have a container named %q: containers of one pod need different names", s.Name)
		}
	}
	for _, m := range spec.VolumeMounts {
		if !slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name }) {
			return fmt.Errorf("spec.volumeMounts mounts %q at %s, but spec.volumes has no volume of that name", m.Name, m.MountPath)
		}
	}
	return nil
}

// buildInitContainers are the pod's init containers: the user's, which run to completion one
// after the other, then the sidecars, as native sidecars (restartPolicy Always) that the kubelet
// starts after the init containers and before the database, and stops after it. The init
// containers come first so that they can prepare the data directory before an agent reads it.
func buildInitContainers(dc *databasev1alpha1.DatabaseCluster, agentImage string) []corev1.Container {
	spec := &dc.Spec
	agent := hasAgent(dc, agentImage)
	if len(spec.InitContainers)+len(spec.Sidecars) == 0 && !agent {
		return nil
	}
	containers := make([]corev1.Container, 0, len(spec.InitContainers)+len(spec.Sidecars)+1)
	for _, c := range spec.InitContainers {
		containers = append(containers, userContainer(c))
	}
	for _, c := range spec.Sidecars {
		c = userContainer(c)
		c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		containers = append(containers, c)
	}
	// The agent, with spec.storage.autoGrow or an engine and when the operator knows its own
	// image, comes last. Without either the template has none: clusters that do not ask for it
	// are never rolled for it.
	if agent {
		containers = append(containers, BuildAgent(dc, agentImage))
	}
	return containers
}

// userContainer is a container of the user's with the restricted profile's security settings
// where the user set none, and its probes' timings made explicit.
func userContainer(c corev1.Container) corev1.Container {
	c = *c.DeepCopy()
	c.SecurityContext = restrictedUnlessSet(c.SecurityContext)
	c.StartupProbe = explicitProbe(c.StartupProbe)
	c.LivenessProbe = explicitProbe(c.LivenessProbe)
	c.ReadinessProbe = explicitProbe(c.ReadinessProbe)
	return c
}

// restrictedUnlessSet is the restricted profile's container security context with each field
// the user set taking its place: a user's own container meets the profile unless the user says
// otherwise, and then the NotRestricted event says so.
func restrictedUnlessSet(user *corev1.SecurityContext) *corev1.SecurityContext {
	security := podsecurity.Restricted()
	if user == nil {
		return security
	}
	merged := user.DeepCopy()
	// A privileged container escalates by definition: the API server refuses false beside it.
	if merged.AllowPrivilegeEscalation == nil && !ptr.Deref(merged.Privileged, false) {
		merged.AllowPrivilegeEscalation = security.AllowPrivilegeEscalation
	}
	if merged.RunAsNonRoot == nil {
		merged.RunAsNonRoot = security.RunAsNonRoot
	}
	if merged.Capabilities == nil {
		merged.Capabilities = security.Capabilities
	}
	if merged.SeccompProfile == nil {
		merged.SeccompProfile = security.SeccompProfile
	}
	return merged
}

// explicitProbe is probe with the API server's default timings written out, or nil.
func explicitProbe(probe *corev1.Probe) *corev1.Probe {
	if probe == nil {
		return nil
	}
	p := probe.DeepCopy()
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = probeTimeoutSeconds
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = probeDefaultPeriodSeconds
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = probeSuccessThreshold
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = probeDefaultFailureThreshold
	}
	return p
}

// imagePullPolicy is spec.imagePullPolicy, or the API server's default for the image: Always
// for an image without a tag or tagged latest, IfNotPresent otherwise (a digest pins it).
func imagePullPolicy(spec *databasev1alpha1.DatabaseClusterSpec) corev1.PullPolicy {
	if spec.ImagePullPolicy != "" {
		return spec.ImagePullPolicy
	}
	image, digest, _ := strings.Cut(spec.Image, "@")
	name := image[strings.LastIndex(image, "/")+1:]
	_, tag, tagged := strings.Cut(name, ":")
	if tag == "latest" || (!tagged && digest == "") {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// terminationGracePeriod is spec.terminationGracePeriodSeconds or the API server's default.
func terminationGracePeriod(spec *databasev1alpha1.DatabaseClusterSpec) *int64 {
	return ptr.To(ptr.Deref(spec.TerminationGracePeriodSeconds, defaultTerminationGracePeriod))
}

// spreadConstraints are the user's topology spread constraints, each without a labelSelector
// given this cluster's selector, or by default defaultSpread.
func spreadConstraints(dc *databasev1alpha1.DatabaseCluster) []corev1.TopologySpreadConstraint {
	if len(dc.Spec.TopologySpreadConstraints) == 0 {
		return defaultSpread(dc.SelectorLabels())
	}
	constraints := make([]corev1.TopologySpreadConstraint, len(dc.Spec.TopologySpreadConstraints))
	for i, c := range dc.Spec.TopologySpreadConstraints {
		c = *c.DeepCopy()
		if c.LabelSelector == nil {
			c.LabelSelector = &metav1.LabelSelector{MatchLabels: dc.SelectorLabels()}
		}
		constraints[i] = c
	}
	return constraints
}

// defaultSpread spreads the members of the cluster selected by selector across zones first and
// nodes second, as evenly as possible (maxSkew 1), without ever keeping a pod from scheduling
// (ScheduleAnyway): a three-member cluster on three zones survives the loss of a zone, and a
// cluster with more members than zones or nodes still runs. Nodes without a zone label count as
// one zone, so a cluster without zones is spread across nodes alone.
func defaultSpread(selector map[string]string) []corev1.TopologySpreadConstraint {
	constraint := func(key string) corev1.TopologySpreadConstraint {
		return corev1.TopologySpreadConstraint{
			MaxSkew:           1,
			TopologyKey:       key,
			WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: maps.Clone(selector)},
		}
	}
	return []corev1.TopologySpreadConstraint{constraint(corev1.LabelTopologyZone), constraint(corev1.LabelHostname)}
}

// restrictedEvaluator checks pod templates against the Pod Security Standards with the API
// server's own checks.
var restrictedEvaluator = mustEvaluator()

func mustEvaluator() policy.Evaluator {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		panic(fmt.Sprintf("the Pod Security checks of k8s.io/pod-security-admission do not load: %v", err))
	}
	return evaluator
}

// NotRestricted says what in template breaks the restricted Pod Security profile (the latest
// version of it), e.g. `privileged (container "agent" must not set securityContext.privileged=true)`;
// empty when nothing does. The operator's own parts always meet the profile, so only a user's
// container or volume can.
func NotRestricted(template *corev1.PodTemplateSpec) string {
	results := restrictedEvaluator.EvaluatePod(psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()},
		&template.ObjectMeta, &template.Spec)
	var forbidden []string
	for _, r := range results {
		if !r.Allowed {
			forbidden = append(forbidden, r.ForbiddenReason+" ("+r.ForbiddenDetail+")")
		}
	}
	return strings.Join(forbidden, "; ")
}
