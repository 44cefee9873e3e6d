package olm

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var _ = Describe("Builders", Label("unit"), func() {
	It("builds a gRPC CatalogSource at an address", func() {
		cs := BuildCatalogSource("ns", "pkg-catalog", "127.0.0.1:4242", "pkg (run-bundle)", map[string]string{"a": "b"})
		Expect(cs.Object).To(Equal(map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1",
			"kind":       "CatalogSource",
			"metadata":   map[string]any{"namespace": "ns", "name": "pkg-catalog", "labels": map[string]any{"a": "b"}},
			"spec": map[string]any{
				"sourceType":  "grpc",
				"address":     "127.0.0.1:4242",
				"displayName": "pkg (run-bundle)",
				"publisher":   "run-bundle",
			},
		}))
	})

	It("builds a gRPC CatalogSource of a catalog image, restricted", func() {
		cs := BuildImageCatalogSource("olm", "c", "quay.io/o/c@sha256:ab", "c (image)", "", nil)
		Expect(cs.Object).To(Equal(map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1",
			"kind":       "CatalogSource",
			"metadata":   map[string]any{"namespace": "olm", "name": "c"},
			"spec": map[string]any{
				"sourceType":    "grpc",
				"image":         "quay.io/o/c@sha256:ab",
				"displayName":   "c (image)",
				"publisher":     "run-bundle",
				"grpcPodConfig": map[string]any{"securityContextConfig": "restricted"},
			},
		}))
		polled := BuildImageCatalogSource("olm", "c", "quay.io/o/c:latest", "c", "10m", nil)
		Expect(polled.Object["spec"]).To(HaveKeyWithValue("updateStrategy", map[string]any{"registryPoll": map[string]any{"interval": "10m"}}))
	})

	DescribeTable("builds an OperatorGroup",
		func(targets []string, wantSpec map[string]any) {
			og := BuildOperatorGroup("ns", "og", targets, nil)
			Expect(og.GetAPIVersion()).To(Equal("operators.coreos.com/v1"))
			Expect(og.GetKind()).To(Equal("OperatorGroup"))
			Expect(og.GetLabels()).To(BeEmpty())
			Expect(og.Object["spec"]).To(Equal(wantSpec))
		},
		Entry("AllNamespaces: no targets", nil, map[string]any{}),
		Entry("OwnNamespace", []string{"ns"}, map[string]any{"targetNamespaces": []any{"ns"}}),
		Entry("MultiNamespace", []string{"a", "b"}, map[string]any{"targetNamespaces": []any{"a", "b"}}),
	)

	It("builds a Subscription named after its package, Automatic by default", func() {
		sub := BuildSubscription(SubscriptionOptions{
			Namespace: "ns", Package: "pkg", Channel: "stable", CatalogSource: "cat", CatalogSourceNamespace: "olm",
		})
		Expect(sub.Object).To(Equal(map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1",
			"kind":       "Subscription",
			"metadata":   map[string]any{"namespace": "ns", "name": "pkg"},
			"spec": map[string]any{
				"channel":             "stable",
				"name":                "pkg",
				"source":              "cat",
				"sourceNamespace":     "olm",
				"installPlanApproval": "Automatic",
			},
		}))
	})

	It("builds a Manual Subscription with a starting CSV and a name of its own", func() {
		sub := BuildSubscription(SubscriptionOptions{
			Namespace: "ns", Name: "sub", Package: "pkg", Channel: "stable", CatalogSource: "cat",
			CatalogSourceNamespace: "ns", StartingCSV: "pkg.v0.1.0", Approval: ApprovalManual,
		})
		Expect(sub.GetName()).To(Equal("sub"))
		Expect(sub.Object["spec"]).To(HaveKeyWithValue("installPlanApproval", "Manual"))
		Expect(sub.Object["spec"]).To(HaveKeyWithValue("startingCSV", "pkg.v0.1.0"))
	})

	It("builds a Subscription whose config sets the operator's environment", func() {
		sub := BuildSubscription(SubscriptionOptions{
			Namespace: "ns", Package: "pkg", Channel: "stable", CatalogSource: "cat", CatalogSourceNamespace: "olm",
			Env: []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "two"}},
		})
		Expect(sub.Object["spec"]).To(HaveKeyWithValue("config", map[string]any{"env": []any{
			map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "B", "value": "two"},
		}}))
	})

	Describe("the in-cluster catalog", func() {
		objs := BuildInClusterCatalog("ns", "pkg-catalog", "pkg", "opm:v1", []byte(`{"schema":"olm.package"}`))

		It("names everything after the CatalogSource and labels it as run-bundle's", func() {
			for _, meta := range []struct{ ns, name string }{
				{objs.ConfigMap.Namespace, objs.ConfigMap.Name},
				{objs.Deployment.Namespace, objs.Deployment.Name},
				{objs.Service.Namespace, objs.Service.Name},
			} {
				Expect(meta.ns).To(Equal("ns"))
				Expect(meta.name).To(Equal("pkg-catalog"))
			}
			for _, labels := range []map[string]string{objs.ConfigMap.Labels, objs.Deployment.Labels, objs.Service.Labels} {
				Expect(labels).To(HaveKeyWithValue(ManagedByLabel, ManagedBy))
			}
			Expect(objs.Address()).To(Equal("pkg-catalog.ns.svc:50051"))
		})

		It("puts the catalog in the ConfigMap and mounts it as a file under /configs/<package>", func() {
			Expect(objs.ConfigMap.Data).To(Equal(map[string]string{"catalog.json": `{"schema":"olm.package"}`}))
			c := objs.Deployment.Spec.Template.Spec.Containers[0]
			Expect(c.Image).To(Equal("opm:v1"))
			Expect(c.Command).To(Equal([]string{"/bin/opm", "serve", "/configs", "--port=50051", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"}))
			Expect(c.VolumeMounts).To(ContainElement(corev1.VolumeMount{
				Name: "catalog", MountPath: "/configs/pkg/catalog.json", SubPath: "catalog.json", ReadOnly: true,
			}))
			Expect(objs.Deployment.Spec.Template.Spec.Volumes).To(ContainElement(HaveField("VolumeSource.ConfigMap.Name", "pkg-catalog")))
		})

		It("selects its own pod, from the Deployment and from the Service, on the grpc port", func() {
			podLabels := objs.Deployment.Spec.Template.Labels
			for k, v := range objs.Deployment.Spec.Selector.MatchLabels {
				Expect(podLabels).To(HaveKeyWithValue(k, v))
			}
			Expect(objs.Service.Spec.Selector).To(Equal(objs.Deployment.Spec.Selector.MatchLabels))
			Expect(objs.Service.Spec.Ports).To(Equal([]corev1.ServicePort{{
				Name: "grpc", Port: 50051, TargetPort: intstr.FromString("grpc"), Protocol: corev1.ProtocolTCP,
			}}))
		})

		It("meets the restricted Pod Security profile", func() {
			pod := objs.Deployment.Spec.Template.Spec
			Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
			Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
			sc := pod.Containers[0].SecurityContext
			Expect(*sc.AllowPrivilegeEscalation).To(BeFalse())
			Expect(sc.Capabilities.Drop).To(Equal([]corev1.Capability{"ALL"}))
			Expect(*sc.RunAsUser).NotTo(BeZero())
		})
	})
})
