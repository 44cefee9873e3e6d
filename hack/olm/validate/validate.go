// Package validate runs Operator Framework's bundle validators on a bundle directory: the default
// bundle validators (CSV, CRDs, bundle) plus the "operatorframework" suite that
// "operator-sdk bundle validate --select-optional suite=operatorframework" runs, plus a few
// project checks (ProjectValidator).
package validate

import (
	"fmt"
	"strings"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	apierrors "github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
)

// Validators are the validators Bundle runs.
var Validators = validation.DefaultBundleValidators.WithValidators(
	validation.OperatorHubV2Validator,
	validation.StandardCapabilitiesValidator,
	validation.StandardCategoriesValidator,
	validation.GoodPracticesValidator,
	validation.AlphaDeprecatedAPIsValidator,
	ProjectValidator,
)

// ProjectValidator adds what OperatorHub reviewers expect and the suite above does not check:
// a CSV with a display name and a description.
var ProjectValidator interfaces.Validator = interfaces.ValidatorFunc(func(objs ...any) []apierrors.ManifestResult {
	var results []apierrors.ManifestResult
	for _, o := range objs {
		csv, ok := o.(*v1alpha1.ClusterServiceVersion)
		if !ok {
			continue
		}
		r := apierrors.ManifestResult{Name: csv.GetName()}
		if strings.TrimSpace(csv.Spec.DisplayName) == "" {
			r.Add(apierrors.ErrInvalidCSV("csv.Spec.DisplayName is empty", csv.GetName()))
		}
		if strings.TrimSpace(csv.Spec.Description) == "" {
			r.Add(apierrors.ErrInvalidCSV("csv.Spec.Description is empty", csv.GetName()))
		}
		results = append(results, r)
	}
	return results
})

// Report holds the validators' findings as "<manifest>: <message>" lines.
type Report struct {
	Errors   []string
	Warnings []string
}

// OK reports whether there is neither an error nor a warning.
func (r Report) OK() bool { return len(r.Errors) == 0 && len(r.Warnings) == 0 }

// Bundle loads the bundle in dir (manifests/ and metadata/annotations.yaml) and validates it.
// The deprecated-APIs and OperatorHub checks are given the CSV's minKubeVersion as k8s-version.
// The error is for a bundle that cannot be loaded at all.
func Bundle(dir string) (Report, error) {
	b, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		return Report{}, fmt.Errorf("loading bundle %s: %w", dir, err)
	}
	objs := b.ObjectsToValidate()
	if b.CSV != nil && b.CSV.Spec.MinKubeVersion != "" {
		objs = append(objs, map[string]string{"k8s-version": b.CSV.Spec.MinKubeVersion})
	}
	return run(Validators, objs...), nil
}

// run collects the results of vals on objs.
func run(vals interfaces.Validators, objs ...any) Report {
	var r Report
	for _, res := range vals.Validate(objs...) {
		for _, e := range res.Errors {
			r.Errors = append(r.Errors, fmt.Sprintf("%s: %s", res.Name, e.Error()))
		}
		for _, w := range res.Warnings {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %s", res.Name, w.Error()))
		}
	}
	return r
}
