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
	corev1 "k8s.io/api/core/v1"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// BuildConfigMap returns the ConfigMap NAME-config of dc's inline config files. dc must have
// spec.config.
func BuildConfigMap(dc *databasev1alpha1.DatabaseCluster) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: ChildMeta(dc, dc.ConfigMapName()), Data: dc.Spec.Config.Files}
}
