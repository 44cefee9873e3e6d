package operator

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper is a DefaultRESTMapper that counts the RESTMapping calls it answers.
type countingMapper struct {
	*meta.DefaultRESTMapper
	calls int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.calls++
	return c.DefaultRESTMapper.RESTMapping(gk, versions...)
}

func TestMappingCache(t *testing.T) {
	cluster := schema.GroupVersionKind{Group: "database.seed1b407122.io", Version: "v1alpha1", Kind: "DatabaseCluster"}
	base := &countingMapper{DefaultRESTMapper: meta.NewDefaultRESTMapper(nil)}
	base.Add(cluster, meta.RESTScopeNamespace)
	m := &mappingCache{RESTMapper: base, mappings: map[mappingKey]meta.RESTMapping{}}

	first, err := m.RESTMapping(cluster.GroupKind(), "v1alpha1")
	if err != nil || first.Scope.Name() != meta.RESTScopeNameNamespace || first.Resource.Resource != "databaseclusters" {
		t.Fatalf("first = %+v, %v", first, err)
	}
	first.Resource.Resource = "changed by a caller"
	second, err := m.RESTMapping(cluster.GroupKind(), "v1alpha1")
	if err != nil || second.Resource.Resource != "databaseclusters" {
		t.Fatalf("second = %+v, %v: a caller's change reached the cache", second, err)
	}
	if base.calls != 1 {
		t.Errorf("the mapper answered %d times, want 1 (the second from the cache)", base.calls)
	}

	// A kind not served yet is asked again each time, and found once it is served.
	backup := schema.GroupVersionKind{Group: "database.seed1b407122.io", Version: "v1alpha1", Kind: "DatabaseBackup"}
	if _, err := m.RESTMapping(backup.GroupKind(), "v1alpha1"); !meta.IsNoMatchError(err) {
		t.Fatalf("unserved kind: err = %v, want NoMatch", err)
	}
	base.Add(backup, meta.RESTScopeNamespace)
	if _, err := m.RESTMapping(backup.GroupKind(), "v1alpha1"); err != nil {
		t.Fatalf("a kind served later: %v (an error was kept)", err)
	}
	if base.calls != 3 {
		t.Errorf("the mapper answered %d times, want 3", base.calls)
	}
}
