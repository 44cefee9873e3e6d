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

package faultproxy

import (
	"net/http"
	"strings"
)

// Verbs of the Kubernetes API, as kube-apiserver's authorizer names them.
const (
	VerbGet              = "get"
	VerbList             = "list"
	VerbWatch            = "watch"
	VerbCreate           = "create"
	VerbUpdate           = "update"
	VerbPatch            = "patch"
	VerbDelete           = "delete"
	VerbDeleteCollection = "deletecollection"
)

// WriteVerbs are the verbs that change something.
var WriteVerbs = []string{VerbCreate, VerbUpdate, VerbPatch, VerbDelete, VerbDeleteCollection}

// Request is what a rule or a hold matches on: the verb, the resource (plural, with
// "/subresource" when there is one, e.g. "databaseclusters/status"), the namespace and the name
// of one API request. Requests outside /api and /apis (discovery, /healthz) have no resource.
type Request struct {
	Verb      string
	Resource  string
	Namespace string
	Name      string
}

// IsWrite reports whether the request's verb changes something.
func (r Request) IsWrite() bool {
	for _, v := range WriteVerbs {
		if r.Verb == v {
			return true
		}
	}
	return false
}

// ParseRequest tells what an HTTP request to kube-apiserver does, the way the API server's
// RequestInfoFactory does for the paths clients use:
// /api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUBRESOURCE]] and
// /apis/GROUP/VERSION[/namespaces/NS]/RESOURCE[/NAME[/SUBRESOURCE]].
func ParseRequest(r *http.Request) Request {
	req := Request{Verb: strings.ToLower(r.Method)}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return req // discovery or a non-resource path
	}
	if len(parts) == 0 {
		return req
	}
	// namespaces/NS/RESOURCE... is a namespaced resource; namespaces[/NS[/status|finalize]] is
	// the Namespace object itself.
	if parts[0] == "namespaces" && len(parts) >= 3 && parts[2] != "status" && parts[2] != "finalize" {
		req.Namespace = parts[1]
		parts = parts[2:]
	}
	req.Resource = parts[0]
	if len(parts) >= 2 {
		req.Name = parts[1]
	}
	if len(parts) >= 3 {
		req.Resource += "/" + parts[2]
	}
	req.Verb = verb(r, req.Name != "")
	return req
}

// verb maps the HTTP method to the API verb.
func verb(r *http.Request, named bool) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if named {
			return VerbGet
		}
		if w := r.URL.Query().Get("watch"); w == "true" || w == "1" {
			return VerbWatch
		}
		return VerbList
	case http.MethodPost:
		return VerbCreate
	case http.MethodPut:
		return VerbUpdate
	case http.MethodPatch:
		return VerbPatch
	case http.MethodDelete:
		if named {
			return VerbDelete
		}
		return VerbDeleteCollection
	}
	return strings.ToLower(r.Method)
}

// Match selects requests. Every field left empty matches anything.
type Match struct {
	// Verbs (VerbGet, ...) to match.
	Verbs []string
	// Resources to match: "statefulsets" matches the resource and its subresources,
	// "statefulsets/status" only that subresource.
	Resources []string
	// Namespace to match; requests across all namespaces have none and match only an empty
	// Namespace.
	Namespace string
	// Name of the object to match.
	Name string
}

// Matches reports whether req is selected.
func (m Match) Matches(req Request) bool {
	if m.Namespace != "" && m.Namespace != req.Namespace {
		return false
	}
	if m.Name != "" && m.Name != req.Name {
		return false
	}
	if len(m.Verbs) > 0 && !contains(m.Verbs, req.Verb) {
		return false
	}
	if len(m.Resources) == 0 {
		return true
	}
	base, _, _ := strings.Cut(req.Resource, "/")
	return contains(m.Resources, req.Resource) || contains(m.Resources, base)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
