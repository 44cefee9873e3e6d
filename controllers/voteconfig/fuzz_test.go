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
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
	"github.com/seed1b407122/database-operator/test/harness/fuzzspec"
)

// maxConfigMapBytes is the API server's limit on the data of a ConfigMap.
const maxConfigMapBytes = 1 << 20

// FuzzBuildConfigMap builds the ConfigMap of any admitted VoteConfig and checks: no panic, a
// valid name and labels, the controller reference, keys the API server accepts, every option
// under its own key, options.json that reads back as exactly the title and the options in
// order, a size within the API server's limit, a hash that follows the content, and a pure
// builder.
func FuzzBuildConfigMap(f *testing.F) {
	f.Add("poll", "Cats or dogs?", "", "cats=Cats\ndogs=Dogs")
	f.Fuzz(func(t *testing.T, name, title, targetDeployment, options string) {
		vc := fuzzspec.Admitted(t, fuzzspec.VoteConfig(name, title, targetDeployment, options))
		cm := fuzzspec.Pure(t, "BuildConfigMap", vc, func(vc *votingv1alpha1.VoteConfig) *corev1.ConfigMap {
			cm, err := BuildConfigMap(vc)
			if err != nil {
				t.Fatalf("an admitted spec does not build: %v", err)
			}
			return cm
		})
		if ConfigHash(cm.Data) != ConfigHash(maps.Clone(cm.Data)) {
			t.Fatal("ConfigHash is not deterministic")
		}
		errs := []error{fuzzspec.Child(cm, vc, votingv1alpha1.GroupVersion.WithKind(kind), fuzzspec.DNSSubdomain)}
		if cm.Name != vc.ConfigMapName() {
			errs = append(errs, fmt.Errorf("ConfigMap %q, want %q", cm.Name, vc.ConfigMapName()))
		}
		size := 0
		for k, v := range cm.Data {
			size += len(k) + len(v)
			if msgs := validation.IsConfigMapKey(k); len(msgs) > 0 {
				errs = append(errs, fmt.Errorf("key %q: %v", k, msgs))
			}
		}
		if size > maxConfigMapBytes {
			errs = append(errs, fmt.Errorf("%d bytes of data, more than the API server's %d", size, maxConfigMapBytes))
		}
		wantKeys := len(vc.Spec.Options) + 1
		if vc.Spec.Title != "" {
			wantKeys++
			if cm.Data[votingv1alpha1.TitleKey] != vc.Spec.Title {
				errs = append(errs, fmt.Errorf("%s %q, want %q", votingv1alpha1.TitleKey, cm.Data[votingv1alpha1.TitleKey], vc.Spec.Title))
			}
		}
		if len(cm.Data) != wantKeys {
			errs = append(errs, fmt.Errorf("%d keys, want %d (one per option, options.json, the title)", len(cm.Data), wantKeys))
		}
		for _, o := range vc.Spec.Options {
			if got, ok := cm.Data[votingv1alpha1.OptionKeyPrefix+o.ID]; !ok || got != o.Label {
				errs = append(errs, fmt.Errorf("option %s: %q, want %q", o.ID, got, o.Label))
			}
		}
		var doc optionsDocument
		if err := json.Unmarshal([]byte(cm.Data[votingv1alpha1.OptionsJSONKey]), &doc); err != nil {
			errs = append(errs, fmt.Errorf("options.json does not read: %w", err))
		} else if doc.Title != vc.Spec.Title || !slices.Equal(doc.Options, vc.Spec.Options) {
			errs = append(errs, fmt.Errorf("options.json reads as %+v, want the title %q and the options %+v", doc, vc.Spec.Title, vc.Spec.Options))
		}
		// A change of any label changes the hash, so that the target Deployment rolls.
		changed := vc.DeepCopy()
		changed.Spec.Options[0].Label += "!"
		if data, err := ConfigData(changed); err != nil || ConfigHash(data) == ConfigHash(cm.Data) {
			errs = append(errs, fmt.Errorf("the hash does not change with a label (%w)", err))
		}
		if err := fuzzspec.JoinErrors(errs); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzDriftConfigMap checks the drift check of the ConfigMap (child.ConfigMapData) against the write
// path: the ConfigMap stored as built is in sync (no write), and one built from another spec,
// with binaryData added by hand, is in sync once the write path has patched it (one write, then
// none).
func FuzzDriftConfigMap(f *testing.F) {
	f.Add("poll", "Cats or dogs?", "", "cats=Cats\ndogs=Dogs")
	f.Fuzz(func(t *testing.T, name, title, targetDeployment, options string) {
		vc := fuzzspec.Admitted(t, fuzzspec.VoteConfig(name, title, targetDeployment, options))
		desired, err := BuildConfigMap(vc)
		if err != nil {
			t.Fatal(err)
		}
		old := fuzzspec.VoteConfig(vc.Name, "Old title", "", "a=A\nb=B\nTITLE=x")
		observed, err := BuildConfigMap(old)
		if err != nil {
			t.Fatal(err)
		}
		observed.Data["added-by-hand"] = ""
		observed.BinaryData = map[string][]byte{"blob": {0, 1}}
		fuzzspec.CheckDrift(t, desired, observed, child.ConfigMapData.InSync, child.ConfigMapData.Merge)
	})
}
