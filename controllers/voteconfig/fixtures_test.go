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

package voteconfig

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// voteOption changes a test VoteConfig.
type voteOption func(*votingv1alpha1.VoteConfig)

// newVoteConfig returns a valid VoteConfig "Cats or dogs?" with options A and B, changed by
// the options.
func newVoteConfig(name string, opts ...voteOption) *votingv1alpha1.VoteConfig {
	return testenv.Apply(&votingv1alpha1.VoteConfig{
		ObjectMeta: testenv.Meta(name),
		Spec: votingv1alpha1.VoteConfigSpec{
			Title:   "Cats or dogs?",
			Options: []votingv1alpha1.VoteOption{{ID: "A", Label: "Cats"}, {ID: "B", Label: "Dogs"}},
		},
	}, opts...)
}

var withNamespace = testenv.InNamespace[*votingv1alpha1.VoteConfig]

func withTitle(title string) voteOption {
	return func(vc *votingv1alpha1.VoteConfig) { vc.Spec.Title = title }
}

// withOptions sets the options, given as id, label, id, label...
func withOptions(idsAndLabels ...string) voteOption {
	return func(vc *votingv1alpha1.VoteConfig) {
		vc.Spec.Options = nil
		for i := 0; i+1 < len(idsAndLabels); i += 2 {
			vc.Spec.Options = append(vc.Spec.Options, votingv1alpha1.VoteOption{ID: idsAndLabels[i], Label: idsAndLabels[i+1]})
		}
	}
}

// withManyOptions sets n options O1..On.
func withManyOptions(n int) voteOption {
	return func(vc *votingv1alpha1.VoteConfig) {
		vc.Spec.Options = nil
		for i := 1; i <= n; i++ {
			vc.Spec.Options = append(vc.Spec.Options, votingv1alpha1.VoteOption{ID: fmt.Sprintf("O%d", i), Label: fmt.Sprintf("Option %d", i)})
		}
	}
}

func withTarget(deployment string) voteOption {
	return func(vc *votingv1alpha1.VoteConfig) { vc.Spec.TargetDeployment = deployment }
}

// newDeployment returns a minimal valid Deployment of a voting app, with an annotation of its
// own on the pod template that the operator must keep.
func newDeployment(namespace, name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"example.com/keep": "yes"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/vote:1"}}},
			},
		},
	}
}
