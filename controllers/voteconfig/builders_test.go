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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// mustBuild builds the ConfigMap of vc, failing the spec on an error.
func mustBuild(vc *votingv1alpha1.VoteConfig) *corev1.ConfigMap {
	cm, err := BuildConfigMap(vc)
	Expect(err).NotTo(HaveOccurred())
	return cm
}

var _ = Describe("Builders", Label("unit"), func() {
	Describe("BuildConfigMap", func() {
		It("builds the whole ConfigMap", func() {
			Expect(mustBuild(newVoteConfig("vc"))).To(Equal(&corev1.ConfigMap{
				ObjectMeta: testenv.Parent{
					APIVersion: "voting.seed1b407122.io/v1alpha1", Kind: "VoteConfig", App: "voteconfig", Name: "vc", UID: "uid-1234",
				}.ChildMeta("vc-config"),
				Data: map[string]string{
					"OPTION_A":     "Cats",
					"OPTION_B":     "Dogs",
					"TITLE":        "Cats or dogs?",
					"options.json": `{"title":"Cats or dogs?","options":[{"id":"A","label":"Cats"},{"id":"B","label":"Dogs"}]}`,
				},
			}))
		})

		It("carries the label the operator's cache selects ConfigMaps by", func() {
			selector := testenv.CacheSelector(&corev1.ConfigMap{})
			Expect(selector).NotTo(BeNil(), "the cache has no entry for ConfigMaps")
			Expect(selector.Matches(labels.Set(mustBuild(newVoteConfig("vc")).Labels))).To(BeTrue())
		})
	})

	DescribeTable("ConfigData",
		func(vc *votingv1alpha1.VoteConfig, want map[string]string) {
			data, err := ConfigData(vc)
			Expect(err).NotTo(HaveOccurred())
			Expect(data).To(Equal(want))
		},
		Entry("no title: no TITLE key, an empty title in the document", newVoteConfig("vc", withTitle("")), map[string]string{
			"OPTION_A": "Cats", "OPTION_B": "Dogs",
			"options.json": `{"title":"","options":[{"id":"A","label":"Cats"},{"id":"B","label":"Dogs"}]}`,
		}),
		Entry("options in spec order, ids as written", newVoteConfig("vc", withOptions("b", "Later", "A_1", "Sooner")), map[string]string{
			"OPTION_b": "Later", "OPTION_A_1": "Sooner", "TITLE": "Cats or dogs?",
			"options.json": `{"title":"Cats or dogs?","options":[{"id":"b","label":"Later"},{"id":"A_1","label":"Sooner"}]}`,
		}),
		Entry("labels as written: quotes escaped, no HTML escaping", newVoteConfig("vc", withTitle(`"Best" <pet>`),
			withOptions("A", "Cats & Dogs", "B", `Fish \ Birds`)), map[string]string{
			"OPTION_A": "Cats & Dogs", "OPTION_B": `Fish \ Birds`, "TITLE": `"Best" <pet>`,
			"options.json": `{"title":"\"Best\" <pet>","options":[{"id":"A","label":"Cats & Dogs"},{"id":"B","label":"Fish \\ Birds"}]}`,
		}),
	)

	DescribeTable("ConfigHash",
		func(a, b map[string]string, same bool) {
			Expect(ConfigHash(a)).To(MatchRegexp("^[0-9a-f]{64}$"))
			if same {
				Expect(ConfigHash(a)).To(Equal(ConfigHash(b)))
			} else {
				Expect(ConfigHash(a)).NotTo(Equal(ConfigHash(b)))
			}
		},
		Entry("the same content", map[string]string{"a": "1", "b": "2"}, map[string]string{"b": "2", "a": "1"}, true),
		Entry("another value", map[string]string{"a": "1"}, map[string]string{"a": "2"}, false),
		Entry("a key more", map[string]string{"a": "1"}, map[string]string{"a": "1", "b": ""}, false),
		Entry("the same bytes split differently", map[string]string{"ab": "c"}, map[string]string{"a": "bc"}, false),
	)

	DescribeTable("child.ConfigMapData keeps the data exactly",
		func(change func(*corev1.ConfigMap), inSync bool) {
			desired, observed := mustBuild(newVoteConfig("vc")), mustBuild(newVoteConfig("vc"))
			change(observed)
			Expect(child.ConfigMapData.InSync(desired, observed)).To(Equal(inSync))
			child.ConfigMapData.Merge(desired, observed)
			Expect(child.ConfigMapData.InSync(desired, observed)).To(BeTrue())
			Expect(observed.Data).To(Equal(desired.Data))
		},
		Entry("as built", func(*corev1.ConfigMap) {}, true),
		Entry("a value changed", func(cm *corev1.ConfigMap) { cm.Data["OPTION_A"] = "Hamsters" }, false),
		Entry("a key added", func(cm *corev1.ConfigMap) { cm.Data["OPTION_C"] = "Fish" }, false),
		Entry("a key removed", func(cm *corev1.ConfigMap) { delete(cm.Data, "TITLE") }, false),
		Entry("binary data added", func(cm *corev1.ConfigMap) { cm.BinaryData = map[string][]byte{"x": {1}} }, false),
	)

	DescribeTable("indexTargetDeployment",
		func(vc *votingv1alpha1.VoteConfig, want []string) { Expect(indexTargetDeployment(vc)).To(Equal(want)) },
		Entry("no target", newVoteConfig("vc"), nil),
		Entry("a target", newVoteConfig("vc", withTarget("web")), []string{"web"}),
	)
})
