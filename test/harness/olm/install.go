package olm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pollInterval is how often the waits read the objects OLM updates.
const pollInterval = 250 * time.Millisecond

// csvFailedGrace is how long a CSV may stay Failed before a wait gives up. OLM re-evaluates a
// Failed CSV and moves it back to Pending once its requirements are met again: during an
// upgrade a Succeeded CSV can turn Failed ("requirements no longer met") for a moment, while
// the RBAC it shares with the CSV it replaces is deleted and created again. An InstallPlan that
// failed stays failed: the waits stop at once.
var csvFailedGrace = 30 * time.Second

// Install mode types of a CSV (spec.installModes[].type).
const (
	InstallModeOwnNamespace    = "OwnNamespace"
	InstallModeSingleNamespace = "SingleNamespace"
	InstallModeMultiNamespace  = "MultiNamespace"
	InstallModeAllNamespaces   = "AllNamespaces"
)

// InstallMode is the scope an operator is installed with: its OperatorGroup's target
// namespaces.
type InstallMode struct {
	// Type is one of the InstallMode* constants.
	Type string
	// TargetNamespaces of SingleNamespace (one) and MultiNamespace (several).
	TargetNamespaces []string
}

// ParseInstallMode parses operator-sdk's --install-mode syntax: "OwnNamespace" (also ""),
// "AllNamespaces", "SingleNamespace=ns" or "MultiNamespace=ns1,ns2".
func ParseInstallMode(s string) (InstallMode, error) {
	typ, targets, hasTargets := strings.Cut(s, "=")
	m := InstallMode{Type: typ}
	if hasTargets {
		for _, t := range strings.Split(targets, ",") {
			if t = strings.TrimSpace(t); t != "" {
				m.TargetNamespaces = append(m.TargetNamespaces, t)
			}
		}
	}
	switch {
	case typ == "" && !hasTargets:
		m.Type = InstallModeOwnNamespace
	case (typ == InstallModeOwnNamespace || typ == InstallModeAllNamespaces) && !hasTargets:
	case typ == InstallModeSingleNamespace && len(m.TargetNamespaces) == 1:
	case typ == InstallModeMultiNamespace && len(m.TargetNamespaces) > 1:
	default:
		return InstallMode{}, fmt.Errorf("install mode %q: want OwnNamespace, AllNamespaces, SingleNamespace=NS or MultiNamespace=NS1,NS2", s)
	}
	return m, nil
}

// String is the mode in ParseInstallMode's syntax.
func (m InstallMode) String() string {
	if len(m.TargetNamespaces) == 0 {
		return m.Type
	}
	return m.Type + "=" + strings.Join(m.TargetNamespaces, ",")
}

// Targets returns the OperatorGroup's target namespaces for an install into namespace; nil
// is AllNamespaces.
func (m InstallMode) Targets(namespace string) []string {
	switch m.Type {
	case InstallModeOwnNamespace:
		return []string{namespace}
	case InstallModeAllNamespaces:
		return nil
	}
	return slices.Clone(m.TargetNamespaces)
}

// SupportedBy returns an error when the bundle's CSV does not support the mode.
func (m InstallMode) SupportedBy(b *Bundle) error {
	if !b.InstallModes[m.Type] {
		var supported []string
		for _, t := range []string{InstallModeOwnNamespace, InstallModeSingleNamespace, InstallModeMultiNamespace, InstallModeAllNamespaces} {
			if b.InstallModes[t] {
				supported = append(supported, t)
			}
		}
		return fmt.Errorf("%s does not support install mode %s (supported: %s)", b.CSVName, m.Type, strings.Join(supported, ", "))
	}
	return nil
}

// CreateCatalogSource creates cs and waits until OLM has connected to its catalog
// (status.connectionState.lastObservedState READY).
func CreateCatalogSource(ctx context.Context, c client.Client, cs *unstructured.Unstructured) error {
	if err := c.Create(ctx, cs); err != nil {
		return fmt.Errorf("creating CatalogSource %s: %w", key(cs), err)
	}
	return WaitCatalogSourceReady(ctx, c, cs.GetNamespace(), cs.GetName())
}

