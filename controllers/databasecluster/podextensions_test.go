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

package databasecluster

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/podsecurity"
)

// withExtensions gives a test cluster every pod extension: an init container, a native sidecar
// that mounts the data volume, a projected Secret volume the database mounts, envFrom, a pull
// secret, a ServiceAccount, a spread constraint without a selector, a grace period, a preStop
// hook and the three probes.
func withExtensions() clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) {
		dc.Spec.PodExtensions = databasev1alpha1.PodExtensions{
			InitContainers: []corev1.Container{{Name: "prepare", Image: "registry.example/init:1.0", Command: []string{"true"}}},
			Sidecars: []corev1.Container{{
				Name: "agent", Image: "registry.example/agent:1.0",
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data", ReadOnly: true}},
			}},
			Volumes: []corev1.Volume{{Name: "extra", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{
					LocalObjectReference: corev1.LocalObjectReference{Name: "db-extra"},
					Items:                []corev1.KeyToPath{{Key: "token", Path: "token"}},
				}}},
			}}}},
			VolumeMounts:       []corev1.VolumeMount{{Name: "extra", MountPath: "/etc/extra", ReadOnly: true}},
			EnvFrom:            []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db-env"}}}},
			ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "registry"}},
			ImagePullPolicy:    corev1.PullNever,
			ServiceAccountName: "db-reader",
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule,
			}},
			TerminationGracePeriodSeconds: ptr.To[int64](120),
			Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
				Exec: &corev1.ExecAction{Command: []string{"sleep", "5"}},
			}},
			StartupProbe:   &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("db")}}, FailureThreshold: 60},
			LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromInt32(8080)}}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"ready"}}}, InitialDelaySeconds: 5},
		}
	}
}

