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

package operator

import (
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// newRESTMapper is the manager's RESTMapper: controller-runtime's lazy discovery mapper behind
// mappingCache.
func newRESTMapper(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
	m, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return &mappingCache{RESTMapper: m, mappings: map[mappingKey]meta.RESTMapping{}}, nil
}

// mappingCache remembers every RESTMapping its mapper found. Every event of a child that a
// controller Owns asks for its owner kind's mapping (to know whether the owner is namespaced),
// and the discovery mapper answers each time by asking a mapper per API group in turn, building
// a NoMatch error for each group that does not serve the kind. A mapping found is kept: a kind's
// resource and scope do not change while it is served. Errors are not kept, so that a kind
// installed later (a CRD) is found when it appears.
type mappingCache struct {
	meta.RESTMapper
	mu       sync.RWMutex
	mappings map[mappingKey]meta.RESTMapping
}

type mappingKey struct {
	kind     schema.GroupKind
	versions string
}

// RESTMapping returns a copy of the remembered mapping of gk and versions, or asks the mapper.
func (m *mappingCache) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	key := mappingKey{kind: gk, versions: strings.Join(versions, ",")}
	m.mu.RLock()
	mapping, ok := m.mappings[key]
	m.mu.RUnlock()
	if ok {
		return &mapping, nil
	}
	found, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.mappings[key] = *found
	m.mu.Unlock()
	mapping = *found
	return &mapping, nil
}
