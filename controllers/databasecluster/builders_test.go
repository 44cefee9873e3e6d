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
	"slices"

	"maps"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

var _ = Describe("Builders", Label("unit"), func() {
	selector := map[string]string{
		"app.kubernetes.io/name":     "database",
		"app.kubernetes.io/instance": "db",
	}
	labels := map[string]string{
		"app.kubernetes.io/name":       "database",
		"app.kubernetes.io/instance":   "db",
		"app.kubernetes.io/managed-by": "database-operator",
	}
	owner := metav1.OwnerReference{
		APIVersion: "database.seed1b407122.io/v1alpha1", Kind: "DatabaseCluster", Name: "db", UID: "uid-1234",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}

	Describe("BuildStatefulSet", func() {
		It("builds the whole StatefulSet of a default cluster", func() {
			sts, err := specs.BuildStatefulSet(newCluster("db"), specs.Inputs{})
			Expect(err).NotTo(HaveOccurred())
			Expect(sts.ObjectMeta).To(Equal(metav1.ObjectMeta{
				Name: "db", Namespace: "default", Labels: labels, OwnerReferences: []metav1.OwnerReference{owner},
				Annotations: map[string]string{
					specs.TemplateHashAnnotation:       specs.TemplateHash(&sts.Spec.Template),
					specs.TemplateGenerationAnnotation: "1",
				},
			}))
			Expect(*sts.Spec.Replicas).To(Equal(int32(3)))
			Expect(sts.Spec.ServiceName).To(Equal("db-headless"))
			Expect(sts.Spec.Selector.MatchLabels).To(Equal(selector))
			Expect(sts.Spec.PodManagementPolicy).To(Equal(appsv1.ParallelPodManagement))
			Expect(sts.Spec.UpdateStrategy.Type).To(Equal(appsv1.RollingUpdateStatefulSetStrategyType))
			Expect(*sts.Spec.PersistentVolumeClaimRetentionPolicy).To(Equal(appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
				WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			}))

			Expect(sts.Spec.VolumeClaimTemplates).To(HaveLen(1))
			claim := sts.Spec.VolumeClaimTemplates[0]
			Expect(claim.Name).To(Equal("data"))
			Expect(claim.Labels).To(Equal(labels))
			Expect(claim.Spec.AccessModes).To(Equal([]corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}))
			Expect(*claim.Spec.StorageClassName).To(Equal("standard"))
			Expect(claim.Spec.Resources.Requests[corev1.ResourceStorage]).To(Equal(resource.MustParse("1Gi")))

			pod := sts.Spec.Template
			Expect(pod.Labels).To(Equal(labels), "managed-by lets the cache see the pods")
			Expect(pod.Annotations).To(BeEmpty())
			Expect(*pod.Spec.EnableServiceLinks).To(BeFalse())
			Expect(pod.Spec.SecurityContext).To(Equal(&corev1.PodSecurityContext{
				RunAsNonRoot:        ptr.To(true),
				SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				FSGroup:             ptr.To(int64(65532)),
				FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
			}))
			Expect(pod.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution).To(Equal(
				[]corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
					LabelSelector: &metav1.LabelSelector{MatchLabels: selector}, TopologyKey: "kubernetes.io/hostname",
				}}}))

			Expect(pod.Spec.Containers).To(HaveLen(1))
			c := pod.Spec.Containers[0]
			Expect(c.Name).To(Equal("database"))
			Expect(c.Image).To(Equal("registry.example/db:1.0"))
			Expect(c.Ports).To(Equal([]corev1.ContainerPort{{Name: "db", ContainerPort: 9000, Protocol: corev1.ProtocolTCP}}))
			Expect(c.VolumeMounts).To(Equal([]corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/database"}}))
			Expect(c.Resources).To(Equal(newCluster("db").Spec.Resources))
			Expect(c.ReadinessProbe.TCPSocket.Port).To(Equal(intstr.FromString("db")))
			Expect(c.LivenessProbe.TCPSocket.Port).To(Equal(intstr.FromString("db")))
			Expect(c.SecurityContext).To(Equal(&corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				RunAsNonRoot:             ptr.To(true),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			}))
		})

		DescribeTable("follows the spec",
			func(dc *databasev1alpha1.DatabaseCluster, check func(*appsv1.StatefulSet)) {
				sts, err := specs.BuildStatefulSet(dc, specs.Inputs{})
				Expect(err).NotTo(HaveOccurred())
				check(sts)
			},
			Entry("port", newCluster("db", withPort(5432)), func(sts *appsv1.StatefulSet) {
				Expect(sts.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort).To(Equal(int32(5432)))
			}),
			Entry("replicas", newCluster("db", withReplicas(7)), func(sts *appsv1.StatefulSet) {
				Expect(*sts.Spec.Replicas).To(Equal(int32(7)))
			}),
			Entry("image", newCluster("db", withImage("db:2")), func(sts *appsv1.StatefulSet) {
				Expect(sts.Spec.Template.Spec.Containers[0].Image).To(Equal("db:2"))
			}),
			Entry("storage size", newCluster("db", withSize("20Gi")), func(sts *appsv1.StatefulSet) {
				Expect(sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]).
					To(Equal(resource.MustParse("20Gi")))
			}),
			Entry("whenDeleted Delete", newCluster("db", withWhenDeleted(databasev1alpha1.DeletePVC)), func(sts *appsv1.StatefulSet) {
				Expect(sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted).
					To(Equal(appsv1.DeletePersistentVolumeClaimRetentionPolicyType))
				Expect(sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled).
					To(Equal(appsv1.RetainPersistentVolumeClaimRetentionPolicyType))
			}),
			Entry("pod labels never override the selector", newCluster("db", withPodLabels(map[string]string{
				"team": "a", "app.kubernetes.io/instance": "other",
			})), func(sts *appsv1.StatefulSet) {
				Expect(sts.Spec.Template.Labels).To(Equal(map[string]string{
					"team": "a", "app.kubernetes.io/name": "database", "app.kubernetes.io/instance": "db",
					"app.kubernetes.io/managed-by": "database-operator",
				}))
			}),
			Entry("user affinity replaces the default", newCluster("db", withAffinity(&corev1.Affinity{
				NodeAffinity: &corev1.NodeAffinity{},
			})), func(sts *appsv1.StatefulSet) {
				Expect(sts.Spec.Template.Spec.Affinity).To(Equal(&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}))
			}),
			Entry("no ServiceAccount token when unset", newCluster("db"), func(sts *appsv1.StatefulSet) {
				Expect(sts.Spec.Template.Spec.AutomountServiceAccountToken).To(Equal(ptr.To(false)))
			}),
			Entry("no ServiceAccount token when false", newCluster("db", withAutomountToken(ptr.To(false))), func(sts *appsv1.StatefulSet) {
				Expect(sts.Spec.Template.Spec.AutomountServiceAccountToken).To(Equal(ptr.To(false)))
			}),
			Entry("a ServiceAccount token when asked", newCluster("db", withAutomountToken(ptr.To(true))), func(sts *appsv1.StatefulSet) {
				Expect(sts.Spec.Template.Spec.AutomountServiceAccountToken).To(Equal(ptr.To(true)))
			}),
			Entry("restartedAt annotation reaches the pod template",
				newCluster("db", withAnnotation(databasev1alpha1.RestartedAtAnnotation, "2026-11-22T00:00:00Z")),
				func(sts *appsv1.StatefulSet) {
					Expect(sts.Spec.Template.Annotations).To(Equal(map[string]string{
						databasev1alpha1.RestartedAtAnnotation: "2026-11-22T00:00:00Z",
					}))
				}),
		)

		It("refuses a size that is not a quantity instead of panicking", func() {
			_, err := specs.BuildStatefulSet(newCluster("db", withSize("ten gigs")), specs.Inputs{})
			Expect(err).To(MatchError(ContainSubstring(`spec.storage.size "ten gigs" is not a quantity`)))
		})
	})

	Describe("Services", func() {
		port := []corev1.ServicePort{{
			Name: "db", Port: 9000, TargetPort: intstr.FromString("db"), Protocol: corev1.ProtocolTCP,
		}}
		It("builds the headless Service", func() {
			svc := specs.BuildHeadlessService(newCluster("db"))
			Expect(svc.ObjectMeta).To(Equal(metav1.ObjectMeta{
				Name: "db-headless", Namespace: "default", Labels: labels, OwnerReferences: []metav1.OwnerReference{owner},
			}))
			Expect(svc.Spec).To(Equal(corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, ClusterIP: corev1.ClusterIPNone, Selector: selector,
				Ports: port, PublishNotReadyAddresses: true,
			}))
		})
		It("builds the client Service", func() {
			svc := specs.BuildClientService(newCluster("db"))
			Expect(svc.Name).To(Equal("db"))
			Expect(svc.Spec).To(Equal(corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: selector, Ports: port}))
		})
		It("exposes spec.port", func() {
			Expect(specs.BuildClientService(newCluster("db", withPort(5432))).Spec.Ports[0].Port).To(Equal(int32(5432)))
		})
		It("builds no role Services without an engine, nor with engine none", func() {
			Expect(specs.BuildRoleServices(newCluster("db"))).To(BeEmpty())
			Expect(specs.BuildRoleServices(newCluster("db", withEngine(databasev1alpha1.EngineNone)))).To(BeEmpty())
		})
		It("builds NAME-rw for the primary and NAME-ro for the replicas with an engine", func() {
			roleSelector := func(role string) map[string]string {
				s := maps.Clone(selector)
				s["database.seed1b407122.io/role"] = role
				return s
			}
			got := specs.BuildRoleServices(newCluster("db", withEngine(databasev1alpha1.EnginePostgreSQL), withServiceType(corev1.ServiceTypeNodePort)))
			Expect(got).To(HaveLen(2))
			for i, want := range []struct{ name, role string }{{"db-rw", "primary"}, {"db-ro", "replica"}} {
				Expect(got[i].ObjectMeta).To(Equal(metav1.ObjectMeta{
					Name: want.name, Namespace: "default", Labels: labels, OwnerReferences: []metav1.OwnerReference{owner},
				}))
				Expect(got[i].Spec).To(Equal(corev1.ServiceSpec{
					Type: corev1.ServiceTypeClusterIP, Selector: roleSelector(want.role), Ports: port,
				}), "a ClusterIP Service whatever spec.service says: it exposes NAME only")
			}
			Expect(selector).NotTo(HaveKey("database.seed1b407122.io/role"), "the shared selector is not changed")
		})
	})

	Describe("BuildAgent", func() {
		podEnv := []corev1.EnvVar{
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
			{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}},
		}
		memberPort := corev1.ContainerPort{Name: "member-agent", ContainerPort: 9191, Protocol: corev1.ProtocolTCP}
		agentTLSMount := corev1.VolumeMount{Name: "agent-tls", MountPath: "/etc/database/agent-tls", ReadOnly: true}
		It("runs the member agent of an etcd with TLS: https to the member's own name, the agent's certificate and the database's CA", func() {
			dc := newCluster("db", withEngine(databasev1alpha1.EngineEtcd), withPort(2379))
			dc.Spec.TLS = &databasev1alpha1.TLSSpec{}
			agent := specs.BuildAgent(dc, "registry.example/operator@sha256:1")
			Expect(agent.Command).To(Equal([]string{"/manager", "storage-agent"}))
			Expect(agent.Args).To(Equal([]string{"--engine=etcd", "--member-listen=:9191", "--member-tls-dir=/etc/database/agent-tls",
				"--member-name=$(POD_NAME)", "--database-url=https://127.0.0.1:2379", "--database-ca=/etc/database/tls/ca.crt",
				"--database-server-name=$(POD_NAME).db-headless.$(POD_NAMESPACE).svc",
				"--member-wait-file=/etc/database/agent-tls/etcd-initial-cluster"}))
			Expect(agent.StartupProbe).To(Equal(&corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(9191)}},
				PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 600,
			}), "etcd starts only once the agent listens, which it does once the member is announced")
			Expect(agent.Ports).To(Equal([]corev1.ContainerPort{memberPort}))
			Expect(agent.Env).To(Equal(podEnv))
			Expect(agent.VolumeMounts).To(Equal([]corev1.VolumeMount{agentTLSMount,
				{Name: "tls", MountPath: "/etc/database/tls", ReadOnly: true}}), "no data volume without autoGrow")
			Expect(*agent.SecurityContext.ReadOnlyRootFilesystem).To(BeTrue())
		})
		It("runs both agents for a PostgreSQL with autoGrow and credentials: the storage agent's arguments first, unchanged", func() {
			dc := newCluster("db", withEngine(databasev1alpha1.EnginePostgreSQL), withPort(5432))
			dc.Spec.Storage.AutoGrow = &databasev1alpha1.AutoGrowSpec{MaxSize: resource.MustParse("10Gi")}
			dc.Spec.Credentials = &databasev1alpha1.CredentialsSpec{Username: "app"}
			agent := specs.BuildAgent(dc, "registry.example/operator@sha256:1")
			storage := specs.BuildStorageAgent("registry.example/operator@sha256:1")
			Expect(agent.Args).To(Equal(append(storage.Args, "--engine=postgresql", "--member-listen=:9191",
				"--member-tls-dir=/etc/database/agent-tls", "--member-name=$(POD_NAME)", "--database-url=127.0.0.1:5432",
				"--database-credentials=/etc/database/credentials", "--member-health-listen=:9192")))
			Expect(agent.Ports).To(Equal(append(storage.Ports, memberPort,
				corev1.ContainerPort{Name: "agent-health", ContainerPort: 9192, Protocol: corev1.ProtocolTCP})))
			Expect(agent.VolumeMounts).To(Equal(append(storage.VolumeMounts, agentTLSMount,
				corev1.VolumeMount{Name: "credentials", MountPath: "/etc/database/credentials", ReadOnly: true})))
		})
		It("gives the database container of engine postgresql the agent's readiness check, unless the spec names a probe; other engines keep the TCP check", func() {
			readiness := func(dc *databasev1alpha1.DatabaseCluster, agentImage string) *corev1.Probe {
				sts, err := specs.BuildStatefulSet(dc, specs.Inputs{AgentImage: agentImage})
				Expect(err).NotTo(HaveOccurred())
				return sts.Spec.Template.Spec.Containers[0].ReadinessProbe
			}
			pg := newCluster("db", withEngine(databasev1alpha1.EnginePostgreSQL), withPort(5432))
			Expect(readiness(pg, "img")).To(Equal(&corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(9192), Scheme: corev1.URISchemeHTTP}},
				PeriodSeconds: 2, TimeoutSeconds: 3, SuccessThreshold: 1, FailureThreshold: 2}))
			Expect(readiness(pg, "").TCPSocket).NotTo(BeNil(), "without the agent's image, no agent")
			etcd := newCluster("db", withEngine(databasev1alpha1.EngineEtcd), withPort(2379))
			Expect(readiness(etcd, "img").TCPSocket).NotTo(BeNil())
			pg.Spec.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
			Expect(readiness(pg, "img").Exec).NotTo(BeNil(), "the spec's probe")
		})
		It("is the storage agent alone, unchanged, without an engine", func() {
			dc := newCluster("db")
			dc.Spec.Storage.AutoGrow = &databasev1alpha1.AutoGrowSpec{MaxSize: resource.MustParse("10Gi")}
			Expect(specs.BuildAgent(dc, "img")).To(Equal(specs.BuildStorageAgent("img")))
		})
		It("adds the agent and its certificate's volume to the pods of a cluster with an engine, only when the agent's image is known", func() {
			dc := newCluster("db", withEngine(databasev1alpha1.EnginePostgreSQL))
			with, err := specs.BuildStatefulSet(dc, specs.Inputs{AgentImage: "img"})
			Expect(err).NotTo(HaveOccurred())
			Expect(with.Spec.Template.Spec.InitContainers).To(Equal([]corev1.Container{specs.BuildAgent(dc, "img")}))
			annotation := func(key string) *corev1.ObjectFieldSelector {
				return &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.annotations['" + key + "']"}
			}
			Expect(with.Spec.Template.Spec.Volumes).To(Equal([]corev1.Volume{{Name: "agent-tls", VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: "db-agent-tls", DefaultMode: ptr.To[int32](0o440), Items: []corev1.KeyToPath{
					{Key: "tls.crt", Path: "tls.crt"}, {Key: "tls.key", Path: "tls.key"}, {Key: "ca.crt", Path: "ca.crt"}}}}},
				{Name: "role", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "role", FieldRef: annotation("database.seed1b407122.io/postgresql-role")},
					{Path: "primary-host", FieldRef: annotation("database.seed1b407122.io/postgresql-primary-host")}}}}},
			}), "the agent's certificate, and the member's role, announced through the pod's annotations")
			database := with.Spec.Template.Spec.Containers[0]
			Expect(database.Env).To(Equal([]corev1.EnvVar{{Name: "DATABASE_ROLE_DIR", Value: "/etc/database/role"}}))
			dc.Spec.Roles = &databasev1alpha1.RolesSpec{Synchronous: &databasev1alpha1.SynchronousSpec{Number: 1}}
			synchronous, err := specs.BuildStatefulSet(dc, specs.Inputs{AgentImage: "img"})
			Expect(err).NotTo(HaveOccurred())
			Expect(synchronous.Spec.Template.Spec.Containers[0].Env).To(Equal([]corev1.EnvVar{
				{Name: "DATABASE_ROLE_DIR", Value: "/etc/database/role"},
				{Name: "DATABASE_SYNCHRONOUS_STANDBY_NAMES", Value: "ANY 1 (*)"}}), "roles.synchronous: commits wait for any 1 replica")
			dc.Spec.Roles = nil
			Expect(database.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "role", MountPath: "/etc/database/role", ReadOnly: true}))
			without, err := specs.BuildStatefulSet(dc, specs.Inputs{})
			Expect(err).NotTo(HaveOccurred())
			Expect(without.Spec.Template.Spec.InitContainers).To(BeEmpty())
			Expect(without.Spec.Template.Spec.Volumes).To(BeEmpty())
			Expect(without.Spec.Template.Spec.Containers[0].Env).To(BeEmpty(), "no agent: no role announced")
		})
		It("announces each etcd member through its pod's annotations: a projected volume the agent waits on, and etcd's variables", func() {
			dc := newCluster("db", withEngine(databasev1alpha1.EngineEtcd))
			with, err := specs.BuildStatefulSet(dc, specs.Inputs{AgentImage: "img"})
			Expect(err).NotTo(HaveOccurred())
			annotation := func(key string) *corev1.ObjectFieldSelector {
				return &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.annotations['" + key + "']"}
			}
			Expect(with.Spec.Template.Spec.Volumes).To(Equal([]corev1.Volume{{Name: "agent-tls", VolumeSource: corev1.VolumeSource{
				Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](0o440), Sources: []corev1.VolumeProjection{
					{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "db-agent-tls"}, Items: []corev1.KeyToPath{
						{Key: "tls.crt", Path: "tls.crt"}, {Key: "tls.key", Path: "tls.key"}, {Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
						{Path: "etcd-initial-cluster", FieldRef: annotation("database.seed1b407122.io/etcd-initial-cluster")},
						{Path: "etcd-initial-cluster-state", FieldRef: annotation("database.seed1b407122.io/etcd-initial-cluster-state")}}}},
				}}}}}))
			Expect(with.Spec.Template.Spec.Containers[0].Env).To(Equal(append(slices.Clone(dc.Spec.Env),
				corev1.EnvVar{Name: "ETCD_INITIAL_CLUSTER", ValueFrom: &corev1.EnvVarSource{FieldRef: annotation("database.seed1b407122.io/etcd-initial-cluster")}},
				corev1.EnvVar{Name: "ETCD_INITIAL_CLUSTER_STATE", ValueFrom: &corev1.EnvVarSource{FieldRef: annotation("database.seed1b407122.io/etcd-initial-cluster-state")}},
			)), "the user's variables first, the announcement last")
			without, err := specs.BuildStatefulSet(dc, specs.Inputs{})
			Expect(err).NotTo(HaveOccurred())
			Expect(without.Spec.Template.Spec.Containers[0].Env).To(Equal(dc.Spec.Env), "no agent holds etcd back: nothing announced")
		})
	})

	DescribeTable("PeerURLs: the spec's --initial-advertise-peer-urls for one member",
		func(args []string, env []corev1.EnvVar, want []string, wantErr string) {
			dc := newCluster("db", withNamespace("ns"))
			dc.Spec.Args, dc.Spec.Env = args, env
			got, err := specs.PeerURLs(dc, "db-3")
			if wantErr != "" {
				Expect(err).To(MatchError(ContainSubstring(wantErr)))
				return
			}
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(want))
		},
		Entry("the pod's name and namespace from the downward API",
			[]string{"--initial-advertise-peer-urls=https://$(POD_NAME).db-headless.$(POD_NAMESPACE).svc:2380"},
			[]corev1.EnvVar{fieldVar("POD_NAME", "metadata.name"), fieldVar("POD_NAMESPACE", "metadata.namespace")},
			[]string{"https://db-3.db-headless.ns.svc:2380"}, ""),
		Entry("a literal variable, two URLs, the single-dash flag",
			[]string{"-initial-advertise-peer-urls=http://$(POD_NAME).$(DOMAIN):2380,http://$(POD_NAME).alt:2380"},
			[]corev1.EnvVar{fieldVar("POD_NAME", "metadata.name"), {Name: "DOMAIN", Value: "example.internal"}},
			[]string{"http://db-3.example.internal:2380", "http://db-3.alt:2380"}, ""),
		Entry("no flag", []string{"--name=$(POD_NAME)"}, nil, nil, "args set no --initial-advertise-peer-urls"),
		Entry("a variable from elsewhere",
			[]string{"--initial-advertise-peer-urls=http://$(HOST_IP):2380"},
			[]corev1.EnvVar{fieldVar("HOST_IP", "status.hostIP")}, nil, "names $(HOST_IP)"),
	)

	Describe("BuildPodDisruptionBudget", func() {
		It("allows one pod down at a time", func() {
			pdb := specs.BuildPodDisruptionBudget(newCluster("db"))
			Expect(pdb.Name).To(Equal("db"))
			Expect(pdb.OwnerReferences).To(Equal([]metav1.OwnerReference{owner}))
			Expect(*pdb.Spec.MaxUnavailable).To(Equal(intstr.FromInt32(1)))
			Expect(pdb.Spec.MinAvailable).To(BeNil())
			Expect(pdb.Spec.Selector.MatchLabels).To(Equal(selector))
		})
		DescribeTable("is wanted only when enabled and replicas > 1",
			func(dc *databasev1alpha1.DatabaseCluster, wanted bool) {
				Expect(dc.PDBEnabled()).To(Equal(wanted))
			},
			Entry("3 replicas, default", newCluster("db"), true),
			Entry("1 replica", newCluster("db", withReplicas(1)), false),
			Entry("disabled", newCluster("db", withPDBEnabled(false)), false),
			Entry("enabled explicitly", newCluster("db", withPDBEnabled(true)), true),
		)
	})

	Describe("templateInSync", func() {
		desired := func() corev1.PodTemplateSpec {
			sts, err := specs.BuildStatefulSet(newCluster("db"), specs.Inputs{})
			Expect(err).NotTo(HaveOccurred())
			return sts.Spec.Template
		}
		It("ignores fields the API server defaults", func() {
			observed := desired()
			observed.Spec.DNSPolicy = corev1.DNSClusterFirst
			observed.Spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
			observed.Spec.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent
			Expect(templateInSync(desired(), observed)).To(BeTrue())
		})
		DescribeTable("sees a drift",
			func(edit func(*corev1.PodTemplateSpec)) {
				observed := desired()
				edit(&observed)
				Expect(templateInSync(desired(), observed)).To(BeFalse())
			},
			Entry("image", func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "other" }),
			Entry("extra label", func(t *corev1.PodTemplateSpec) { t.Labels["x"] = "y" }),
			Entry("extra env", func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "b"}}
			}),
			Entry("removed limit", func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Resources.Limits = corev1.ResourceList{
					corev1.ResourceMemory: resource.MustParse("1Gi"),
				}
			}),
			Entry("ServiceAccount token mounted", func(t *corev1.PodTemplateSpec) {
				t.Spec.AutomountServiceAccountToken = ptr.To(true)
			}),
			Entry("ServiceAccount token left to the default (a template of an older version)", func(t *corev1.PodTemplateSpec) {
				t.Spec.AutomountServiceAccountToken = nil
			}),
			Entry("extra container", func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers = append(t.Spec.Containers, corev1.Container{Name: "x"})
			}),
		)
	})
})

// withAutomountToken sets spec.automountServiceAccountToken.
func withAutomountToken(automount *bool) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.AutomountServiceAccountToken = automount }
}

// fieldVar is the variable name holding the pod's field path.
func fieldVar(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}
