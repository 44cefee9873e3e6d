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

package v1alpha1

import "github.com/seed1b407122/database-operator/api/labels"

// appName is the value of labels.Name on the children of a VoteConfig.
const appName = "voteconfig"

// Labels are the labels of the VoteConfig's ConfigMap.
func (v *VoteConfig) Labels() map[string]string {
	return labels.Child(appName, v.Name)
}

// Option keys and the JSON document of the ConfigMap a voting app reads.
const (
	// OptionKeyPrefix + option id is the key of each option's label, e.g. OPTION_A.
	OptionKeyPrefix = "OPTION_"
	// TitleKey holds spec.title when it is set.
	TitleKey = "TITLE"
	// OptionsJSONKey holds {"title": ..., "options": [{"id": ..., "label": ...}, ...]}.
	OptionsJSONKey = "options.json"
)
