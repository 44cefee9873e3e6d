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
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/certs"
)

// Annotations of the StatefulSet (not of its pods) that the operator owns. On the StatefulSet's
// metadata they roll no pod.
const (
	// TemplateHashAnnotation records the pod template the operator last wrote, as a SHA-256 of
	// its JSON: a change of the spec's template is seen by its hash alone, whatever field it is
	// in. A StatefulSet without it (written by an operator before 0.4) is compared in full.
	TemplateHashAnnotation = "database.seed1b407122.io/template-hash"
	// TemplateGenerationAnnotation is the generation at which the StatefulSet's template was
	// last seen to be the one of TemplateHashAnnotation: written with the create (1), with
	// every patch of the spec (the generation that patch makes, under the resourceVersion's
	// lock), or alone after a full comparison found it in sync. While the StatefulSet is still
	// at that generation nobody changed its template since (any write of the spec moves the
	// generation), so the cache's copy, which holds no template, is enough (TemplateRecorded).
	TemplateGenerationAnnotation = "database.seed1b407122.io/template-generation"
	// RolledBackFromAnnotation is the template hash of the spec's pod template whose rollout got
	// stuck, while spec.rollout.autoRollback holds the StatefulSet at an earlier revision.
	RolledBackFromAnnotation = "database.seed1b407122.io/rolled-back-from"
	// RolledBackToAnnotation is the revision the StatefulSet was returned to, with the other.
	RolledBackToAnnotation = "database.seed1b407122.io/rolled-back-to"
)

// removedWhenUnwanted are the operator's annotations that a StatefulSet carries only while they
// are wanted: the comparator reports one the desired object lacks, and the write removes it
// (an annotation left as "" would still tell a script that a rollback is in effect).
var removedWhenUnwanted = []string{RolledBackFromAnnotation, RolledBackToAnnotation}

// Probe timings of the database container. Liveness is more patient than readiness so that a
// slow database is taken out of the Service long before it is restarted. Every number is set,
// even where it equals the API server's default, so that the desired template is what the API
// server stores.
const (
	probeTimeoutSeconds          = 1
	probeSuccessThreshold        = 1
	probeDefaultPeriodSeconds    = 10
	probeDefaultFailureThreshold = 3
	readinessPeriodSeconds       = 5
	readinessFailureThreshold    = 3
	livenessInitialDelay         = 15
	livenessPeriodSeconds        = 10
	livenessFailureThreshold     = 6
)

// Inputs are what the phases resolved before the StatefulSet is built: everything the builder
// needs besides the spec.
type Inputs struct {
	// InputsChecksum is the checksum of the config files and the certificate the pods mount,
	// "" when there are neither (a cluster without them keeps the template it had).
	InputsChecksum string
	// AgentImage is the operator's own image, which runs the storage agent with
	// spec.storage.autoGrow; "" runs none.
	AgentImage string
	// Replicas, when set, holds a scale-up below the spec's replicas while a condemned claim
	// of a removed member is still there (the phases' scaleUpTarget).
	Replicas *int32
	// Rollback, when set, is the rollback spec.rollout.autoRollback makes or holds.
	Rollback *Rollback
}

// Rollback is a StatefulSet held at an earlier revision by spec.rollout.autoRollback.
type Rollback struct {
	// Template is the pod template of the revision held.
	Template corev1.PodTemplateSpec
	// TemplateHash is the hash recorded for Template: "" computes it (the rollback is being
	// made); a held rollback keeps the one the StatefulSet records, as Template is read back
	// from the API server with its defaults.
	TemplateHash string
	// From is the template hash of the spec's template whose rollout got stuck; To the
	// revision returned to.
	From, To string
}