// WaitCatalogSourceReady waits until the CatalogSource's connection state is READY.
func WaitCatalogSourceReady(ctx context.Context, c client.Client, namespace, name string) error {
	cs := NewCatalogSource(namespace, name)
	return poll(ctx, "CatalogSource "+namespace+"/"+name+" to be READY", func(ctx context.Context) (bool, string, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cs), cs); err != nil {
			return false, err.Error(), nil
		}
		state, _, _ := unstructured.NestedString(cs.Object, "status", "connectionState", "lastObservedState")
		return state == catalogSourceReady, describeCatalogSource(cs), nil
	})
}

// EnsureOperatorGroup makes sure that namespace has exactly one OperatorGroup and that it
// targets targets (nil: all namespaces): an existing one is used when it does, else it is an
// error; when there is none, one named name is created with labels. It returns the
// OperatorGroup's name and whether it was created.
func EnsureOperatorGroup(ctx context.Context, c client.Client, namespace, name string, targets []string, labels map[string]string) (string, bool, error) {
	groups := NewList(APIVersionV1, KindOperatorGroup)
	if err := c.List(ctx, groups, client.InNamespace(namespace)); err != nil {
		return "", false, fmt.Errorf("listing the OperatorGroups of %s: %w", namespace, err)
	}
	switch len(groups.Items) {
	case 0:
		og := BuildOperatorGroup(namespace, name, targets, labels)
		if err := c.Create(ctx, og); err != nil {
			return "", false, fmt.Errorf("creating OperatorGroup %s: %w", key(og), err)
		}
		return name, true, nil
	case 1:
		og := &groups.Items[0]
		have, _, _ := unstructured.NestedStringSlice(og.Object, "spec", "targetNamespaces")
		_, hasSelector, _ := unstructured.NestedMap(og.Object, "spec", "selector")
		if hasSelector || !sameSet(have, targets) {
			return "", false, fmt.Errorf("namespace %s already has OperatorGroup %s targeting %s, not %s as the install mode needs: delete it or pick another install mode",
				namespace, og.GetName(), describeTargets(have, hasSelector), describeTargets(targets, false))
		}
		return og.GetName(), false, nil
	}
	return "", false, fmt.Errorf("namespace %s has %d OperatorGroups; OLM installs nothing in a namespace with more than one", namespace, len(groups.Items))
}

func describeTargets(targets []string, selector bool) string {
	switch {
	case selector:
		return "a namespace selector"
	case len(targets) == 0:
		return "all namespaces"
	}
	return "[" + strings.Join(targets, ",") + "]"
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// Subscribe creates the Subscription of o.
func Subscribe(ctx context.Context, c client.Client, o SubscriptionOptions) (*unstructured.Unstructured, error) {
	sub := BuildSubscription(o)
	if err := c.Create(ctx, sub); err != nil {
		return nil, fmt.Errorf("creating Subscription %s: %w", key(sub), err)
	}
	return sub, nil
}

// ApproveInstallPlan waits for the InstallPlan in namespace that installs csvName to await
// approval, approves it and waits until it is Complete. A plan that fails is an error with
// OLM's explanation.
func ApproveInstallPlan(ctx context.Context, c client.Client, namespace, csvName string) (*unstructured.Unstructured, error) {
	var plan *unstructured.Unstructured
	err := poll(ctx, "an InstallPlan for "+csvName+" awaiting approval", func(ctx context.Context) (bool, string, error) {
		var err error
		plan, err = installPlanFor(ctx, c, namespace, csvName)
		if err != nil || plan == nil {
			return false, fmt.Sprintf("no InstallPlan for %s yet (%v)", csvName, err), nil
		}
		if phase(plan) == planFailed {
			return false, "", errors.New(describeInstallPlan(plan))
		}
		return phase(plan) == planRequiresApproval, describeInstallPlan(plan), nil
	})
	if err != nil {
		return nil, err
	}
	patch := client.MergeFrom(plan.DeepCopy())
	if err := unstructured.SetNestedField(plan.Object, true, "spec", "approved"); err != nil {
		return nil, fmt.Errorf("approving InstallPlan %s: %w", key(plan), err)
	}
	if err := c.Patch(ctx, plan, patch); err != nil {
		return nil, fmt.Errorf("approving InstallPlan %s: %w", key(plan), err)
	}
	err = poll(ctx, "InstallPlan "+key(plan)+" to complete", func(ctx context.Context) (bool, string, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(plan), plan); err != nil {
			return false, err.Error(), nil
		}
		if phase(plan) == planFailed {
			return false, "", errors.New(describeInstallPlan(plan))
		}
		return phase(plan) == planComplete, describeInstallPlan(plan), nil
	})
	return plan, err
}

