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

package databasecluster

import (
	"context"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// The cache holds StatefulSets without their pod template (cachecfg.TrimStatefulSet). Phase 5
// reads the StatefulSet whole from the API server, to compare its template with the spec's,
// unless it is still at the UID and generation at which this operator last compared it (or
// created it) and the spec still asks for the template of that check's hash. The generation
// changes with every change of the spec, by anyone: a hand edit of the template is read and put
// back as before.

// templateReader is the client phase 5 reads the StatefulSet through (child.Ensure's Get): a
// trimmed StatefulSet whose template the checks show (templateKnown) gets desired's template,
// the one it holds; any other is read again from the API server.
type templateReader struct {
	client.Client
	uncached client.Reader
	desired  *appsv1.StatefulSet
	// checked are the checks recorded for the cluster: this process's and the status's.
	checked []*databasev1alpha1.CheckedStatefulSet
}

// Get reads the StatefulSet from the cache and puts back its template.
func (t templateReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := t.Client.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	sts, ok := obj.(*appsv1.StatefulSet)
	if !ok || !cachecfg.TemplateTrimmed(sts) {
		return nil
	}
	if templateKnown(t.desired, sts, t.checked...) {
		cachecfg.Untrim(sts, &t.desired.Spec.Template)
		return nil
	}
	*sts = appsv1.StatefulSet{}
	return t.uncached.Get(ctx, key, sts, opts...)
}

// templateKnown says whether sts (as the cache has it) holds the pod template desired asks
// for: a check (made in this process, or as the status records it, e.g. before a restart) found
// this StatefulSet, at this generation, in sync with a template of desired's hash.
func templateKnown(desired, sts *appsv1.StatefulSet, checked ...*databasev1alpha1.CheckedStatefulSet) bool {
	want := desired.Annotations[templateHashAnnotation]
	for _, c := range checked {
		if c != nil && want != "" && c.TemplateHash == want && c.UID == sts.UID && c.Generation == sts.Generation {
			return true
		}
	}
	return false
}

// checkedStatefulSet is the StatefulSet whose template phase 5 compared in full with desired's
// (before, as child.Ensure read it) or created (live), nil when it compared none: a StatefulSet
// being deleted is not compared, and after a patch of its spec the generation the patch made
// is checked again on the next pass (another writer may have changed the template between the
// read and the patch).
func checkedStatefulSet(result child.Result, desired, before, live *appsv1.StatefulSet) *databasev1alpha1.CheckedStatefulSet {
	hash := desired.Annotations[templateHashAnnotation]
	switch {
	case live == nil || hash == "":
		return nil
	case result == child.Created:
		return &databasev1alpha1.CheckedStatefulSet{UID: live.UID, Generation: live.Generation, TemplateHash: hash}
	case before.DeletionTimestamp != nil || before.UID == "" || live.Generation != before.Generation:
		return nil
	default:
		return &databasev1alpha1.CheckedStatefulSet{UID: before.UID, Generation: before.Generation, TemplateHash: hash}
	}
}

// checkedTemplates remembers, per cluster, the StatefulSet last checked: the status records it
// too, but a status write lags (the pass that creates the StatefulSet writes none, see
// statusDeferred) and the cache sees it later still.
type checkedTemplates struct {
	mu sync.Mutex
	of map[types.NamespacedName]databasev1alpha1.CheckedStatefulSet
}

// get returns the StatefulSet last checked for cluster, nil when none.
func (c *checkedTemplates) get(cluster types.NamespacedName) *databasev1alpha1.CheckedStatefulSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	if checked, ok := c.of[cluster]; ok {
		return &checked
	}
	return nil
}

// put remembers checked for cluster (nil forgets it).
func (c *checkedTemplates) put(cluster types.NamespacedName, checked *databasev1alpha1.CheckedStatefulSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if checked == nil {
		delete(c.of, cluster)
		return
	}
	if c.of == nil {
		c.of = map[types.NamespacedName]databasev1alpha1.CheckedStatefulSet{}
	}
	c.of[cluster] = *checked
}
