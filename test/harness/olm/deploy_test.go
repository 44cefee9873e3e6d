package olm

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("OLM deployed in the cluster", Label("unit"), func() {
	It("builds upstream's ServiceAccount, cluster role, binding and two restricted Deployments", func() {
		objs := BuildOLMDeployment("olm", "quay.io/operator-framework/olm@sha256:ab", []string{"--util-image", "u@sha256:1"})
		Expect(objs).To(HaveLen(5))
		Expect(objs[0]).To(Equal(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "olm", Name: "olm-operator-serviceaccount"}}))
		role := objs[1].(*rbacv1.ClusterRole)
		Expect(role.Name).To(Equal("system:controller:operator-lifecycle-manager"))
		Expect(role.Rules[0].Verbs).To(ContainElements("escalate", "bind"), "OLM grants the RBAC of CSVs, so it must hold it")
		Expect(objs[2]).To(Equal(&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "olm-operator-binding-olm"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:controller:operator-lifecycle-manager"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "olm", Name: "olm-operator-serviceaccount"}},
		}))

		olmDep, catalogDep := objs[3].(*appsv1.Deployment), objs[4].(*appsv1.Deployment)
		Expect(olmDep.Name).To(Equal("olm-operator"))
		Expect(catalogDep.Name).To(Equal("catalog-operator"))
		for _, dep := range []*appsv1.Deployment{olmDep, catalogDep} {
			Expect(dep.Namespace).To(Equal("olm"))
			Expect(dep.Spec.Strategy.Type).To(Equal(appsv1.RecreateDeploymentStrategyType))
			Expect(dep.Spec.Selector.MatchLabels).To(Equal(map[string]string{"app": dep.Name}))
			Expect(dep.Spec.Template.Labels).To(Equal(map[string]string{"app": dep.Name}))
			pod := dep.Spec.Template.Spec
			Expect(pod.ServiceAccountName).To(Equal("olm-operator-serviceaccount"))
			Expect(pod.SecurityContext.RunAsNonRoot).To(Equal(ptr.To(true)))
			Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
			Expect(pod.Containers).To(HaveLen(1))
			c := pod.Containers[0]
			Expect(c.Name).To(Equal(dep.Name))
			Expect(c.Image).To(Equal("quay.io/operator-framework/olm@sha256:ab"))
			Expect(c.SecurityContext.AllowPrivilegeEscalation).To(Equal(ptr.To(false)))
			Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(Equal(ptr.To(true)))
			Expect(c.SecurityContext.Capabilities.Drop).To(Equal([]corev1.Capability{"ALL"}))
			Expect(c.VolumeMounts).To(Equal([]corev1.VolumeMount{{Name: "tmpfs", MountPath: "/tmp"}}))
			Expect(c.ReadinessProbe.HTTPGet.Path).To(Equal("/healthz"))
			Expect(c.ReadinessProbe.HTTPGet.Port).To(Equal(intstr.FromInt32(8080)))
			Expect(c.LivenessProbe).To(Equal(c.ReadinessProbe))
		}
		Expect(olmDep.Spec.Template.Spec.Containers[0].Command).To(Equal([]string{"/bin/olm"}))
		Expect(olmDep.Spec.Template.Spec.Containers[0].Args).To(Equal([]string{"--namespace", "$(OPERATOR_NAMESPACE)"}))
		Expect(olmDep.Spec.Template.Spec.Containers[0].Env).To(Equal([]corev1.EnvVar{
			{Name: "OPERATOR_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
			{Name: "OPERATOR_NAME", Value: "olm-operator"},
		}))
		Expect(catalogDep.Spec.Template.Spec.Containers[0].Command).To(Equal([]string{"/bin/catalog"}))
		Expect(catalogDep.Spec.Template.Spec.Containers[0].Args).To(Equal([]string{
			"--namespace", "olm", "--util-image", "u@sha256:1", "--set-workload-user-id=true",
		}))
		Expect(catalogDep.Spec.Template.Spec.Containers[0].Env).To(BeEmpty())
	})

	Describe("a wait bounded by OLM's pods", func() {
		deployed := func(objs ...client.Object) *Deployed {
			return &Deployed{Namespace: "olm", c: fakeClient(objs...)}
		}
		pod := func(app string, status corev1.ContainerStatus) *corev1.Pod {
			return &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: "olm", Name: app + "-abc", Labels: map[string]string{"app": app}},
				Status:     corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{status}},
			}
		}
		running := corev1.ContainerStatus{Name: "x", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}

		It("ends at once, saying how a controller exited, when it restarted", func(ctx SpecContext) {
			crashed := corev1.ContainerStatus{
				Name: "catalog-operator", RestartCount: 1,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 2, Reason: "Error", Message: "panic: nil map\n"}},
			}
			guarded, cancel := deployed(pod("olm-operator", running), pod("catalog-operator", crashed)).Within(ctx, time.Minute)
			defer cancel()
			Eventually(guarded.Done()).WithTimeout(5 * time.Second).Should(BeClosed())
			Expect(context.Cause(guarded)).To(MatchError(
				"OLM stopped: pod catalog-operator-abc container catalog-operator restarted 1 times, exited 2 (Error): panic: nil map"))
		})

		It("says so when a controller terminated without a restart", func(ctx SpecContext) {
			done := corev1.ContainerStatus{Name: "olm-operator", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}
			guarded, cancel := deployed(pod("olm-operator", done)).Within(ctx, time.Minute)
			defer cancel()
			Eventually(guarded.Done()).WithTimeout(5 * time.Second).Should(BeClosed())
			Expect(context.Cause(guarded)).To(MatchError("OLM stopped: pod olm-operator-abc container olm-operator restarted 0 times, exited 0 (Completed): "))
		})

		It("times out while OLM runs, and ignores other pods of its namespace", func(ctx SpecContext) {
			other := corev1.ContainerStatus{Name: "registry-server", RestartCount: 3}
			guarded, cancel := deployed(pod("olm-operator", running), pod("catalog-operator", running), pod("some-catalog", other)).Within(ctx, 2*time.Second)
			defer cancel()
			Eventually(guarded.Done()).WithTimeout(5 * time.Second).Should(BeClosed())
			Expect(context.Cause(guarded)).To(MatchError("timed out after 2s"))
		})
	})
})
