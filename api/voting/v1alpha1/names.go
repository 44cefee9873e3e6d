/*
Copyright 2026 The database-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

// Label keys and the managed-by value the operator sets on every child. The manager's cache
// selects the children of every kind by the managed-by label, so its value is the same in every
// API group of the operator.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedByValue = "database-operator"
)

// appName is the value of LabelName on the children of a VoteConfig.
const appName = "voteconfig"

// Labels are the labels of the VoteConfig's ConfigMap.
func (v *VoteConfig) Labels() map[string]string {
	return map[string]string{LabelName: appName, LabelInstance: v.Name, LabelManagedBy: ManagedByValue}
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
