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
	"context"
	"fmt"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/test/harness/fuzzspec"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// maxRevisionHash is the longest hash the StatefulSet controller appends to the StatefulSet's
// name in the pods' controller-revision-hash label (a 32-bit FNV sum, up to 10 characters).
const maxRevisionHash = "bbbbbbbbbb"

// fuzzClusters fuzzes test with every admitted DatabaseCluster: it decodes the fuzz input into
// a DatabaseCluster with the CRD's defaults applied, and skips the input when a quantity does not
// parse or the API server would refuse it: the builders only ever see admitted specs. The seed is
// a cluster of 3 with requests and limits.
func fuzzClusters(f *testing.F, test func(t *testing.T, dc *databasev1alpha1.DatabaseCluster)) {
	f.Add("db", "registry.example/db:1.0", "1Gi", "standard", int32(3), int32(0), uint8(0),
		"requests.cpu=100m\nlimits.memory=256Mi", "", "", "", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, name, image, size, storageClass string, replicas, port int32, flags uint8,
		resources, podLabels, podAnnotations, nodeSelector, env, args, tolerations, priorityClassName, restartedAt string,
	) {
		dc := fuzzspec.DatabaseCluster(name, image, size, storageClass, replicas, port, flags, resources, podLabels,
			podAnnotations, nodeSelector, env, args, tolerations, priorityClassName, restartedAt)
		if dc == nil {
			t.Skip("a quantity does not parse")
		}
		test(t, fuzzspec.Admitted(t, dc))
	})
}

// FuzzBuildChildren builds the StatefulSet, the two Services and the PodDisruptionBudget of any
// admitted DatabaseCluster and checks what the API server and the controllers rely on: no panic,
// names and labels within their limits (the pods' too), selectors that select the pods, the
// controller reference, the spec carried over, the restricted Pod Security profile, and builders
// that are pure (the same input builds the same objects and the input is left as it was).
func FuzzBuildChildren(f *testing.F) {
	fuzzClusters(f, func(t *testing.T, dc *databasev1alpha1.DatabaseCluster) {
		c := fuzzspec.Pure(t, "the builders", dc, func(dc *databasev1alpha1.DatabaseCluster) children {
			sts, err := specs.BuildStatefulSet(dc, specs.Inputs{})
			if err != nil {
				t.Fatalf("an admitted spec does not build: %v", err)
			}
			return children{sts, specs.BuildHeadlessService(dc), specs.BuildClientService(dc), specs.BuildPodDisruptionBudget(dc)}
		})
		sts, headless, clientSvc, pdb := c.StatefulSet, c.Headless, c.ClientSvc, c.PodDisruptionBudget
		for _, err := range []error{
			checkStatefulSet(dc, sts),
			checkService(dc, headless, sts.Spec.Template.Labels, true),
			checkService(dc, clientSvc, sts.Spec.Template.Labels, false),
			checkPDB(dc, pdb, sts.Spec.Template.Labels),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
	})
}

// children are the children of one DatabaseCluster, as built (exported fields: the semantic
// comparison of Pure reads them).
type children struct {
	StatefulSet         *appsv1.StatefulSet
	Headless, ClientSvc *corev1.Service
	PodDisruptionBudget *policyv1.PodDisruptionBudget
}

func checkStatefulSet(dc *databasev1alpha1.DatabaseCluster, sts *appsv1.StatefulSet) error {
	gvk := databasev1alpha1.GroupVersion.WithKind(kind)
	pod := sts.Spec.Template
	errs := []error{
		fuzzspec.Child(sts, dc, gvk, fuzzspec.DNSSubdomain),
		fuzzspec.Selects(sts.Spec.Selector, pod.Labels, "spec.selector"),
		fuzzspec.Labels(pod.Labels, "spec.template.metadata.labels"),
		fuzzspec.Annotations(pod.Annotations, "spec.template.metadata.annotations"),
		// The labels and names the StatefulSet controller derives from the name.
		fuzzspec.LabelValue(sts.Name+"-"+maxRevisionHash, "the pods' label controller-revision-hash"),
	}
	if sts.Spec.ServiceName != dc.HeadlessServiceName() {
		errs = append(errs, fmt.Errorf("serviceName %q, want %q", sts.Spec.ServiceName, dc.HeadlessServiceName()))
	}
	for ordinal := range *dc.Spec.Replicas {
		podName := sts.Name + "-" + strconv.Itoa(int(ordinal))
		errs = append(errs, fuzzspec.LabelValue(podName, "the pod's label statefulset.kubernetes.io/pod-name"))
		if msgs := fuzzspec.DNSLabel(podName, false); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("pod name (hostname) %q: %v", podName, msgs))
		}
		if msgs := fuzzspec.DNSSubdomain(dc.ClaimName(ordinal), false); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("claim name %q: %v", dc.ClaimName(ordinal), msgs))
		}
	}
	if *sts.Spec.Replicas != *dc.Spec.Replicas {
		errs = append(errs, fmt.Errorf("replicas %d, want %d", *sts.Spec.Replicas, *dc.Spec.Replicas))
	}
	for k, v := range dc.Spec.PodLabels {
		if pod.Labels[k] != v {
			errs = append(errs, fmt.Errorf("pod label %s=%q is missing", k, v))
		}
	}
	if v, ok := dc.Annotations[databasev1alpha1.RestartedAtAnnotation]; ok && pod.Annotations[databasev1alpha1.RestartedAtAnnotation] != v {
		errs = append(errs, fmt.Errorf("the restartedAt annotation %q is not carried to the pods", v))
	}
	if p := sts.Spec.PersistentVolumeClaimRetentionPolicy; p == nil ||
		string(p.WhenDeleted) != string(dc.WhenDeleted()) || string(p.WhenScaled) != string(dc.WhenScaled()) {
		errs = append(errs, fmt.Errorf("claim retention policy %+v, want whenDeleted %s whenScaled %s", p, dc.WhenDeleted(), dc.WhenScaled()))
	}
	if len(sts.Spec.VolumeClaimTemplates) != 1 {
		errs = append(errs, fmt.Errorf("%d claim templates, want 1", len(sts.Spec.VolumeClaimTemplates)))
	} else {
		claim := sts.Spec.VolumeClaimTemplates[0]
		size := claim.Spec.Resources.Requests[corev1.ResourceStorage]
		if claim.Name != databasev1alpha1.DataVolumeName || size.Cmp(resource.MustParse(dc.Spec.Storage.Size)) != 0 ||
			size.Sign() <= 0 || claim.Spec.StorageClassName == nil || *claim.Spec.StorageClassName != dc.Spec.Storage.StorageClassName {
			errs = append(errs, fmt.Errorf("claim template %s of %s in class %v, want data of %s in %s",
				claim.Name, size.String(), claim.Spec.StorageClassName, dc.Spec.Storage.Size, dc.Spec.Storage.StorageClassName))
		}
		errs = append(errs, fuzzspec.Labels(claim.Labels, "spec.volumeClaimTemplates[0].metadata.labels"))
	}
	errs = append(errs, checkPodSpec(dc, pod.Spec))
	return fuzzspec.JoinErrors(errs)
}

