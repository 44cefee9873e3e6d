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
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

func TestPatches(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{string(specPatch("paused", true)), `{"spec":{"paused":true}}`},
		{string(specPatch("hibernated", false)), `{"spec":{"hibernated":false}}`},
		{string(restartPatch(time.Date(2026, 11, 25, 13, 4, 5, 0, time.FixedZone("CET", 3600)))),
			`{"metadata":{"annotations":{"database.seed1b407122.io/restartedAt":"2026-11-25T12:04:05Z"}}}`},
	} {
		if tc.got != tc.want {
			t.Errorf("patch %s, want %s", tc.got, tc.want)
		}
	}
	fields := map[string]string{}
	for _, tg := range toggles {
		if prev, ok := fields[tg.use]; ok {
			t.Errorf("command %s twice (%s)", tg.use, prev)
		}
		fields[tg.use] = tg.field
	}
	want := map[string]string{"pause": "paused", "resume": "paused", "hibernate": "hibernated", "wake": "hibernated"}
	if len(fields) != len(want) {
		t.Errorf("toggles %v, want %v", fields, want)
	}
	for use, field := range want {
		if fields[use] != field {
			t.Errorf("%s sets spec.%s, want spec.%s", use, fields[use], field)
		}
	}
}

func TestNewBackup(t *testing.T) {
	dc := newCluster(3)
	b := newBackup(&dc, "", false)
	if b.Name != "" || b.GenerateName != "orders-" || b.Namespace != "shop" ||
		!reflect.DeepEqual(b.Spec, databasev1alpha1.DatabaseBackupSpec{ClusterName: "orders", Method: databasev1alpha1.BackupOnline}) {
		t.Errorf("backup without a name: %+v", b)
	}
	b = newBackup(&dc, "before-upgrade", true)
	if b.Name != "before-upgrade" || b.GenerateName != "" ||
		!reflect.DeepEqual(b.Spec, databasev1alpha1.DatabaseBackupSpec{ClusterName: "orders", Method: databasev1alpha1.BackupOffline}) {
		t.Errorf("named Offline backup: %+v", b)
	}
}

func TestOrdinalOf(t *testing.T) {
	for name, want := range map[string]int32{"orders-0": 0, "orders-12": 12} {
		if got, ok := ordinalOf(name, "orders-"); !ok || got != want {
			t.Errorf("ordinalOf(%q) = %d, %t; want %d", name, got, ok, want)
		}
	}
	for _, name := range []string{"orders-", "orders-01", "orders-a", "orders-1-x", "orders-backup-0", "order-1", "orders--1", "orders-99999999999"} {
		if n, ok := ordinalOf(name, "orders-"); ok {
			t.Errorf("ordinalOf(%q) = %d, want no ordinal", name, n)
		}
	}
}

// TestNamespaceResolution resolves the namespace as kubectl does: -n, else the context's
// (--context or the current one), from --kubeconfig or KUBECONFIG.
func TestNamespaceResolution(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: shop
  context: {cluster: c, user: u, namespace: shop}
- name: bare
  context: {cluster: c, user: u}
current-context: shop
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", "")
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{args: []string{"--kubeconfig", kubeconfig}, want: "shop"},
		{args: []string{"--kubeconfig", kubeconfig, "--context", "bare"}, want: "default"},
		{args: []string{"--kubeconfig", kubeconfig, "-n", "billing"}, want: "billing"},
		{env: kubeconfig, args: []string{"--namespace", "billing"}, want: "billing"},
		{env: kubeconfig, args: nil, want: "shop"},
	} {
		t.Setenv("KUBECONFIG", tc.env)
		c := newCLI(Options{})
		cmd := c.command()
		if err := cmd.PersistentFlags().Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		ns, _, err := c.flags.ToRawKubeConfigLoader().Namespace()
		if err != nil || ns != tc.want {
			t.Errorf("KUBECONFIG=%q %v: namespace %q (%v), want %q", tc.env, tc.args, ns, err, tc.want)
		}
	}
}

func TestRunErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pause"}, "error: accepts 1 arg(s), received 0\n"},
		{[]string{"status", "a", "b"}, "error: accepts 1 arg(s), received 2\n"},
		{[]string{"explode", "x"}, `error: unknown command "explode" for "kubectl dbc"` + "\n"},
	} {
		var out, errOut bytes.Buffer
		code := Run(t.Context(), Options{Streams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}}, tc.args)
		if code != 1 || errOut.String() != tc.want || out.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 1, stderr %q", tc.args, code, errOut.String(), out.String(), tc.want)
		}
	}
}

func TestHelpListsEveryCommand(t *testing.T) {
	var out bytes.Buffer
	if code := Run(t.Context(), Options{Streams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}}, []string{"--help"}); code != 0 {
		t.Fatalf("--help exits %d: %s", code, out.String())
	}
	for _, want := range []string{"status", "restart", "hibernate", "wake", "pause", "resume", "backup", "switchover", "--kubeconfig", "--context", "-n, --namespace"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help does not mention %q:\n%s", want, out.String())
		}
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if code := Run(t.Context(), Options{Streams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}}, []string{"--version"}); code != 0 ||
		!strings.HasPrefix(out.String(), "kubectl dbc version ") {
		t.Errorf("--version: exit %d, %q", code, out.String())
	}
	Version = "0.2.0"
	defer func() { Version = "" }()
	out.Reset()
	Run(t.Context(), Options{Streams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}}, []string{"--version"})
	if out.String() != "kubectl dbc version 0.2.0\n" {
		t.Errorf("--version with Version set: %q", out.String())
	}
}
