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
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// optionsDocument is the JSON document of the options.json key.
type optionsDocument struct {
	Title   string                      `json:"title"`
	Options []votingv1alpha1.VoteOption `json:"options"`
}

// BuildConfigMap returns the ConfigMap a voting app reads the options of vc from.
func BuildConfigMap(vc *votingv1alpha1.VoteConfig) (*corev1.ConfigMap, error) {
	data, err := ConfigData(vc)
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		ObjectMeta: child.Meta(vc, votingv1alpha1.GroupVersion.WithKind(kind), vc.ConfigMapName(), vc.Labels()),
		Data:       data,
	}, nil
}

// ConfigData returns the content of the ConfigMap of vc: OPTION_<ID> = label for each option,
// TITLE when a title is set, and options.json with the title and the options in spec order.
func ConfigData(vc *votingv1alpha1.VoteConfig) (map[string]string, error) {
	doc, err := optionsJSON(vc)
	if err != nil {
		return nil, err
	}
	data := map[string]string{votingv1alpha1.OptionsJSONKey: doc}
	if vc.Spec.Title != "" {
		data[votingv1alpha1.TitleKey] = vc.Spec.Title
	}
	for _, o := range vc.Spec.Options {
		data[votingv1alpha1.OptionKeyPrefix+o.ID] = o.Label
	}
	return data, nil
}

// optionsJSON encodes the options document compactly, without HTML escaping so that a label
// such as "Cats & Dogs" reads as written.
func optionsJSON(vc *votingv1alpha1.VoteConfig) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	options := vc.Spec.Options
	if options == nil {
		options = []votingv1alpha1.VoteOption{}
	}
	if err := enc.Encode(optionsDocument{Title: vc.Spec.Title, Options: options}); err != nil {
		return "", fmt.Errorf("encoding %s: %w", votingv1alpha1.OptionsJSONKey, err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// ConfigHash is the sha256 of the content of a ConfigMap, hex encoded. Keys are taken in order
// and every key and value is length-prefixed, so that different contents never hash alike.
func ConfigHash(data map[string]string) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		_, _ = fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(data[k]), data[k]) // a hash never fails to write
	}
	return hex.EncodeToString(h.Sum(nil))
}
