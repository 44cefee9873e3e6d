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
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

// The cache holds StatefulSets without their pod template (cachecfg.Shared.TrimStatefulSet): at 1,000
// clusters the templates would be most of what it holds of them. Phase 5 therefore reads the
// StatefulSet whole from the API server, to compare its template with the spec's, unless the
// StatefulSet records that it is still at the generation at which its template, of the hash the
// spec asks for, was written or compared (specs.TemplateRecorded). The generation changes with
// every change of the spec, by anyone: a hand edit of the template is read and put back.

// templateReader is the client phase 5 reads the StatefulSet through (child.Ensure's Get): a
// trimmed StatefulSet whose record shows desired's template gets desired's template back, the
// one it holds; any other is read again from the API server, as is every read when fresh.
type templateReader struct {
	client.Client
	uncached client.Reader
	desired  *appsv1.StatefulSet
	// fresh reads from the API server only (after a Conflict: the cache's copy was behind).
	fresh bool
}

// Get reads the StatefulSet from the cache and puts back its template.
func (t templateReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if t.fresh {
		return t.uncached.Get(ctx, key, obj, opts...)
	}
	if err := t.Client.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	sts, ok := obj.(*appsv1.StatefulSet)
	if !ok || !cachecfg.TemplateTrimmed(sts) {
		return nil
	}
	if specs.TemplateRecorded(t.desired, sts) {
		cachecfg.Untrim(sts, &t.desired.Spec.Template)
		return nil
	}
	*sts = appsv1.StatefulSet{}
	return t.uncached.Get(ctx, key, sts, opts...)
}

// cachedStatefulSet is the StatefulSet of dc as the cache holds it, through the only type that
// shows a cached StatefulSet (cachecfg.StatefulSetView); nil when there is none or dc does not
// control it (a StatefulSet of that name that is not dc's says nothing about dc).
func (r *Reconciler) cachedStatefulSet(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) (*cachecfg.StatefulSetView, error) {
	sts := &appsv1.StatefulSet{}
	// The cache's own object, not a copy: the view copies what it shows, and nothing writes it.
	err := r.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.StatefulSetName()}, sts, client.UnsafeDisableDeepCopy)
	if apierrors.IsNotFound(err) || (err == nil && !metav1.IsControlledBy(sts, dc)) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading StatefulSet %s: %w", dc.StatefulSetName(), err)
	}
	return cachecfg.ViewStatefulSet(sts), nil
}
