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

package plugin

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	apischeme "github.com/seed1b407122/database-operator/api/scheme"
)

// engineCluster is a PostgreSQL cluster of replicas members, orders-0 its primary, every member
// reported, with an annotation of someone else's.
func engineCluster(replicas int32) *databasev1alpha1.DatabaseCluster {
	dc := newCluster(replicas)
	dc.Annotations = map[string]string{"team": "payments"}
	dc.Spec.Engine = databasev1alpha1.EnginePostgreSQL
	dc.Status.CurrentPrimary = "orders-0"
	for _, name := range memberNames(&dc) {
		role := databasev1alpha1.MemberRoleReplica
		if name == "orders-0" {
			role = databasev1alpha1.MemberRolePrimary
		}
		dc.Status.Members = append(dc.Status.Members, databasev1alpha1.MemberStatus{Name: name, Role: role, Position: "0/3000060"})
	}
	return &dc
}

func TestSwitchoverPatch(t *testing.T) {
	for to, want := range map[string]string{
		"orders-1": `{"metadata":{"annotations":{"database.seed1b407122.io/switchover-to":"orders-1"}}}`,
		"any":      `{"metadata":{"annotations":{"database.seed1b407122.io/switchover-to":"any"}}}`,
	} {
		if got := string(switchoverPatch(to)); got != want {
			t.Errorf("switchoverPatch(%q) = %s, want %s", to, got, want)
		}
	}
}

func TestCheckSwitchover(t *testing.T) {
	inProgress := engineCluster(3)
	inProgress.Status.Switchover = &databasev1alpha1.SwitchoverStatus{From: "orders-0", To: "orders-2", Reason: "Update", StartedAt: before(75 * time.Second)}
	lagging := engineCluster(2) // scaled down from 3: the operator still reports orders-2
	lagging.Status.Members = append(lagging.Status.Members, databasev1alpha1.MemberStatus{Name: "orders-2", Role: databasev1alpha1.MemberRoleReplica})
	unset := newCluster(3)
	none := newCluster(3)
	none.Spec.Engine = databasev1alpha1.EngineNone
	for _, tc := range []struct {
		name string
		dc   *databasev1alpha1.DatabaseCluster
		to   string
		want string
	}{
		{"engine unset", &unset, "", "orders has no engine: the operator knows no roles (spec.engine none)"},
		{"engine none, with --to", &none, "orders-1", "orders has no engine: the operator knows no roles (spec.engine none)"},
		{"a member", engineCluster(3), "orders-2", ""},
		{"any", engineCluster(3), "", ""},
		{"the primary", engineCluster(3), "orders-0", ""},
		{"an ordinal beyond the replicas", engineCluster(3), "orders-3", "orders-3 is not a member of orders (members: orders-0, orders-1, orders-2)"},
		{"another cluster's member", engineCluster(3), "billing-1", "billing-1 is not a member of orders (members: orders-0, orders-1, orders-2)"},
		{"the cluster's name", engineCluster(3), "orders", "orders is not a member of orders (members: orders-0, orders-1, orders-2)"},
		{"--to any", engineCluster(3), "any", "any is not a member of orders (members: orders-0, orders-1, orders-2)"},
		{"a member still reported after a scale-down", lagging, "orders-2", ""},
		{"in progress", inProgress, "", "orders has a switchover in progress: orders-0 -> orders-2 (Update, started 1m15s ago); wait for it to finish"},
		{"in progress, with --to", inProgress, "orders-1", "orders has a switchover in progress: orders-0 -> orders-2 (Update, started 1m15s ago); wait for it to finish"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if err := checkSwitchover(tc.dc, tc.to, now); err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("checkSwitchover(--to %q) = %q, want %q", tc.to, got, tc.want)
			}
		})
	}
}

// sentPatch is a patch the plugin sent.
type sentPatch struct {
	kind    types.PatchType
	data    string
	manager string
}

// fakeOperator is a fake API server holding the objects given, and the operator's part: once
// the plugin has sent its patch, each read of the cluster first carries out the next step, and
// each list of events the next of eventSteps (an event the recorder sends late).
type fakeOperator struct {
	client.Client
	mu         sync.Mutex
	patches    []sentPatch
	steps      []func(ctx context.Context, k client.Client) error
	eventSteps []func(ctx context.Context, k client.Client) error
	// reads counts the reads of the cluster after the patch.
	reads int
}