var _ = Describe("Pod extensions", Label("unit"), func() {
	selector := map[string]string{"app.kubernetes.io/name": "database", "app.kubernetes.io/instance": "db"}

	It("puts every extension in the pod template, sidecars after init containers with restartPolicy Always", func() {
		sts, err := specs.BuildStatefulSet(newCluster("db", withExtensions()), specs.Inputs{})
		Expect(err).NotTo(HaveOccurred())
		pod := sts.Spec.Template.Spec
		Expect(pod.InitContainers).To(Equal([]corev1.Container{
			{Name: "prepare", Image: "registry.example/init:1.0", Command: []string{"true"}, SecurityContext: podsecurity.Restricted()},
			{
				Name: "agent", Image: "registry.example/agent:1.0", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
				VolumeMounts:    []corev1.VolumeMount{{Name: "data", MountPath: "/data", ReadOnly: true}},
				SecurityContext: podsecurity.Restricted(),
			},
		}))
		Expect(pod.Volumes).To(HaveLen(1))
		Expect(pod.Volumes[0].Name).To(Equal("extra"))
		Expect(pod.ImagePullSecrets).To(Equal([]corev1.LocalObjectReference{{Name: "registry"}}))
		Expect(pod.ServiceAccountName).To(Equal("db-reader"))
		Expect(pod.TerminationGracePeriodSeconds).To(Equal(ptr.To[int64](120)))
		Expect(pod.TopologySpreadConstraints).To(Equal([]corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: selector},
		}}))
		db := pod.Containers[0]
		Expect(db.VolumeMounts).To(Equal([]corev1.VolumeMount{
			{Name: "data", MountPath: "/var/lib/database"}, {Name: "extra", MountPath: "/etc/extra", ReadOnly: true},
		}))
		Expect(db.EnvFrom).To(HaveLen(1))
		Expect(db.ImagePullPolicy).To(Equal(corev1.PullNever))
		Expect(db.Lifecycle.PreStop.Exec.Command).To(Equal([]string{"sleep", "5"}))
		Expect(db.StartupProbe).To(Equal(&corev1.Probe{
			ProbeHandler:   corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("db")}},
			TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 60,
		}))
		Expect(db.LivenessProbe.HTTPGet.Path).To(Equal("/health"))
		Expect(db.ReadinessProbe).To(Equal(&corev1.Probe{
			ProbeHandler:        corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"ready"}}},
			InitialDelaySeconds: 5, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
		}))
		Expect(specs.NotRestricted(&sts.Spec.Template)).To(BeEmpty())
	})

	It("keeps the defaults without extensions: TCP probes, no startup probe, spread across zones then nodes, grace 30", func() {
		sts, err := specs.BuildStatefulSet(newCluster("db"), specs.Inputs{})
		Expect(err).NotTo(HaveOccurred())
		pod := sts.Spec.Template.Spec
		Expect(pod.InitContainers).To(BeNil())
		Expect(pod.Volumes).To(BeNil())
		Expect(pod.TerminationGracePeriodSeconds).To(Equal(ptr.To[int64](30)))
		Expect(pod.TopologySpreadConstraints).To(Equal([]corev1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: selector}},
			{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: selector}},
		}))
		db := pod.Containers[0]
		Expect(db.StartupProbe).To(BeNil())
		Expect(db.ReadinessProbe.TCPSocket.Port).To(Equal(intstr.FromString("db")))
		Expect(db.LivenessProbe.InitialDelaySeconds).To(Equal(int32(15)))
		Expect(db.ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))
		Expect(specs.NotRestricted(&sts.Spec.Template)).To(BeEmpty())
	})

	DescribeTable("imagePullPolicy follows the API server's default when unset",
		func(image string, want corev1.PullPolicy) {
			sts := buildStatefulSet(newCluster("db", withImage(image)), specs.Inputs{})
			Expect(sts.Spec.Template.Spec.Containers[0].ImagePullPolicy).To(Equal(want))
		},
		Entry("tagged", "registry.example/db:1.0", corev1.PullIfNotPresent),
		Entry("latest", "registry.example/db:latest", corev1.PullAlways),
		Entry("no tag", "registry.example/db", corev1.PullAlways),
		Entry("registry port, no tag", "localhost:5000/db", corev1.PullAlways),
		Entry("registry port and tag", "localhost:5000/db:15", corev1.PullIfNotPresent),
		Entry("digest only", "registry.example/db@sha256:0123", corev1.PullIfNotPresent),
		Entry("tag and digest", "registry.example/db:1.0@sha256:0123", corev1.PullIfNotPresent),
	)

	DescribeTable("refuses what admission cannot check, naming the clash",
		func(change func(*databasev1alpha1.DatabaseCluster), message string) {
			_, err := specs.BuildStatefulSet(newCluster("db", withExtensions(), change), specs.Inputs{})
			Expect(err).To(MatchError(message))
		},
		Entry("a sidecar named like an init container", func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.Sidecars[0].Name = "prepare"
		}, `spec.sidecars and spec.initContainers both have a container named "prepare": containers of one pod need different names`),
		Entry("a mount of a volume the pods do not have", func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.VolumeMounts[0].Name = "nowhere"
		}, `spec.volumeMounts mounts "nowhere" at /etc/extra, but spec.volumes has no volume of that name`),
	)

	It("fills the restricted profile where a user's container sets nothing, and keeps what it sets", func() {
		user := &corev1.SecurityContext{RunAsUser: ptr.To[int64](999), ReadOnlyRootFilesystem: ptr.To(true)}
		init := buildStatefulSet(newCluster("db", withExtensions(), func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.Sidecars[0].SecurityContext = user
		}), specs.Inputs{}).Spec.Template.Spec.InitContainers
		Expect(init[0].SecurityContext).To(Equal(podsecurity.Restricted()), "the init container sets nothing")
		want := podsecurity.Restricted()
		want.RunAsUser, want.ReadOnlyRootFilesystem = ptr.To[int64](999), ptr.To(true)
		Expect(init[1].SecurityContext).To(Equal(want))
	})

	It("says which container breaks the restricted profile", func() {
		sts, err := specs.BuildStatefulSet(newCluster("db", withExtensions(), func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.Sidecars[0].SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}
		}), specs.Inputs{})
		Expect(err).NotTo(HaveOccurred())
		Expect(specs.NotRestricted(&sts.Spec.Template)).To(Equal(`runAsUser=0 (container "agent" must not set runAsUser=0)`))
	})

	DescribeTable("the drift check sees every extension removed or changed",
		func(change func(*databasev1alpha1.DatabaseCluster)) {
			before, err := specs.BuildStatefulSet(newCluster("db", withExtensions()), specs.Inputs{})
			Expect(err).NotTo(HaveOccurred())
			after, err := specs.BuildStatefulSet(newCluster("db", withExtensions(), change), specs.Inputs{})
			Expect(err).NotTo(HaveOccurred())
			Expect(templateInSync(before.Spec.Template, before.Spec.Template)).To(BeTrue())
			Expect(templateInSync(after.Spec.Template, before.Spec.Template)).To(BeFalse())
		},
		Entry("init container removed", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.InitContainers = nil }),
		Entry("sidecar removed", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Sidecars = nil }),
		Entry("sidecar's mount removed", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Sidecars[0].VolumeMounts = nil }),
		Entry("volume and mount removed", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Volumes, dc.Spec.VolumeMounts = nil, nil }),
		Entry("envFrom removed", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.EnvFrom = nil }),
		Entry("pull secret removed", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.ImagePullSecrets = nil }),
		Entry("pull policy back to the default", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.ImagePullPolicy = "" }),
		Entry("ServiceAccount removed", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.ServiceAccountName = "" }),
		Entry("spread back to the default", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.TopologySpreadConstraints = nil }),
		Entry("grace period back to 30", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.TerminationGracePeriodSeconds = nil }),
		Entry("lifecycle removed", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Lifecycle = nil }),
		Entry("startup probe removed", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.StartupProbe = nil }),
		Entry("liveness probe back to TCP", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.LivenessProbe = nil }),
		Entry("readiness delay back to 0", func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.ReadinessProbe.InitialDelaySeconds = 0 }),
	)

	It("finds a template written before the default spread in sync, and writes the default with the next change", func() {
		old, err := specs.BuildStatefulSet(newCluster("db"), specs.Inputs{})
		Expect(err).NotTo(HaveOccurred())
		// Written by an operator before the template hash and its record.
		old.Spec.Template.Spec.TopologySpreadConstraints = nil
		old.Annotations, old.Generation = nil, 1
		desired, err := specs.BuildStatefulSet(newCluster("db"), specs.Inputs{})
		Expect(err).NotTo(HaveOccurred())
		drift := specs.DiffStatefulSet(desired, old)
		Expect(drift.TemplateChanged()).To(BeFalse())
		Expect(drift.RecordOnly()).To(BeTrue(), "only the record of its template is written")

		scaled, err := specs.BuildStatefulSet(newCluster("db", withReplicas(5)), specs.Inputs{})
		Expect(err).NotTo(HaveOccurred())
		merged := old.DeepCopy()
		statefulSetSpec.Merge(scaled, merged)
		Expect(merged.Spec.Template).To(Equal(old.Spec.Template), "a scale alone must not roll the pods")

		changed, err := specs.BuildStatefulSet(newCluster("db", withImage("registry.example/db:2.0")), specs.Inputs{})
		Expect(err).NotTo(HaveOccurred())
		statefulSetSpec.Merge(changed, merged)
		Expect(merged.Spec.Template.Spec.TopologySpreadConstraints).To(HaveLen(2))
	})
})

