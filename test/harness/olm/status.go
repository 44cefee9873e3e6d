package olm

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Phases and states OLM reports that the waits act on.
const (
	csvSucceeded            = "Succeeded"
	csvFailed               = "Failed"
	planComplete            = "Complete"
	planFailed              = "Failed"
	planRequiresApproval    = "RequiresApproval"
	catalogSourceReady      = "READY"
	statusTrue              = "True"
	describeNotYetAvailable = "not created yet"
)

// installState is what a wait for an install last saw: the Subscription, its InstallPlan and
// the CSV, any of which may be nil (not created yet, or not part of this wait).
type installState struct {
	subscription *unstructured.Unstructured
	plan         *unstructured.Unstructured
	csv          *unstructured.Unstructured
	// csvName is the CSV waited for (the CSV object may not exist yet).
	csvName string
}

// failure returns why the install can no longer succeed ("" while it still may): the CSV or
// the InstallPlan has failed.
func (s installState) failure() string {
	if phase(s.csv) == csvFailed {
		return describeCSV(s.csv)
	}
	if phase(s.plan) == planFailed {
		return describeInstallPlan(s.plan)
	}
	return ""
}

// succeeded reports whether the CSV has reached Succeeded.
func (s installState) succeeded() bool { return phase(s.csv) == csvSucceeded }

// String says what each object reports, for an error message.
func (s installState) String() string {
	var parts []string
	if s.subscription != nil {
		parts = append(parts, describeSubscription(s.subscription))
	}
	if s.plan != nil {
		parts = append(parts, describeInstallPlan(s.plan))
	}
	switch {
	case s.csv != nil:
		parts = append(parts, describeCSV(s.csv))
	case s.csvName != "":
		parts = append(parts, fmt.Sprintf("ClusterServiceVersion %s: %s", s.csvName, describeNotYetAvailable))
	}
	return strings.Join(parts, "; ")
}

// phase returns status.phase of obj ("" for nil).
func phase(obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	p, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	return p
}

// describeCSV says a CSV's phase, reason and message, e.g. "ClusterServiceVersion
// ns/database-operator.v0.2.0: phase Failed (InstallComponentFailed: install strategy failed: ...)".
func describeCSV(csv *unstructured.Unstructured) string {
	reason, _, _ := unstructured.NestedString(csv.Object, "status", "reason")
	message, _, _ := unstructured.NestedString(csv.Object, "status", "message")
	return fmt.Sprintf("ClusterServiceVersion %s: phase %s%s", key(csv), orNone(phase(csv)), reasonMessage(reason, message))
}

// describeInstallPlan says an InstallPlan's phase, its message and its conditions that are
// not True (the failed ones carry OLM's explanation).
func describeInstallPlan(plan *unstructured.Unstructured) string {
	var details []string
	if msg, _, _ := unstructured.NestedString(plan.Object, "status", "message"); msg != "" {
		details = append(details, msg)
	}
	for _, c := range conditions(plan) {
		if c.status != statusTrue {
			details = append(details, c.String())
		}
	}
	return fmt.Sprintf("InstallPlan %s: phase %s%s", key(plan), orNone(phase(plan)), parenthesized(details))
}

// describeSubscription says a Subscription's state, installed/current CSV and its True
// conditions: all of OLM's Subscription condition types (ResolutionFailed,
// CatalogSourcesUnhealthy, InstallPlanFailed, ...) report a problem or a wait when True.
func describeSubscription(sub *unstructured.Unstructured) string {
	state, _, _ := unstructured.NestedString(sub.Object, "status", "state")
	current, _, _ := unstructured.NestedString(sub.Object, "status", "currentCSV")
	var details []string
	if current != "" {
		details = append(details, "currentCSV "+current)
	}
	for _, c := range conditions(sub) {
		if c.status == statusTrue {
			details = append(details, c.String())
		}
	}
	return fmt.Sprintf("Subscription %s: state %s%s", key(sub), orNone(state), parenthesized(details))
}

// describeCatalogSource says a CatalogSource's address and last observed connection state.
func describeCatalogSource(cs *unstructured.Unstructured) string {
	address, _, _ := unstructured.NestedString(cs.Object, "spec", "address")
	state, _, _ := unstructured.NestedString(cs.Object, "status", "connectionState", "lastObservedState")
	return fmt.Sprintf("CatalogSource %s (address %s): connection state %s", key(cs), address, orNone(state))
}

// condition is one entry of status.conditions.
type condition struct{ typ, status, reason, message string }

func (c condition) String() string {
	return fmt.Sprintf("%s=%s%s", c.typ, c.status, reasonMessage(c.reason, c.message))
}

// conditions returns status.conditions of obj, ordered by type for stable messages.
func conditions(obj *unstructured.Unstructured) []condition {
	raw, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	var out []condition
	for _, r := range raw {
		m, _ := r.(map[string]any)
		str := func(k string) string { s, _ := m[k].(string); return s }
		out = append(out, condition{typ: str("type"), status: str("status"), reason: str("reason"), message: str("message")})
	}
	slices.SortStableFunc(out, func(a, b condition) int { return strings.Compare(a.typ, b.typ) })
	return out
}

func reasonMessage(reason, message string) string {
	switch {
	case reason != "" && message != "":
		return fmt.Sprintf(" (%s: %s)", reason, message)
	case reason != "" || message != "":
		return fmt.Sprintf(" (%s%s)", reason, message)
	}
	return ""
}

func parenthesized(details []string) string {
	if len(details) == 0 {
		return ""
	}
	return " (" + strings.Join(details, "; ") + ")"
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func key(obj *unstructured.Unstructured) string {
	return obj.GetNamespace() + "/" + obj.GetName()
}

// SubscriptionCondition returns the status and message of sub's condition of type typ (OLM's
// SubscriptionConditionType, e.g. "ChannelDeprecated"); "" and "" when sub has none.
func SubscriptionCondition(sub *unstructured.Unstructured, typ string) (status, message string) {
	for _, c := range conditions(sub) {
		if c.typ == typ {
			return c.status, c.message
		}
	}
	return "", ""
}

// WaitSubscriptionCondition waits until namespace/name's Subscription has condition typ True
// (e.g. "ChannelDeprecated", which OLM sets from the catalog's olm.deprecations) and returns its
// message; ctx bounds the wait.
func WaitSubscriptionCondition(ctx context.Context, c client.Client, namespace, name, typ string) (string, error) {
	sub := NewSubscription(namespace, name)
	var message string
	err := poll(ctx, "Subscription "+namespace+"/"+name+" to have "+typ+"=True", func(ctx context.Context) (bool, string, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(sub), sub); err != nil {
			return false, "", err
		}
		var status string
		status, message = SubscriptionCondition(sub, typ)
		return status == statusTrue, describeSubscription(sub), nil
	})
	return message, err
}
