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

package certs

import (
	"slices"
	"testing"
)

func TestServingDNSNames(t *testing.T) {
	for _, tc := range []struct {
		name      string
		namespace string
		replicas  int32
		want      []string
	}{
		{"db", "team", 3, []string{
			"db", "db.team", "db.team.svc", "db.team.svc.cluster.local",
			"db-headless", "db-headless.team", "db-headless.team.svc", "db-headless.team.svc.cluster.local",
			"*.db-headless.team.svc", "*.db-headless.team.svc.cluster.local",
			"db-0.db-headless.team.svc", "db-0.db-headless.team.svc.cluster.local",
			"db-1.db-headless.team.svc", "db-1.db-headless.team.svc.cluster.local",
			"db-2.db-headless.team.svc", "db-2.db-headless.team.svc.cluster.local",
			"localhost",
		}},
		{"pg", "prod", 0, []string{
			"pg", "pg.prod", "pg.prod.svc", "pg.prod.svc.cluster.local",
			"pg-headless", "pg-headless.prod", "pg-headless.prod.svc", "pg-headless.prod.svc.cluster.local",
			"*.pg-headless.prod.svc", "*.pg-headless.prod.svc.cluster.local",
			"localhost",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ServingDNSNames(tc.name, tc.namespace, tc.replicas); !slices.Equal(got, tc.want) {
				t.Errorf("ServingDNSNames(%q, %q, %d) =\n%q\nwant\n%q", tc.name, tc.namespace, tc.replicas, got, tc.want)
			}
		})
	}
}
