// Copyright 2026 The database-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
// 	http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package voteconfig

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/controllers/internal/testenv"
)

// The ownership rule for the ConfigMap of a VoteConfig: a ConfigMap of that name held by anything
// but the VoteConfig is left exactly as it is (its data too) and reported, never adopted.
var _ = testenv.DescribeOwnership("VoteConfig ownership of its ConfigMap", testenv.OwnershipTable{
	Setup:    setupController,
	Resource: func(ns string) client.Object { return newVoteConfig("vote", withNamespace(ns)) },
	Held: []client.Object{&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "vote-config"},
		Data:       map[string]string{"app.properties": "someone's settings"},
	}},
})