func newFakeOperator(t *testing.T, objs ...client.Object) *fakeOperator {
	f := &fakeOperator{}
	f.Client = fake.NewClientBuilder().
		WithScheme(apischeme.Must()).
		WithObjects(objs...).
		WithStatusSubresource(&databasev1alpha1.DatabaseCluster{}).
		WithIndex(&eventsv1.Event{}, "regarding.kind", func(o client.Object) []string { return []string{o.(*eventsv1.Event).Regarding.Kind} }).
		WithIndex(&eventsv1.Event{}, "regarding.name", func(o client.Object) []string { return []string{o.(*eventsv1.Event).Regarding.Name} }).
		WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(ctx context.Context, k client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
				data, err := p.Data(obj)
				if err != nil {
					return err
				}
				po := &client.PatchOptions{}
				po.ApplyOptions(opts)
				f.mu.Lock()
				f.patches = append(f.patches, sentPatch{kind: p.Type(), data: string(data), manager: po.FieldManager})
				f.mu.Unlock()
				return k.Patch(ctx, obj, p, opts...)
			},
			Get: func(ctx context.Context, k client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if _, ok := obj.(*databasev1alpha1.DatabaseCluster); ok {
					f.next(ctx, t, k, &f.steps, true)
				}
				return k.Get(ctx, key, obj, opts...)
			},
			List: func(ctx context.Context, k client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if _, ok := list.(*eventsv1.EventList); ok {
					f.next(ctx, t, k, &f.eventSteps, false)
				}
				return k.List(ctx, list, opts...)
			},
		}).
		Build()
	return f
}

// next carries out the first of steps once the plugin has sent its patch; read counts a read of
// the cluster.
func (f *fakeOperator) next(ctx context.Context, t *testing.T, k client.Client, steps *[]func(context.Context, client.Client) error, read bool) {
	f.mu.Lock()
	var step func(context.Context, client.Client) error
	if len(f.patches) > 0 {
		if read {
			f.reads++
		}
		if len(*steps) > 0 {
			step, *steps = (*steps)[0], (*steps)[1:]
		}
	}
	f.mu.Unlock()
	if step != nil {
		if err := step(ctx, k); err != nil {
			t.Errorf("the fake operator's step: %v", err)
		}
	}
}

// run runs the plugin with args against f in the namespace shop, and returns its exit code,
// standard output and standard error.
func (f *fakeOperator) run(t *testing.T, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	c := newCLI(Options{Streams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, Now: func() time.Time { return now }})
	c.connect = func() (client.Client, string, error) { return f, "shop", nil }
	c.interval = time.Millisecond
	code := c.run(t.Context(), args)
	return code, out.String(), errOut.String()
}

// The fake operator's steps, on the cluster orders of shop.

// updateCluster changes the cluster's metadata (update) or status (status).
func updateCluster(ctx context.Context, k client.Client, change func(*databasev1alpha1.DatabaseCluster), status bool) error {
	dc := &databasev1alpha1.DatabaseCluster{}
	if err := k.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "orders"}, dc); err != nil {
		return err
	}
	change(dc)
	if status {
		return k.Status().Update(ctx, dc)
	}
	return k.Update(ctx, dc)
}

// record records the switchover from orders-0 to to in status.switchover.
func record(to string) func(context.Context, client.Client) error {
	return func(ctx context.Context, k client.Client) error {
		return updateCluster(ctx, k, func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Status.TargetPrimary = to
			dc.Status.Switchover = &databasev1alpha1.SwitchoverStatus{From: "orders-0", To: to, Reason: "Requested", StartedAt: metav1.NewTime(now)}
		}, true)
	}
}

// settle removes the switchover annotation.
func settle(ctx context.Context, k client.Client) error {
	return updateCluster(ctx, k, func(dc *databasev1alpha1.DatabaseCluster) {
		delete(dc.Annotations, databasev1alpha1.SwitchoverAnnotation)
	}, false)
}

// finish ends the switchover in progress with primary the primary.
func finish(primary string) func(context.Context, client.Client) error {
	return func(ctx context.Context, k client.Client) error {
		return updateCluster(ctx, k, func(dc *databasev1alpha1.DatabaseCluster) {
			dc.Status.Switchover, dc.Status.TargetPrimary, dc.Status.CurrentPrimary = nil, "", primary
		}, true)
	}
}

// refusal is a SwitchoverRefused event regarding the cluster, last seen at.
func refusal(name, note string, at time.Time) *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
		EventTime:  metav1.NewMicroTime(at),
		Regarding:  corev1.ObjectReference{Kind: "DatabaseCluster", Name: "orders", Namespace: "shop", UID: uid},
		Type:       corev1.EventTypeWarning, Reason: reasonSwitchoverRefused, Note: note,
		ReportingController: "database.seed1b407122.io/databasecluster", ReportingInstance: "operator", Action: "Switchover",
	}
}

