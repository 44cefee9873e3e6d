package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// fieldOwner is the server-side apply field manager of the CRDs this command installs.
	fieldOwner = "database-operator-hack-run"
	// establishTimeout bounds the wait for the CRDs to be served.
	establishTimeout = time.Minute
	// samplesNamespace receives the namespaced samples that name no namespace.
	samplesNamespace = "default"
)

// readManifests decodes every object of the YAML files of dir, in file-name order.
// kustomization.yaml is not a manifest and is skipped.
func readManifests(dir string) ([]*unstructured.Unstructured, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("reading manifests: %w", err)
	}
	var files []string
	for _, pattern := range []string{"*.yaml", "*.yml"} {
		matches, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", dir, err)
		}
		files = append(files, matches...)
	}
	slices.Sort(files)
	var objs []*unstructured.Unstructured
	for _, file := range files {
		if filepath.Base(file) == "kustomization.yaml" {
			continue
		}
		decoded, err := decodeFile(file)
		if err != nil {
			return nil, err
		}
		objs = append(objs, decoded...)
	}
	return objs, nil
}

// decodeFile decodes the objects of one multi-document YAML file, skipping empty documents.
func decodeFile(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		err := decoder.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decoding %s: %w", path, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// installCRDs server-side applies the CRDs.
func installCRDs(ctx context.Context, c client.Client, crds []*unstructured.Unstructured) error {
	for _, crd := range crds {
		err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(crd), client.FieldOwner(fieldOwner), client.ForceOwnership)
		if err != nil {
			return fmt.Errorf("applying CRD %s: %w", crd.GetName(), err)
		}
	}
	logf("Applied %d CRDs.", len(crds))
	return nil
}

// waitEstablished waits until every CRD reports the Established condition.
func waitEstablished(ctx context.Context, c client.Client, crds []*unstructured.Unstructured) error {
	for _, crd := range crds {
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, establishTimeout, true, func(ctx context.Context) (bool, error) {
			var got apiextensionsv1.CustomResourceDefinition
			if err := c.Get(ctx, client.ObjectKey{Name: crd.GetName()}, &got); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for CRD %s to be Established: %w", crd.GetName(), err)
		}
	}
	return nil
}

// applySamples creates the objects of dir; objects that exist already are left alone.
// Failures are reported, not fatal: the manager keeps running.
func applySamples(ctx context.Context, c client.Client, dir string) {
	objs, err := readManifests(dir)
	if err != nil {
		logf("Reading the samples: %v", err)
		return
	}
	for _, obj := range objs {
		if err := createSample(ctx, c, obj); err != nil {
			logf("Sample %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
}

// createSample creates one sample, in samplesNamespace when it is namespaced and names none.
func createSample(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	namespaced, err := c.IsObjectNamespaced(obj)
	if err != nil {
		return fmt.Errorf("finding its scope: %w", err)
	}
	if namespaced && obj.GetNamespace() == "" {
		obj.SetNamespace(samplesNamespace)
	}
	err = c.Create(ctx, obj)
	switch {
	case apierrors.IsAlreadyExists(err):
		logf("Sample %s %s exists already: kept.", obj.GetKind(), client.ObjectKeyFromObject(obj))
		return nil
	case err != nil:
		return fmt.Errorf("creating: %w", err)
	}
	logf("Sample %s %s created.", obj.GetKind(), client.ObjectKeyFromObject(obj))
	return nil
}
