// Package validate runs Operator Framework's bundle validators on a bundle directory: the default
// bundle validators (CSV, CRDs, bundle) plus the "operatorframework" suite that
// "operator-sdk bundle validate --select-optional suite=operatorframework" runs, plus a few
// project checks (ProjectValidator).
package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	apierrors "github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
)

// Suite is the default bundle validators plus the "operatorframework" suite: what Suite runs on
// every bundle a catalog serves, released ones included.
var Suite = validation.DefaultBundleValidators.WithValidators(
	validation.OperatorHubV2Validator,
	validation.StandardCapabilitiesValidator,
	validation.StandardCategoriesValidator,
	validation.GoodPracticesValidator,
	validation.AlphaDeprecatedAPIsValidator,
)

// Validators are the validators Bundle runs: the suite and the project's checks.
var Validators = Suite.WithValidators(ProjectValidator)

// MaxShortDescription is the longest metadata.annotations.description OperatorHub shows on a
// tile without cutting it.
const MaxShortDescription = 135

// ProjectValidator adds what OperatorHub reviewers expect and the suite above does not check:
// a CSV with a display name, a description, a tile description
// (metadata.annotations.description) of at most MaxShortDescription characters, and every image
// named by digest when it claims DisconnectedAnnotation.
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
		if short := csv.GetAnnotations()["description"]; strings.TrimSpace(short) == "" || len([]rune(short)) > MaxShortDescription {
			r.Add(apierrors.ErrInvalidCSV(fmt.Sprintf("metadata.annotations.description has %d characters, want 1 to %d (the OperatorHub tile)",
				len([]rune(short)), MaxShortDescription), csv.GetName()))
		}
		for _, img := range notByDigest(csv) {
			r.Add(apierrors.ErrInvalidCSV(fmt.Sprintf("%s is %q, but the image %s is not named by digest",
				DisconnectedAnnotation, "true", img), csv.GetName()))
		}
		results = append(results, r)
	}
	return results
})

// DisconnectedAnnotation says whether the operator installs on a cluster without internet access
// through mirrored registries. Mirrors only serve images named by digest, so "true" requires every
// image the CSV names (relatedImages, containers, and the images it passes to the manager in
// ECHO_IMAGE and RELATED_IMAGE_* variables) to be named by digest.
const DisconnectedAnnotation = "features.operators.openshift.io/disconnected"

// notByDigest returns the images csv names that are not named by digest, when csv claims
// DisconnectedAnnotation; nil otherwise.
func notByDigest(csv *v1alpha1.ClusterServiceVersion) []string {
	if csv.GetAnnotations()[DisconnectedAnnotation] != "true" {
		return nil
	}
	var bad []string
	check := func(img string) {
		if !strings.Contains(img, "@sha256:") && !slices.Contains(bad, img) {
			bad = append(bad, img)
		}
	}
	for _, ri := range csv.Spec.RelatedImages {
		check(ri.Image)
	}
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		pod := d.Spec.Template.Spec
		for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
			check(c.Image)
			for _, e := range c.Env {
				if e.Name == "ECHO_IMAGE" || strings.HasPrefix(e.Name, "RELATED_IMAGE_") {
					check(e.Value)
				}
			}
		}
	}
	return bad
}

// Report holds the validators' findings as "<manifest>: <message>" lines.
type Report struct {
	Errors   []string
	Warnings []string
}

// OK reports whether there is neither an error nor a warning.
func (r Report) OK() bool { return len(r.Errors) == 0 && len(r.Warnings) == 0 }

// Bundle loads the bundle in dir (manifests/ and metadata/annotations.yaml) and validates it
// with Validators. The deprecated-APIs and OperatorHub checks are given the CSV's minKubeVersion
// as k8s-version. The error is for a bundle that cannot be loaded at all.
func Bundle(dir string) (Report, error) { return BundleWith(dir, Validators) }

// BundleWith is Bundle with the given validators (Suite for a released bundle).
func BundleWith(dir string, vals interfaces.Validators) (Report, error) {
	b, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		return Report{}, fmt.Errorf("loading bundle %s: %w", dir, err)
	}
	objs := b.ObjectsToValidate()
	if b.CSV != nil && b.CSV.Spec.MinKubeVersion != "" {
		objs = append(objs, map[string]string{"k8s-version": b.CSV.Spec.MinKubeVersion})
	}
	return run(vals, objs...), nil
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
