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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// Kind is the kind of the owner of every child built here.
const Kind = "DatabaseCluster"

// ChildMeta is the metadata of every child of dc: its name, dc's namespace, the operator's labels
// and a controller reference to dc, so that children are garbage collected with it.
func ChildMeta(dc *databasev1alpha1.DatabaseCluster, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       dc.Namespace,
		Labels:          dc.Labels(),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(dc, databasev1alpha1.GroupVersion.WithKind(Kind))},
	}
}
