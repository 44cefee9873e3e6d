//go:build e2e

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

package e2e

import (
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// samplesDir holds the samples the CSV's alm-examples are generated from.
var samplesDir = filepath.Join("..", "..", "config", "samples")

// sampleFiles lists the files of config/samples/kustomization.yaml, in its order.
func sampleFiles() []string {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(samplesDir, "kustomization.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var k struct {
		Resources []string `json:"resources"`
	}
	Expect(yaml.UnmarshalStrict(data, &k)).To(Succeed())
	return k.Resources
}

// Every sample of config/samples (the alm-examples OperatorHub shows) on simulated nodes: the API
// server admits it as written and the operator brings it to its working state (a sample with an
// engine Available, no role published: nothing answers for its members). The etcd, TLS etcd
// and both PostgreSQL samples also run on a real kubelet (make test-node), with the backup and the
// small samples; the ScheduledDatabaseBackup sample only here (see the README).
var _ = Describe("The samples of config/samples", Ordered, func() {
	const ns = "e2e-samples"

	BeforeAll(func(ctx SpecContext) {
		// The PostgreSQL sample needs nothing created first: its password is generated
		// (spec.credentials).
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	})

	It("are admitted as written and reach their working state", func(ctx SpecContext) {
		files := sampleFiles()
		// The DatabaseBackup sample backs up the etcd sample: it reaches Completed only where the
		// control plane runs the snapshot-controller and the simulated CSI driver readies the
		// VolumeSnapshots of its class.
		// The ScheduledDatabaseBackup sample backs up the etcd sample nightly: it is Ready (its
		// schedule valid and planned) long before its first run.
		Expect(files).To(HaveLen(9), "a sample per Kind, four for DatabaseCluster (etcd, etcd with TLS, PostgreSQL, replicated PostgreSQL)")
		var created []*unstructured.Unstructured
		for _, file := range files {
			data, err := os.ReadFile(filepath.Join(samplesDir, file))
			Expect(err).NotTo(HaveOccurred())
			obj := &unstructured.Unstructured{}
			Expect(yaml.Unmarshal(data, &obj.Object)).To(Succeed())
			obj.SetNamespace(ns)
			// Strict: a field the CRD does not know fails here instead of being dropped.
			Expect(k8s.Create(ctx, obj, client.FieldValidation(metav1.FieldValidationStrict))).To(Succeed(), file)
			created = append(created, obj)
		}
		for _, obj := range created {
			want := workingCondition(obj.GetKind())
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
				generation, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
				g.Expect(generation).To(Equal(obj.GetGeneration()), "%s %s", obj.GetKind(), obj.GetName())
				conditions := sampleConditions(g, obj)
				if obj.GetKind() != "DatabaseBackup" { // a backup has no Degraded: a conflict fails it
					g.Expect(meta.IsStatusConditionFalse(conditions, "Degraded")).To(BeTrue(), "%s %s: %v", obj.GetKind(), obj.GetName(), conditions)
				}
				if hasEngine(obj) {
					// Simulated nodes run no database and no member agent: no role is read, so
					// none is published. make test-node runs the sample.
					primary, _, _ := unstructured.NestedString(obj.Object, "status", "currentPrimary")
					g.Expect(primary).To(BeEmpty(), "%s %s: status.currentPrimary", obj.GetKind(), obj.GetName())
				}
				g.Expect(meta.IsStatusConditionTrue(conditions, want)).To(BeTrue(), "%s %s: %v", obj.GetKind(), obj.GetName(), conditions)
			}).WithTimeout(2 * time.Minute).Should(Succeed())
		}
	})
})

// hasEngine tells whether obj is a DatabaseCluster with spec.engine set: the operator learns its
// members' roles from their agents.
func hasEngine(obj *unstructured.Unstructured) bool {
	engine, _, _ := unstructured.NestedString(obj.Object, "spec", "engine")
	return obj.GetKind() == "DatabaseCluster" && engine != "" && engine != "none"
}

// workingCondition is the condition that says a sample of kind does its job.
func workingCondition(kind string) string {
	switch kind {
	case "DatabaseCluster":
		return "Available"
	case "Echo":
		return "Complete"
	case "DatabaseBackup":
		return "Completed"
	}
	return "Ready" // ScheduledEcho, ScheduledDatabaseBackup, VoteConfig
}

// sampleConditions reads status.conditions of an unstructured object.
func sampleConditions(g Gomega, obj *unstructured.Unstructured) []metav1.Condition {
	raw, _, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
	g.Expect(err).NotTo(HaveOccurred())
	data, err := yaml.Marshal(raw)
	g.Expect(err).NotTo(HaveOccurred())
	var conditions []metav1.Condition
	g.Expect(yaml.Unmarshal(data, &conditions)).To(Succeed())
	return conditions
}