var _ = Describe("Inputs", Label("unit"), func() {
	It("mounts the config files and the credentials read-only and passes the credentials as variables", func() {
		dc := newCluster("db", withConfigMapRef("settings"), withCredentials(databasev1alpha1.CredentialsSpec{Username: "app"}))
		pod := buildStatefulSet(dc, specs.Inputs{}).Spec.Template.Spec
		Expect(pod.Volumes).To(Equal([]corev1.Volume{
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "settings"},
			}}},
			{Name: "credentials", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: "db-credentials", DefaultMode: ptr.To[int32](0o440),
				Items: []corev1.KeyToPath{{Key: "username", Path: "username"}, {Key: "password", Path: "password"}},
			}}},
		}))
		Expect(pod.Containers[0].VolumeMounts).To(Equal([]corev1.VolumeMount{
			{Name: "data", MountPath: "/var/lib/database"},
			{Name: "config", MountPath: "/etc/database/config", ReadOnly: true},
			{Name: "credentials", MountPath: "/etc/database/credentials", ReadOnly: true},
		}))
		plain := buildStatefulSet(newCluster("db"), specs.Inputs{}).Spec.Template.Spec
		Expect(plain.Volumes).To(BeNil())
		Expect(plain.Containers[0].VolumeMounts).To(Equal([]corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/database"}}))
	})

	It("makes passwords of 32 letters and digits, different each time", func() {
		seen := map[string]bool{}
		for range 100 {
			p, err := randomPassword()
			Expect(err).NotTo(HaveOccurred())
			Expect(p).To(MatchRegexp("^[a-zA-Z0-9]{32}$"))
			Expect(seen).NotTo(HaveKey(p))
			seen[p] = true
		}
	})

	It("puts the checksum on the template only when there is one", func() {
		sts := buildStatefulSet(newCluster("db"), specs.Inputs{})
		Expect(sts.Spec.Template.Annotations).To(BeNil())
		sts = buildStatefulSet(newCluster("db"), specs.Inputs{InputsChecksum: "abc"})
		Expect(sts.Spec.Template.Annotations).To(Equal(map[string]string{"database.seed1b407122.io/inputs-checksum": "abc"}))
	})
})