// refuse records a new refusal event and removes the annotation, as the operator does.
func refuse(note string) func(context.Context, client.Client) error {
	return func(ctx context.Context, k client.Client) error {
		if err := refusalOnly(note)(ctx, k); err != nil {
			return err
		}
		return settle(ctx, k)
	}
}

// refusalOnly records a new refusal event only.
func refusalOnly(note string) func(context.Context, client.Client) error {
	return func(ctx context.Context, k client.Client) error {
		return k.Create(ctx, refusal("orders.refused-new", note, now.Add(time.Second)))
	}
}

// repeat makes the old refusal orders.refused-old a series seen again now, as the event
// recorder does with an event that repeats, and removes the annotation.
func repeat(note string) func(context.Context, client.Client) error {
	return func(ctx context.Context, k client.Client) error {
		ev := &eventsv1.Event{}
		if err := k.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "orders.refused-old"}, ev); err != nil {
			return err
		}
		ev.Note = note
		ev.Series = &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(now.Add(time.Second))}
		if err := k.Update(ctx, ev); err != nil {
			return err
		}
		return settle(ctx, k)
	}
}

func TestSwitchoverCommand(t *testing.T) {
	const (
		annotation = databasev1alpha1.SwitchoverAnnotation
		toOrders1  = `{"metadata":{"annotations":{"database.seed1b407122.io/switchover-to":"orders-1"}}}`
		toAny      = `{"metadata":{"annotations":{"database.seed1b407122.io/switchover-to":"any"}}}`
	)
	noEngine := newCluster(3)
	noEngine.Annotations = map[string]string{"team": "payments"}
	inProgress := engineCluster(3)
	inProgress.Status.Switchover = &databasev1alpha1.SwitchoverStatus{From: "orders-0", To: "orders-2", Reason: "Update", StartedAt: before(40 * time.Second)}
	// An earlier request's refusal, recorded before this one: it must not count.
	old := refusal("orders.refused-old", `No healthy replica "orders-2" to switch over to.`, now.Add(-time.Hour))
	for _, tc := range []struct {
		name  string
		dc    *databasev1alpha1.DatabaseCluster
		args  []string
		steps []func(context.Context, client.Client) error
		// eventSteps are carried out on the lists of events after the patch.
		eventSteps []func(context.Context, client.Client) error
		code       int
		out        string
		errOut     string
		patch      string // the one patch sent, empty for none
		left       string // the switchover annotation afterwards, empty for none
		reads      int    // the least number of reads of the cluster after the patch
		primary    string // status.currentPrimary afterwards
	}{
		{name: "a cluster without an engine", dc: &noEngine, args: []string{"switchover", "orders", "--to", "orders-1", "--wait"},
			code: 1, errOut: "error: orders has no engine: the operator knows no roles (spec.engine none)\n"},
		{name: "a target that is not a member", dc: engineCluster(3), args: []string{"switchover", "orders", "--to", "orders-3"},
			code: 1, errOut: "error: orders-3 is not a member of orders (members: orders-0, orders-1, orders-2)\n"},
		{name: "a switchover in progress", dc: inProgress, args: []string{"switchover", "orders"},
			code: 1, errOut: "error: orders has a switchover in progress: orders-0 -> orders-2 (Update, started 40s ago); wait for it to finish\n"},
		{name: "a timeout that is not positive", dc: engineCluster(3), args: []string{"switchover", "orders", "--wait", "--timeout", "0s"},
			code: 1, errOut: "error: --timeout must be positive, not 0s\n"},
		{name: "--to, without waiting", dc: engineCluster(3), args: []string{"switchover", "orders", "--to", "orders-1"},
			out:   "databasecluster/orders switchover requested (database.seed1b407122.io/switchover-to: orders-1)\n",
			patch: toOrders1, left: "orders-1", primary: "orders-0"},
		{name: "any, without waiting", dc: engineCluster(3), args: []string{"switchover", "orders"},
			out:   "databasecluster/orders switchover requested (database.seed1b407122.io/switchover-to: any)\n",
			patch: toAny, left: "any", primary: "orders-0"},
		{name: "--wait through the recorded switchover to its end", dc: engineCluster(3),
			args:  []string{"switchover", "orders", "--to", "orders-1", "--wait"},
			steps: []func(context.Context, client.Client) error{record("orders-1"), settle, nil, finish("orders-1")},
			out: "databasecluster/orders switchover requested (database.seed1b407122.io/switchover-to: orders-1)\n" +
				"databasecluster/orders switched over: orders-1 is the primary (was orders-0)\n",
			patch: toOrders1, reads: 4, primary: "orders-1"},
		{name: "--wait for any", dc: engineCluster(3), args: []string{"switchover", "orders", "--wait"},
			steps: []func(context.Context, client.Client) error{nil, record("orders-2"), settle, finish("orders-2")},
			out: "databasecluster/orders switchover requested (database.seed1b407122.io/switchover-to: any)\n" +
				"databasecluster/orders switched over: orders-2 is the primary (was orders-0)\n",
			patch: toAny, reads: 4, primary: "orders-2"},
		{name: "--wait for the member that already is the primary", dc: engineCluster(3),
			args:  []string{"switchover", "orders", "--to", "orders-0", "--wait"},
			steps: []func(context.Context, client.Client) error{settle},
			out: "databasecluster/orders switchover requested (database.seed1b407122.io/switchover-to: orders-0)\n" +
				"databasecluster/orders: orders-0 is the primary (it already was)\n",
			patch: `{"metadata":{"annotations":{"database.seed1b407122.io/switchover-to":"orders-0"}}}`, reads: 1, primary: "orders-0"},
		{name: "--wait, refused", dc: engineCluster(3), args: []string{"switchover", "orders", "--to", "orders-1", "--wait"},
			steps: []func(context.Context, client.Client) error{refuse(`No healthy replica "orders-1" to switch over to.`)},
			out:   "databasecluster/orders switchover requested (database.seed1b407122.io/switchover-to: orders-1)\n",
			code:  1, errOut: `error: the operator refused the switchover of orders: No healthy replica "orders-1" to switch over to. (the primary is orders-0)` + "\n",
			patch: toOrders1, reads: 1, primary: "orders-0"},
		{name: "--wait, refused, the event after the annotation's removal", dc: engineCluster(3),
			args:       []string{"switchover", "orders", "--to", "orders-1", "--wait"},
			steps:      []func(context.Context, client.Client) error{settle},
			eventSteps: []func(context.Context, client.Client) error{nil, refusalOnly(`No healthy replica "orders-1" to switch over to.`)},
			out:        "databasecluster/orders switchover requested (database.seed1b407122.io/switchover-to: orders-1)\n",
			code:       1, errOut: `error: the operator refused the switchover of orders: No healthy replica "orders-1" to switch over to. (the primary is orders-0)` + "\n",
			patch: toOrders1, reads: 1, primary: "orders-0"},
		{name: "--wait, refused again: the old refusal seen anew", dc: engineCluster(3), args: []string{"switchover", "orders", "--wait"},
			steps: []func(context.Context, client.Client) error{repeat(`No healthy replica "" to switch over to.`)},
			out:   "databasecluster/orders switchover requested (database.seed1b407122.io/switchover-to: any)\n",
			code:  1, errOut: `error: the operator refused the switchover of orders: No healthy replica "" to switch over to. (the primary is orders-0)` + "\n",
			patch: toAny, reads: 1, primary: "orders-0"},
		{name: "--wait, taken away while another member became the primary", dc: engineCluster(3),
			args:  []string{"switchover", "orders", "--to", "orders-1", "--wait"},
			steps: []func(context.Context, client.Client) error{record("orders-2"), settle, finish("orders-2")},
			out:   "databasecluster/orders switchover requested (database.seed1b407122.io/switchover-to: orders-1)\n",
			code:  1, errOut: "error: the switchover of orders did not happen: the primary is orders-2, not orders-1\n",
			patch: toOrders1, reads: 3, primary: "orders-2"},
		{name: "--wait for any, taken away without a switchover", dc: engineCluster(3), args: []string{"switchover", "orders", "--wait"},
			steps: []func(context.Context, client.Client) error{settle},
			out:   "databasecluster/orders switchover requested (database.seed1b407122.io/switchover-to: any)\n",
			code:  1, errOut: "error: the switchover of orders did not happen: orders-0 is still the primary\n",
			patch: toAny, reads: 1, primary: "orders-0"},
		{name: "--wait, the primary lost", dc: engineCluster(3), args: []string{"switchover", "orders", "--to", "orders-1", "--wait"},
			steps: []func(context.Context, client.Client) error{record("orders-1"), settle, finish("")},
			out:   "databasecluster/orders switchover requested (database.seed1b407122.io/switchover-to: orders-1)\n",
			code:  1, errOut: "error: the switchover of orders did not happen: the operator observes no primary\n",
			patch: toOrders1, reads: 3},
		{name: "--wait, the operator does not answer", dc: engineCluster(3), args: []string{"switchover", "orders", "--wait", "--timeout", "50ms"},
			out:  "databasecluster/orders switchover requested (database.seed1b407122.io/switchover-to: any)\n",
			code: 1, errOut: "error: timed out after 50ms waiting for the switchover of orders: the operator has not taken the request (database.seed1b407122.io/switchover-to: any)\n",
			patch: toAny, left: "any", reads: 2, primary: "orders-0"},
		{name: "--wait, the switchover does not end", dc: engineCluster(3), args: []string{"switchover", "orders", "--to", "orders-1", "--wait", "--timeout", "50ms"},
			steps: []func(context.Context, client.Client) error{record("orders-1"), settle},
			out:   "databasecluster/orders switchover requested (database.seed1b407122.io/switchover-to: orders-1)\n",
			code:  1, errOut: "error: timed out after 50ms waiting for the switchover of orders: orders-0 -> orders-1 (Requested) is in progress\n",
			patch: toOrders1, reads: 3, primary: "orders-0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeOperator(t, tc.dc, old.DeepCopy())
			f.steps, f.eventSteps = tc.steps, tc.eventSteps
			code, out, errOut := f.run(t, tc.args...)
			if code != tc.code || out != tc.out || errOut != tc.errOut {
				t.Errorf("kubectl dbc %v:\nexit %d, stdout %q, stderr %q\nwant exit %d, stdout %q, stderr %q",
					tc.args, code, out, errOut, tc.code, tc.out, tc.errOut)
			}
			var want []sentPatch
			if tc.patch != "" {
				want = []sentPatch{{kind: types.MergePatchType, data: tc.patch, manager: FieldManager}}
			}
			if !reflect.DeepEqual(f.patches, want) {
				t.Errorf("patches sent %+v, want %+v", f.patches, want)
			}
			if f.reads < tc.reads {
				t.Errorf("the cluster was read %d times after the patch, want at least %d", f.reads, tc.reads)
			}
			if len(f.steps) > 0 || len(f.eventSteps) > 0 {
				t.Errorf("%d steps of the operator were not carried out: the command stopped waiting too early", len(f.steps)+len(f.eventSteps))
			}

			// The patch changed the annotation only; what the operator did is the rest.
			got := &databasev1alpha1.DatabaseCluster{}
			if err := f.Get(t.Context(), client.ObjectKey{Namespace: "shop", Name: "orders"}, got); err != nil {
				t.Fatal(err)
			}
			wantAnnotations := map[string]string{"team": "payments"}
			if tc.left != "" {
				wantAnnotations[annotation] = tc.left
			}
			if !reflect.DeepEqual(got.Annotations, wantAnnotations) {
				t.Errorf("annotations %v, want %v", got.Annotations, wantAnnotations)
			}
			if !reflect.DeepEqual(got.Spec, tc.dc.Spec) {
				t.Errorf("spec changed: %+v", got.Spec)
			}
			if tc.patch != "" && got.Status.CurrentPrimary != tc.primary {
				t.Errorf("status.currentPrimary %q, want %q", got.Status.CurrentPrimary, tc.primary)
			}
		})
	}
}