// checkPodSpec checks the one database container and the restricted Pod Security profile.
func checkPodSpec(dc *databasev1alpha1.DatabaseCluster, spec corev1.PodSpec) error {
	if len(spec.Containers) != 1 {
		return fmt.Errorf("%d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	var errs []error
	if c.Name != specs.ContainerName || c.Image != dc.Spec.Image {
		errs = append(errs, fmt.Errorf("container %s with image %q, want %s with %q", c.Name, c.Image, specs.ContainerName, dc.Spec.Image))
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != dc.Spec.Port || c.Ports[0].Name != databasev1alpha1.PortName {
		errs = append(errs, fmt.Errorf("container ports %+v, want %s on the admitted port %d", c.Ports, databasev1alpha1.PortName, dc.Spec.Port))
	}
	if !equality.Semantic.DeepEqual(c.Resources, dc.Spec.Resources) || len(c.Env) != len(dc.Spec.Env) || len(c.Args) != len(dc.Spec.Args) {
		errs = append(errs, fmt.Errorf("resources, env or args are not the spec's"))
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].Name != databasev1alpha1.DataVolumeName || c.VolumeMounts[0].MountPath != databasev1alpha1.DataMountPath {
		errs = append(errs, fmt.Errorf("volume mounts %+v, want data at %s", c.VolumeMounts, databasev1alpha1.DataMountPath))
	}
	port := intstr.FromString(databasev1alpha1.PortName)
	for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
		if p == nil || p.TCPSocket == nil || p.TCPSocket.Port != port {
			errs = append(errs, fmt.Errorf("probe %+v is not a TCP probe on the port %s", p, databasev1alpha1.PortName))
		}
	}
	sc, psc := c.SecurityContext, spec.SecurityContext
	if sc == nil || psc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 ||
		sc.Capabilities.Drop[0] != "ALL" || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		errs = append(errs, fmt.Errorf("the pod does not meet the restricted Pod Security profile: %+v %+v", psc, sc))
	}
	if dc.Spec.Affinity == nil && (spec.Affinity == nil || spec.Affinity.PodAntiAffinity == nil) {
		errs = append(errs, fmt.Errorf("no default pod anti-affinity"))
	}
	return fuzzspec.JoinErrors(errs)
}

func checkService(dc *databasev1alpha1.DatabaseCluster, svc *corev1.Service, podLabels map[string]string, headless bool) error {
	errs := []error{
		fuzzspec.Child(svc, dc, databasev1alpha1.GroupVersion.WithKind(kind), fuzzspec.DNSLabel),
		fuzzspec.Labels(svc.Spec.Selector, "spec.selector"),
		fuzzspec.SelectsMap(svc.Spec.Selector, podLabels, "spec.selector"),
	}
	if headless != (svc.Spec.ClusterIP == corev1.ClusterIPNone) || headless != svc.Spec.PublishNotReadyAddresses {
		errs = append(errs, fmt.Errorf("Service %s: clusterIP %q, publishNotReadyAddresses %t", svc.Name, svc.Spec.ClusterIP, svc.Spec.PublishNotReadyAddresses))
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != dc.Spec.Port || svc.Spec.Ports[0].Name != databasev1alpha1.PortName {
		errs = append(errs, fmt.Errorf("Service %s: ports %+v, want %s on %d", svc.Name, svc.Spec.Ports, databasev1alpha1.PortName, dc.Spec.Port))
	}
	return fuzzspec.JoinErrors(errs)
}

func checkPDB(dc *databasev1alpha1.DatabaseCluster, pdb *policyv1.PodDisruptionBudget, podLabels map[string]string) error {
	errs := []error{
		fuzzspec.Child(pdb, dc, databasev1alpha1.GroupVersion.WithKind(kind), fuzzspec.DNSSubdomain),
		fuzzspec.Selects(pdb.Spec.Selector, podLabels, "spec.selector"),
	}
	if pdb.Spec.MaxUnavailable == nil || *pdb.Spec.MaxUnavailable != intstr.FromInt32(1) || pdb.Spec.MinAvailable != nil {
		errs = append(errs, fmt.Errorf("PodDisruptionBudget: maxUnavailable %v, minAvailable %v, want 1 and none", pdb.Spec.MaxUnavailable, pdb.Spec.MinAvailable))
	}
	return fuzzspec.JoinErrors(errs)
}

// baseline is the spec an observed child was built from before the user changed it: every field
// that the fuzz input may set differs from the seed's.
func baseline(name string) *databasev1alpha1.DatabaseCluster {
	dc := fuzzspec.DatabaseCluster(name, "registry.example/old:0.9", "1Gi", "standard", 5, 7000,
		fuzzspec.FlagDeleteOnScaled, "requests.cpu=1\nrequests.memory=1Gi\nlimits.memory=2Gi",
		"tier=old\nteam=a", "old=1", "disk=hdd", "OLD=1\nMORE=2", "--old", "old=x:NoSchedule", "", "yesterday")
	dc.Spec.PodDisruptionBudget = nil
	return dc
}

// FuzzDriftChildren checks the drift checks of the StatefulSet, the Services and the
// PodDisruptionBudget (the InSync functions controllers/internal/child calls) against the write
// path, so that the operator never writes in a loop:
//   - a child stored as built (with the API server's defaults) is in sync: no write at all;
//   - a child built from another spec, once the write path has merged the owned fields into it
//     (Merge, then the merge patch that child.Ensure sends, applied as the API server does), is
//     in sync: one write, then none.
func FuzzDriftChildren(f *testing.F) {
	fuzzClusters(f, func(t *testing.T, dc *databasev1alpha1.DatabaseCluster) {
		old := baseline(dc.Name)
		if refused, err := must(fuzzspec.SharedAdmitter()).Admit(old); err != nil || len(refused) > 0 {
			t.Fatalf("the baseline is refused: %v %v", err, refused)
		}
		desired, err := specs.BuildStatefulSet(dc, specs.Inputs{})
		if err != nil {
			t.Fatal(err)
		}
		observed, err := specs.BuildStatefulSet(old, specs.Inputs{})
		if err != nil {
			t.Fatal(err)
		}
		fuzzspec.CheckDrift(t, desired, observed, statefulSetSpec.InSync, statefulSetSpec.Merge)
		fuzzspec.CheckDrift(t, specs.BuildHeadlessService(dc), specs.BuildHeadlessService(old), serviceSpec.InSync, serviceSpec.Merge)
		fuzzspec.CheckDrift(t, specs.BuildClientService(dc), specs.BuildClientService(old), serviceSpec.InSync, serviceSpec.Merge)
		fuzzspec.CheckDrift(t, specs.BuildPodDisruptionBudget(dc), specs.BuildPodDisruptionBudget(old), pdbSpec.InSync, pdbSpec.Merge)
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// The drift checks against the real API server's defaults, for every admitted seed of
// FuzzDriftChildren: each child, as the API server would store it (a server-side dry-run create
// returns it with every default), is in sync with the child as built, so the operator never
// patches a child it has just created.
var _ = testenv.DescribeSeedsStoredInSync("Drift checks against the API server's defaults",
	"controllers/databasecluster", "FuzzDriftChildren", fuzzspec.DatabaseCluster,
	func(ctx context.Context, c client.Client, seed fuzzspec.AdmittedSeed[*databasev1alpha1.DatabaseCluster]) bool {
		dc := seed.Object
		sts, err := specs.BuildStatefulSet(dc, specs.Inputs{})
		Expect(err).NotTo(HaveOccurred(), seed.File)
		testenv.ExpectStoredInSync(ctx, c, seed.File, sts, statefulSetStoredInSync)
		testenv.ExpectStoredInSync(ctx, c, seed.File, specs.BuildHeadlessService(dc), serviceSpec.InSync)
		testenv.ExpectStoredInSync(ctx, c, seed.File, specs.BuildClientService(dc), serviceSpec.InSync)
		testenv.ExpectStoredInSync(ctx, c, seed.File, specs.BuildPodDisruptionBudget(dc), pdbSpec.InSync)
		return true
	})
