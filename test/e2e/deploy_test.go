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
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// "make deploy" applies "kustomize build config/default"; this applies the same objects to the
// local control plane, as the Makefile's kubectl would, and checks that the API server takes all
// of them and that the manager Deployment becomes available (kwok "runs" its pods).
var _ = Describe("make deploy (kustomize config/default)", func() {
	It("applies every object and the manager Deployment becomes available", func(ctx SpecContext) {
		kustomize := os.Getenv("KUSTOMIZE")
		if kustomize == "" {
			Skip("KUSTOMIZE is not set: run through 'make test-e2e'")
		}
		out, err := exec.CommandContext(ctx, kustomize, "build", filepath.Join("..", "..", "config", "default")).Output()
		Expect(err).NotTo(HaveOccurred())

		decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
		var kinds []string
		for {
			obj := &unstructured.Unstructured{}
			err := decoder.Decode(&obj.Object)
			if errors.Is(err, io.EOF) {
				break
			}
			Expect(err).NotTo(HaveOccurred())
			if len(obj.Object) == 0 {
				continue
			}
			// Server-side apply, as "kubectl apply --server-side" does.
			Expect(k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("e2e-make-deploy"), client.ForceOwnership)).
				To(Succeed(), "applying %s %s", obj.GetKind(), obj.GetName())
			kinds = append(kinds, obj.GetKind()+"/"+obj.GetName())
		}
		Expect(kinds).To(ContainElements(
			"Namespace/database-operator-system",
			"ServiceAccount/database-operator-controller-manager",
			"ClusterRole/database-operator-manager-role",
			"Role/database-operator-leader-election-role",
			"Deployment/database-operator-controller-manager",
			"Service/database-operator-controller-manager-metrics-service",
		))
		Eventually(func(g Gomega) {
			deployment := &appsv1.Deployment{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "database-operator-system",
				Name: "database-operator-controller-manager"}, deployment)).To(Succeed())
			g.Expect(deployment.Status.AvailableReplicas).To(Equal(int32(2)))
		}).Should(Succeed())
	})
})
