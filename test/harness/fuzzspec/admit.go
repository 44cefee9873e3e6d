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

// Package fuzzspec is what the fuzz targets of the controllers share, and the envtest spec that
// replays their seed corpora: decoders that turn a fuzz input into a custom resource, the
// admission the API server applies to it on create (CRD defaults, OpenAPI schema, list types,
// CEL rules; run in-process with the API server's own code from k8s.io/apiextensions-apiserver),
// the structural invariants every built child must hold, and a reader of Go's seed corpus files.
//
// It is test support, a harness library: only *_test.go files import it (hack/check-layout.sh
// keeps test frameworks out of the product's code), so the manager binary never links it.
package fuzzspec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/test/harness/repodir"
)

// Admitter decides, as the API server does on create, whether a custom resource of one of the
// operator's kinds is admitted, and applies the CRD's defaults to it. It reads the generated
// CRDs (config/crd/bases), so it follows every change of the markers.
type Admitter struct {
	scheme *runtime.Scheme
	kinds  map[schema.GroupVersionKind]*crdVersion
}

// crdVersion is what the API server derives from one served version of a CRD.
type crdVersion struct {
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

// NewAdmitter reads every CRD of config/crd/bases.
func NewAdmitter() (*Admitter, error) {
	kinds, err := scheme.New()
	if err != nil {
		return nil, err
	}
	a := &Admitter{scheme: kinds, kinds: map[schema.GroupVersionKind]*crdVersion{}}
	files, err := filepath.Glob(filepath.Join(RepoRoot(), "config", "crd", "bases", "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errors.New("no CRD in config/crd/bases")
	}
	for _, file := range files {
		if err := a.load(file); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	return a, nil
}

func (a *Admitter) load(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return err
	}
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil {
			continue
		}
		// The same steps as the API server's customresource_handler: the internal schema, its
		// structural form with the defaults pruned, the OpenAPI validator and the CEL validator.
		internal := &apiextensions.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, internal, nil); err != nil {
			return err
		}
		structural, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
		if err != nil {
			return err
		}
		if err := structuraldefaulting.PruneDefaults(structural); err != nil {
			return err
		}
		validator, _, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
		if err != nil {
			return err
		}
		gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
		a.kinds[gvk] = &crdVersion{
			structural: structural,
			schema:     validator,
			cel:        cel.NewValidator(structural, true, celconfig.PerCallLimit),
		}
	}
	return nil
}

// Admit applies the CRD's defaults to obj, in place, and returns the errors the API server
// would refuse it with on create; none means obj is admitted.
func (a *Admitter) Admit(obj client.Object) (field.ErrorList, error) {
	gvk, err := apiutil.GVKForObject(obj, a.scheme)
	if err != nil {
		return nil, err
	}
	crd, ok := a.kinds[gvk]
	if !ok {
		return nil, fmt.Errorf("no CRD serves %s", gvk)
	}
	// Through JSON, as a client sends it: encoding/json writes invalid UTF-8 as U+FFFD, so the
	// API server never sees (or stores) such a string.
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := map[string]any{}
	if err := utiljson.Unmarshal(data, &u); err != nil {
		return nil, err
	}
	u["apiVersion"], u["kind"] = gvk.GroupVersion().String(), gvk.Kind
	structuraldefaulting.Default(u, crd.structural)

	// The object's metadata, as for every namespaced custom resource: a DNS subdomain name.
	errs := apimachineryvalidation.ValidateObjectMetaAccessor(obj, true,
		apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u, crd.schema)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, crd.structural, u)...)
	// The API server runs CEL only when nothing above is a blocking error; errors there are
	// enough to refuse, so CEL runs only on an object that passed them.
	if len(errs) == 0 {
		celErrs, _ := crd.cel.Validate(context.Background(), nil, crd.structural, u, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	if len(errs) > 0 {
		return errs, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, obj); err != nil {
		return nil, fmt.Errorf("reading the defaulted object back: %w", err)
	}
	return nil, nil
}

// RepoRoot is the root of this repository, so that the tests of any package find config/ and
// the seed corpora.
func RepoRoot() string {
	return repodir.MustRoot()
}