// BuildStatefulSet returns the StatefulSet that runs the pods of dc, whole: the spec's pod
// template with the inputs' checksum and the storage agent, or the held revision's, and the
// annotations that record it. It fails when spec.storage.size is not a quantity, which the API
// server's validation already prevents, and when the pod extensions break a rule admission
// cannot check (checkPodExtensions).
func BuildStatefulSet(dc *databasev1alpha1.DatabaseCluster, in Inputs) (*appsv1.StatefulSet, error) {
	size, err := resource.ParseQuantity(dc.Spec.Storage.Size)
	if err != nil {
		return nil, fmt.Errorf("spec.storage.size %q is not a quantity: %w", dc.Spec.Storage.Size, err)
	}
	if err := checkPodExtensions(&dc.Spec); err != nil {
		return nil, err
	}
	sts := &appsv1.StatefulSet{
		ObjectMeta: ChildMeta(dc, dc.StatefulSetName()),
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(ptr.Deref(in.Replicas, dc.DesiredReplicas())),
			ServiceName: dc.HeadlessServiceName(),
			Selector:    &metav1.LabelSelector{MatchLabels: dc.SelectorLabels()},
			// Parallel: pods start together (databases bootstrap their members from each other's
			// stable names); rolling updates still replace one pod at a time, highest ordinal first.
			PodManagementPolicy:                  appsv1.ParallelPodManagement,
			UpdateStrategy:                       updateStrategy(dc),
			PersistentVolumeClaimRetentionPolicy: RetentionPolicy(dc),
			Template:                             BuildPodTemplate(dc, in),
			VolumeClaimTemplates:                 []corev1.PersistentVolumeClaim{buildClaimTemplate(dc, size)},
		},
	}
	sts.Annotations = map[string]string{TemplateHashAnnotation: TemplateHash(&sts.Spec.Template)}
	if rb := in.Rollback; rb != nil {
		sts.Spec.Template = *rb.Template.DeepCopy()
		sts.Annotations[TemplateHashAnnotation] = rb.TemplateHash
		if rb.TemplateHash == "" {
			sts.Annotations[TemplateHashAnnotation] = TemplateHash(&sts.Spec.Template)
		}
		sts.Annotations[RolledBackFromAnnotation] = rb.From
		sts.Annotations[RolledBackToAnnotation] = rb.To
	}
	// A new StatefulSet is created at generation 1 with this template.
	sts.Annotations[TemplateGenerationAnnotation] = "1"
	return sts, nil
}

// updateStrategy is the StatefulSet's: RollingUpdate, or OnDelete with an engine, where the
// operator deletes the pods itself, replicas first and the primary last (after a switchover).
func updateStrategy(dc *databasev1alpha1.DatabaseCluster) appsv1.StatefulSetUpdateStrategy {
	if dc.HasEngine() {
		return appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	}
	return appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}
}

// TemplateHash is the hash TemplateHashAnnotation records for template: a SHA-256 of its JSON.
func TemplateHash(template *corev1.PodTemplateSpec) string {
	data, err := json.Marshal(template)
	if err != nil {
		// A PodTemplateSpec of the typed API always marshals.
		panic(fmt.Sprintf("marshalling a pod template: %v", err))
	}
	return certs.Checksum(data)
}

// TemplateRecorded says whether live, a StatefulSet as the cache holds it (without its template),
// still holds the pod template desired asks for: it records desired's template hash, and it is
// still at the generation at which that template was written or compared.
func TemplateRecorded(desired, live *appsv1.StatefulSet) bool {
	want := desired.Annotations[TemplateHashAnnotation]
	return want != "" && live.Annotations[TemplateHashAnnotation] == want && Recorded(live)
}

// RetentionPolicy is the StatefulSet's claim retention policy: the spec's, except that a
// stopped cluster (hibernated, or held by an Offline backup) retains the claims of the pods it
// stops whatever whenScaled says (stopping keeps the data; whenScaled is about replicas the user
// removed).
func RetentionPolicy(dc *databasev1alpha1.DatabaseCluster) *appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy {
	scaled := dc.WhenScaled()
	if dc.Stopped() {
		scaled = databasev1alpha1.RetainPVC
	}
	return &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: retentionType(dc.WhenDeleted()),
		WhenScaled:  retentionType(scaled),
	}
}

func retentionType(p databasev1alpha1.PVCRetentionPolicyType) appsv1.PersistentVolumeClaimRetentionPolicyType {
	if p == databasev1alpha1.DeletePVC {
		return appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	}
	return appsv1.RetainPersistentVolumeClaimRetentionPolicyType
}

func buildClaimTemplate(dc *databasev1alpha1.DatabaseCluster, size resource.Quantity) corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: databasev1alpha1.DataVolumeName, Labels: dc.Labels()},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To(dc.Spec.Storage.StorageClassName),
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: size},
			},
		},
	}
}