var _ = Describe("Template hash", Label("unit"), func() {
	built := func(opts ...clusterOption) *appsv1.StatefulSet {
		sts, err := specs.BuildStatefulSet(newCluster("db", append([]clusterOption{withExtensions()}, opts...)...), specs.Inputs{})
		Expect(err).NotTo(HaveOccurred())
		withTemplateHash(sts)
		return sts
	}

	DescribeTable("rolls for a removal DeepDerivative alone cannot see, by the hash and by the field walk",
		func(change func(*databasev1alpha1.DatabaseCluster)) {
			before, after := built(), built(change)
			Expect(equality.Semantic.DeepDerivative(after.Spec.Template, before.Spec.Template)).To(BeTrue(), "DeepDerivative misses this one")
			Expect(templateInSync(after.Spec.Template, before.Spec.Template)).To(BeFalse())
			Expect(templateChanged(after, before)).To(BeTrue())
			merged := before.DeepCopy()
			statefulSetSpec.Merge(after, merged)
			Expect(merged.Spec.Template).To(Equal(after.Spec.Template))
		},
		Entry("a projected Secret's items removed", func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.Volumes[0].Projected.Sources[0].Secret.Items = nil
		}),
		Entry("a preStop command shortened", func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.Lifecycle.PreStop.Exec.Command = []string{"sleep"}
		}),
		Entry("a probe's command shortened", func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.ReadinessProbe.Exec.Command = []string{}
		}),
	)

	It("leaves a StatefulSet an older operator wrote (no hash) as it is", func() {
		old := built()
		delete(old.Annotations, specs.TemplateHashAnnotation)
		desired := built()
		Expect(templateChanged(desired, old)).To(BeFalse())
		merged := old.DeepCopy()
		statefulSetSpec.Merge(desired, merged)
		Expect(merged.Spec.Template).To(Equal(old.Spec.Template))
	})

	It("hashes only the template: a scale keeps it", func() {
		Expect(built(withReplicas(5)).Annotations).To(Equal(built().Annotations))
	})
})

var _ = Describe("Client Service", Label("unit"), func() {
	It("records the keys of labels alone (no annotations given)", func() {
		svc := specs.BuildClientService(newCluster("db", func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Spec.Service = &databasev1alpha1.ServiceSpec{Labels: map[string]string{"team": "a", "tier": "db"}}
		}))
		Expect(svc.Annotations).To(Equal(map[string]string{"database.seed1b407122.io/service-labels": "team,tier"}))
		Expect(svc.Labels).To(HaveKeyWithValue("team", "a"))
	})

	It("adds nothing to the default Service", func() {
		svc := specs.BuildClientService(newCluster("db"))
		Expect(svc.Annotations).To(BeNil())
		Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
	})
})
