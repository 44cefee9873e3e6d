package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Lines as kube-apiserver 1.37 writes them at the Metadata level (fields the counter does not
// read left out).
const (
	auditPatchStatus = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete",` +
		`"requestURI":"/apis/database.seed1b407122.io/v1alpha1/namespaces/bench/databaseclusters/db-1/status","verb":"patch",` +
		`"user":{"username":"bench-manager"},"objectRef":{"resource":"databaseclusters","namespace":"bench","name":"db-1",` +
		`"apiGroup":"database.seed1b407122.io","apiVersion":"v1alpha1","subresource":"status"},"responseStatus":{"metadata":{},"code":200}}`
	auditCreateService = `{"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/bench/services","verb":"create",` +
		`"objectRef":{"resource":"services","namespace":"bench","apiVersion":"v1"},"responseStatus":{"code":201}}`
	auditWatchStarted = `{"stage":"ResponseStarted","requestURI":"/api/v1/pods?watch=true","verb":"watch",` +
		`"objectRef":{"resource":"pods","apiVersion":"v1"},"responseStatus":{"code":200}}`
	auditWatchEnded = `{"stage":"ResponseComplete","requestURI":"/api/v1/pods?watch=true","verb":"watch",` +
		`"objectRef":{"resource":"pods","apiVersion":"v1"},"responseStatus":{"code":200}}`
	auditDiscovery = `{"stage":"ResponseComplete","requestURI":"/apis/apps/v1","verb":"get","responseStatus":{"code":200}}`
	auditConflict  = `{"stage":"ResponseComplete","requestURI":"/apis/apps/v1/namespaces/bench/statefulsets","verb":"create",` +
		`"objectRef":{"resource":"statefulsets","namespace":"bench","apiGroup":"apps","apiVersion":"v1"},"responseStatus":{"code":409}}`
)

func TestParseAuditEvent(t *testing.T) {
	for _, tc := range []struct {
		line, key, code string
		counted         bool
	}{
		{auditPatchStatus, "patch databaseclusters.database.seed1b407122.io/status", "200", true},
		{auditCreateService, "create services", "201", true},
		{auditWatchStarted, "watch pods", "200", true},
		{auditWatchEnded, "", "", false}, // counted when it started
		{auditDiscovery, "get nonresource/apis/apps/v1", "200", true},
		{auditConflict, "create statefulsets.apps", "409", true},
	} {
		key, code, counted, err := parseAuditEvent([]byte(tc.line))
		if err != nil || key != tc.key || code != tc.code || counted != tc.counted {
			t.Errorf("parseAuditEvent(%.60s...) = %q, %q, %v, %v; want %q, %q, %v", tc.line, key, code, counted, err,
				tc.key, tc.code, tc.counted)
		}
	}
	if _, _, _, err := parseAuditEvent([]byte("{not json")); err == nil {
		t.Error("a line that is not JSON did not fail")
	}
}

// TestAuditCounterReadsOnlyNewLines: each snapshot adds what was written since the last one, and
// a line cut in the middle is counted once it is complete.
func TestAuditCounterReadsOnlyNewLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	a := newAuditCounter(path)
	if got, err := a.snapshot(); err != nil || len(got.ByVerbResource) != 0 {
		t.Fatalf("before the log exists: %v, %v; want nothing counted and no error", got, err)
	}
	appendTo(t, path, auditCreateService+"\n"+auditPatchStatus[:40])
	got, err := a.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := requestCounts{ByVerbResource: map[string]int64{"create services": 1}, ByCode: map[string]int64{"201": 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("first snapshot = %v, want %v", got, want)
	}
	appendTo(t, path, auditPatchStatus[40:]+"\n"+auditWatchStarted+"\n"+auditWatchEnded+"\n"+auditCreateService+"\n")
	got, err = a.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want = requestCounts{
		ByVerbResource: map[string]int64{
			"create services": 2, "patch databaseclusters.database.seed1b407122.io/status": 1, "watch pods": 1,
		},
		ByCode: map[string]int64{"201": 2, "200": 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("second snapshot = %v, want %v", got, want)
	}
}

func appendTo(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