// TestStatusCommand reads a cluster with an engine from the API server and prints what its
// golden file says: the reads of "status" find the pods by the cluster's selector labels and the
// events regarding it.
func TestStatusCommand(t *testing.T) {
	s := switchingOver()
	objs := []client.Object{&s.Cluster}
	for i := range s.Pods {
		pod := s.Pods[i].DeepCopy()
		for k, v := range s.Cluster.SelectorLabels() {
			pod.Labels[k] = v
		}
		objs = append(objs, pod)
	}
	for i := range s.Claims {
		objs = append(objs, &s.Claims[i])
	}
	for i := range s.Events {
		objs = append(objs, &s.Events[i])
	}
	// Not the cluster's: another cluster's event, and a pod that the selector does not select.
	other := event("billing.1", "Warning", "SwitchoverRefused", "not orders'", time.Second)
	other.Regarding.Name = "billing"
	objs = append(objs, &other, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orders-7", Namespace: "shop"}})

	code, out, errOut := newFakeOperator(t, objs...).run(t, "status", "orders")
	want, err := os.ReadFile(filepath.Join("testdata", "status-switchover.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || out != string(want) || errOut != "" {
		t.Errorf("status: exit %d, stderr %q, stdout\n%s--- want\n%s", code, errOut, out, want)
	}
}