// installPlanFor returns the newest InstallPlan in namespace whose CSVs include csvName, or
// nil.
func installPlanFor(ctx context.Context, c client.Client, namespace, csvName string) (*unstructured.Unstructured, error) {
	plans := NewList(APIVersionV1alpha1, KindInstallPlan)
	if err := c.List(ctx, plans, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	var found *unstructured.Unstructured
	for i := range plans.Items {
		names, _, _ := unstructured.NestedStringSlice(plans.Items[i].Object, "spec", "clusterServiceVersionNames")
		if slices.Contains(names, csvName) && (found == nil ||
			plans.Items[i].GetCreationTimestamp().After(found.GetCreationTimestamp().Time)) {
			found = &plans.Items[i]
		}
	}
	return found, nil
}

// WaitForCSV waits until the CSV's phase is Succeeded and returns it; a CSV that fails is an
// error with its reason and message.
func WaitForCSV(ctx context.Context, c client.Client, namespace, name string) (*unstructured.Unstructured, error) {
	return waitInstalled(ctx, c, nil, namespace, name)
}

// waitInstalled waits for the CSV csvName, or for the one the Subscription sub names when
// csvName is "". Each round reads the Subscription (when given), its InstallPlan and the CSV,
// so that a failure or a timeout says what OLM reported about all three.
func waitInstalled(ctx context.Context, c client.Client, sub *unstructured.Unstructured, namespace, csvName string) (*unstructured.Unstructured, error) {
	var s installState
	what := "ClusterServiceVersion " + namespace + "/" + csvName + " to succeed"
	if csvName == "" {
		what = "the ClusterServiceVersion of Subscription " + key(sub) + " to succeed"
	}
	var failedSince time.Time
	err := poll(ctx, what, func(ctx context.Context) (bool, string, error) {
		s = readInstallState(ctx, c, sub, namespace, csvName)
		switch {
		case phase(s.plan) == planFailed:
			return false, "", fmt.Errorf("the install failed: %s", s)
		case phase(s.csv) != csvFailed:
			failedSince = time.Time{}
			return s.succeeded(), s.String(), nil
		case failedSince.IsZero():
			failedSince = time.Now()
		case time.Since(failedSince) >= csvFailedGrace:
			return false, "", fmt.Errorf("the install failed (the CSV stayed Failed for %s): %s", csvFailedGrace, s)
		}
		return false, s.String(), nil
	})
	if err != nil {
		return nil, err
	}
	return s.csv, nil
}

// readInstallState reads what waitInstalled looks at; objects it cannot read are left nil.
func readInstallState(ctx context.Context, c client.Client, sub *unstructured.Unstructured, namespace, csvName string) installState {
	s := installState{csvName: csvName}
	if sub != nil {
		got := NewSubscription(sub.GetNamespace(), sub.GetName())
		if c.Get(ctx, client.ObjectKeyFromObject(got), got) == nil {
			s.subscription = got
			if s.csvName == "" {
				s.csvName, _, _ = unstructured.NestedString(got.Object, "status", "currentCSV")
			}
			if ref, ok, _ := unstructured.NestedMap(got.Object, "status", "installPlanRef"); ok {
				planNS, _ := ref["namespace"].(string)
				planName, _ := ref["name"].(string)
				plan := NewObject(APIVersionV1alpha1, KindInstallPlan, planNS, planName)
				if c.Get(ctx, client.ObjectKeyFromObject(plan), plan) == nil {
					s.plan = plan
				}
			}
		}
	}
	if s.csvName != "" {
		csv := NewCSV(namespace, s.csvName)
		if c.Get(ctx, client.ObjectKeyFromObject(csv), csv) == nil {
			s.csv = csv
		}
	}
	return s
}

// InstallOptions say what Install installs.
type InstallOptions struct {
	// Namespace to install into; it must exist.
	Namespace string
	// Package and Channel to subscribe to, from the CatalogSource in CatalogSourceNamespace.
	Package, Channel                      string
	CatalogSource, CatalogSourceNamespace string
	// InstallMode decides the OperatorGroup's targets (see EnsureOperatorGroup).
	InstallMode InstallMode
	// OperatorGroup is the name of the OperatorGroup to create when the namespace has none
	// (default: Package).
	OperatorGroup string
	// Subscription is the Subscription's name (default: Package).
	Subscription string
	// CSV is the CSV to install (the Subscription's startingCSV); "" takes the head of the
	// channel. Required with ApprovalManual, whose InstallPlan Install approves.
	CSV string
	// Approval of the Subscription (default: Automatic).
	Approval Approval
	// Labels go on the OperatorGroup and the Subscription that Install creates.
	Labels map[string]string
}

// Installation is what Install did.
type Installation struct {
	// CSV is the ClusterServiceVersion, in phase Succeeded.
	CSV *unstructured.Unstructured
	// OperatorGroup is the OperatorGroup the install uses; CreatedOperatorGroup says whether
	// Install created it.
	OperatorGroup        string
	CreatedOperatorGroup bool
}

// Install subscribes Namespace to the package, as a user would through OLM: an OperatorGroup
// for the install mode (an existing matching one is kept), a Subscription, the approval of
// the InstallPlan when Approval is Manual, then it waits until the CSV has Succeeded. On a
// failure or when ctx ends, the error quotes what the Subscription, the InstallPlan and the
// CSV report. Nothing is rolled back: see Uninstall.
func Install(ctx context.Context, c client.Client, o InstallOptions) (*Installation, error) {
	if o.OperatorGroup == "" {
		o.OperatorGroup = o.Package
	}
	if o.Approval == ApprovalManual && o.CSV == "" {
		return nil, errors.New("a Manual install needs the CSV whose InstallPlan to approve")
	}
	og, created, err := EnsureOperatorGroup(ctx, c, o.Namespace, o.OperatorGroup, o.InstallMode.Targets(o.Namespace), o.Labels)
	if err != nil {
		return nil, err
	}
	inst := &Installation{OperatorGroup: og, CreatedOperatorGroup: created}
	sub, err := Subscribe(ctx, c, SubscriptionOptions{
		Namespace: o.Namespace, Name: o.Subscription, Package: o.Package, Channel: o.Channel,
		CatalogSource: o.CatalogSource, CatalogSourceNamespace: o.CatalogSourceNamespace,
		StartingCSV: o.CSV, Approval: o.Approval, Labels: o.Labels,
	})
	if err != nil {
		return inst, err
	}
	if o.Approval == ApprovalManual {
		if _, err := ApproveInstallPlan(ctx, c, o.Namespace, o.CSV); err != nil {
			return inst, err
		}
	}
	inst.CSV, err = waitInstalled(ctx, c, sub, o.Namespace, o.CSV)
	return inst, err
}

// poll calls check every pollInterval until it reports done or an error, or ctx ends. check
// also returns a description of what it saw; when ctx ends, the error quotes the last one
// and the context's cause (e.g. a timeout, or the OLM process that exited, see WhileRunning).
// A check that ran into the end of ctx saw nothing: it does not replace the last description.
func poll(ctx context.Context, what string, check func(context.Context) (done bool, state string, err error)) error {
	var last string
	for {
		done, state, err := check(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		if state != "" && ctx.Err() == nil {
			last = state
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w; last seen: %s", what, context.Cause(ctx), orNone(last))
		case <-time.After(pollInterval):
		}
	}
}

// isGone reports whether obj no longer exists.
func isGone(ctx context.Context, c client.Client, obj client.Object) (bool, error) {
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}
