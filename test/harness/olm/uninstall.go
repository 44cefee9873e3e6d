package olm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// copiedFromLabel marks the copies of a CSV that OLM makes in the target namespaces.
const copiedFromLabel = "olm.copiedFrom"

// UninstallOptions say what Uninstall removes.
type UninstallOptions struct {
	// Namespace the package is installed in.
	Namespace string
	// Package whose CSVs go.
	Package string
	// Subscription to delete (default: Package).
	Subscription string
	// OperatorGroups to delete once the CSVs are gone.
	OperatorGroups []string
}

// Uninstall removes an install from its namespace, as "operator-sdk cleanup" does, and waits
// until it is gone: the Subscription, then the package's CSVs (those the Subscription names,
// and every CSV named "<package>.v*" that is not a copy OLM made), the InstallPlans that
// installed them, then the OperatorGroups named in o. OLM's Deployment, ServiceAccount and
// RBAC go with their CSV (owner references, removed by the garbage collector). CRDs and
// custom resources stay, as OLM leaves them. What is already gone is skipped: Uninstall is
// idempotent.
func Uninstall(ctx context.Context, c client.Client, o UninstallOptions) error {
	if o.Subscription == "" {
		o.Subscription = o.Package
	}
	sub := NewSubscription(o.Namespace, o.Subscription)
	var subscribed []string
	switch err := c.Get(ctx, client.ObjectKeyFromObject(sub), sub); {
	case err == nil:
		for _, field := range []string{"installedCSV", "currentCSV"} {
			if name, _, _ := unstructured.NestedString(sub.Object, "status", field); name != "" {
				subscribed = append(subscribed, name)
			}
		}
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading Subscription %s: %w", key(sub), err)
	}
	// Without the Subscription OLM installs nothing more, so what is listed below is all.
	if err := deleteAll(ctx, c, sub); err != nil {
		return err
	}
	doomed, err := csvsAndPlans(ctx, c, o, subscribed)
	if err != nil {
		return err
	}
	if err := deleteAll(ctx, c, doomed...); err != nil {
		return err
	}
	var groups []client.Object
	for _, name := range o.OperatorGroups {
		groups = append(groups, NewOperatorGroup(o.Namespace, name))
	}
	return deleteAll(ctx, c, groups...)
}

// csvsAndPlans returns the package's CSVs in the namespace (those subscribed names, and every
// "<package>.v*" that is not a copy) and the InstallPlans that install any of them.
func csvsAndPlans(ctx context.Context, c client.Client, o UninstallOptions, subscribed []string) ([]client.Object, error) {
	csvNames := slices.Clone(subscribed)
	csvs := NewList(APIVersionV1alpha1, KindClusterServiceVersion)
	if err := c.List(ctx, csvs, client.InNamespace(o.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the ClusterServiceVersions of %s: %w", o.Namespace, err)
	}
	for _, csv := range csvs.Items {
		_, copied := csv.GetLabels()[copiedFromLabel]
		if !copied && strings.HasPrefix(csv.GetName(), o.Package+".v") {
			csvNames = append(csvNames, csv.GetName())
		}
	}
	slices.Sort(csvNames)
	csvNames = slices.Compact(csvNames)

	var objs []client.Object
	for _, name := range csvNames {
		objs = append(objs, NewCSV(o.Namespace, name))
	}
	plans := NewList(APIVersionV1alpha1, KindInstallPlan)
	if err := c.List(ctx, plans, client.InNamespace(o.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the InstallPlans of %s: %w", o.Namespace, err)
	}
	for i := range plans.Items {
		names, _, _ := unstructured.NestedStringSlice(plans.Items[i].Object, "spec", "clusterServiceVersionNames")
		if slices.ContainsFunc(names, func(n string) bool { return slices.Contains(csvNames, n) }) {
			objs = append(objs, &plans.Items[i])
		}
	}
	return objs, nil
}

// DeleteCatalog deletes the CatalogSource namespace/name and, when inCluster, the ConfigMap,
// Deployment and Service of ServeCatalogInCluster of that name (only those that carry
// ManagedByLabel=ManagedBy: an object of that name made by someone else stays), and waits
// until they are gone.
func DeleteCatalog(ctx context.Context, c client.Client, namespace, name string, inCluster bool) error {
	doomed := []client.Object{NewCatalogSource(namespace, name)}
	if inCluster {
		for _, obj := range []client.Object{
			&corev1.ConfigMap{}, &appsv1.Deployment{}, &corev1.Service{},
		} {
			err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj)
			switch {
			case apierrors.IsNotFound(err):
				continue
			case err != nil:
				return fmt.Errorf("reading %s %s/%s: %w", kindOf(c, obj), namespace, name, err)
			case obj.GetLabels()[ManagedByLabel] == ManagedBy:
				doomed = append(doomed, obj)
			}
		}
	}
	return deleteAll(ctx, c, doomed...)
}

// deleteAll deletes objs (already gone is fine) and waits until none exists any more.
func deleteAll(ctx context.Context, c client.Client, objs ...client.Object) error {
	for _, obj := range objs {
		if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s/%s: %w", kindOf(c, obj), obj.GetNamespace(), obj.GetName(), err)
		}
	}
	return poll(ctx, "the deleted objects to go", func(ctx context.Context) (bool, string, error) {
		var left []string
		for _, obj := range objs {
			gone, err := isGone(ctx, c, obj)
			if err != nil && !errors.Is(err, context.Canceled) {
				left = append(left, fmt.Sprintf("%s %s/%s (%v)", kindOf(c, obj), obj.GetNamespace(), obj.GetName(), err))
			} else if !gone {
				left = append(left, fmt.Sprintf("%s %s/%s", kindOf(c, obj), obj.GetNamespace(), obj.GetName()))
			}
		}
		return len(left) == 0, "still there: " + strings.Join(left, ", "), nil
	})
}
