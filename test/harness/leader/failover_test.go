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

package leader

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	apischeme "github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/test/harness/manager"
)

const workersLine = `{"msg":"Starting workers","controller":"databasecluster"}` + "\n"

func newFakeClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := apischeme.Must()
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

// fakeManager is a Manager without a process: running until exit is called, its log a file.
func fakeManager(t *testing.T, name string) (*Manager, func()) {
	t.Helper()
	p, exit := manager.Fake(filepath.Join(t.TempDir(), "manager-"+name+".log"))
	m := &Manager{Process: p, Name: name}
	if err := os.WriteFile(m.LogPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return m, exit
}

func appendLog(t *testing.T, m *Manager, line string) {
	t.Helper()
	f, err := os.OpenFile(m.LogPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
}

func setHolder(t *testing.T, c client.Client, holder string) {
	t.Helper()
	ctx := context.Background()
	lease, err := GetLease(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	lease.Spec.HolderIdentity = ptr.To(holder)
	if err := c.Update(ctx, lease); err != nil {
		t.Fatal(err)
	}
}

// fakeChange counts the changes made and reports applied when told.
type fakeChange struct {
	made    int
	applied bool
}

func (f *fakeChange) change() Change {
	return Change{
		Make:    func(context.Context) error { f.made++; return nil },
		Applied: func(context.Context) (bool, error) { return f.applied, nil },
	}
}

func newLease() *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: LeaseNamespace, Name: LeaseName},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("host_old")},
	}
}

// pollCase is a measurement of a leader, "old", that holds the Lease, and one follower: fake
// managers that exitLeader and exitFollower end, and a fakeChange.
type pollCase struct {
	c            client.Client
	fc           *fakeChange
	m            *measurement
	follower     *Manager
	exitLeader   func()
	exitFollower func()
}

func newPollCase(t *testing.T) *pollCase {
	t.Helper()
	pc := &pollCase{c: newFakeClient(t, newLease()), fc: &fakeChange{}}
	var old *Manager
	old, pc.exitLeader = fakeManager(t, "old")
	pc.follower, pc.exitFollower = fakeManager(t, "follower")
	pc.m = &measurement{Stop: Stop{Client: pc.c, Leader: old, LeaderID: "host_old", Followers: []*Manager{pc.follower},
		Change: pc.fc.change()}, began: time.Now()}
	return pc
}

// A graceful hand-off: the change waits for the release, the new leader starts its workers
// and then applies it.
func TestPollHandOff(t *testing.T) {
	pc := newPollCase(t)
	m, fc := pc.m, pc.fc

	mustPoll(t, m)
	if fc.made != 0 || m.f.Changed != 0 || m.f.LeaseMoved != 0 {
		t.Fatalf("the change was made while the leader still held the Lease: %+v", m.f)
	}

	setHolder(t, pc.c, "") // released on cancel
	mustPoll(t, m)
	if fc.made != 1 || m.f.Changed == 0 || !m.f.ChangedInGap || m.f.LeaseMoved != 0 {
		t.Fatalf("after the release: made %d, %+v", fc.made, m.f)
	}

	setHolder(t, pc.c, "host_new")
	appendLog(t, pc.follower, workersLine)
	mustPoll(t, m)
	if m.f.LeaseMoved == 0 || m.f.NewHolder != "host_new" || m.f.Workers == 0 || m.f.NewLeader != pc.follower || m.f.Applied != 0 {
		t.Fatalf("after the takeover: %+v", m.f)
	}

	fc.applied = true
	mustPoll(t, m)
	if m.f.Applied == 0 || m.f.AppliedEarly || fc.made != 1 {
		t.Fatalf("after the apply: made %d, %+v", fc.made, m.f)
	}
}

// A crash: the killed leader still names itself in the Lease; its exit is the signal to make the
// change. A change applied before any follower reconciles is flagged.
func TestPollCrashAppliedEarly(t *testing.T) {
	pc := newPollCase(t)
	m, fc := pc.m, pc.fc

	mustPoll(t, m)
	if fc.made != 0 {
		t.Fatal("the change was made while the leader ran and held the Lease")
	}
	pc.exitLeader()
	mustPoll(t, m)
	if fc.made != 1 || !m.f.ChangedInGap {
		t.Fatalf("after the exit: made %d, %+v", fc.made, m.f)
	}
	fc.applied = true
	mustPoll(t, m)
	if !m.f.AppliedEarly {
		t.Fatalf("a change applied before any follower reconciled is not flagged: %+v", m.f)
	}
}

func TestPollNoFollowerLeft(t *testing.T) {
	pc := newPollCase(t)
	pc.exitFollower()
	if err := pc.m.poll(context.Background()); err == nil {
		t.Fatal("no error when every follower exited")
	}
}

func TestScaleChange(t *testing.T) {
	ctx := context.Background()
	key := client.ObjectKey{Namespace: "ns", Name: "db"}
	dc := &databasev1alpha1.DatabaseCluster{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec: databasev1alpha1.DatabaseClusterSpec{Replicas: ptr.To[int32](1)}}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: dc.StatefulSetName()},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1)}}
	c := newFakeClient(t, dc, sts)
	change := ScaleChange(c, key, 2)

	if applied, err := change.Applied(ctx); err != nil || applied {
		t.Fatalf("Applied() = %v, %v before the change", applied, err)
	}
	if err := change.Make(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, key, dc); err != nil || ptr.Deref(dc.Spec.Replicas, 0) != 2 {
		t.Fatalf("spec.replicas = %v (%v), want 2", dc.Spec.Replicas, err)
	}
	sts.Spec.Replicas = ptr.To[int32](2)
	if err := c.Update(ctx, sts); err != nil {
		t.Fatal(err)
	}
	if applied, err := change.Applied(ctx); err != nil || !applied {
		t.Fatalf("Applied() = %v, %v once the StatefulSet asks for 2 pods", applied, err)
	}
}

func TestHolderWithoutLease(t *testing.T) {
	holder, err := Holder(context.Background(), newFakeClient(t))
	if err != nil || holder != "" {
		t.Fatalf("Holder() = %q, %v without a Lease; want \"\", nil", holder, err)
	}
}

func mustPoll(t *testing.T, m *measurement) {
	t.Helper()
	// The durations are measured from began; make them non-zero.
	time.Sleep(time.Millisecond)
	if err := m.poll(context.Background()); err != nil {
		t.Fatal(err)
	}
}
