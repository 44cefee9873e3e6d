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

// Package patch holds the writes every controller makes to the resource it reconciles, each one
// merge patch: the status, computed from what a reconcile observed and sent only when it changed,
// and the finalizer, added before any child exists and removed once the cleanup is done. Other
// writes that must not land on a newer version than the one read use LockedMergeFrom too.
package patch

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Status writes the status of updated, which is original with a newly computed status, in one
// merge patch of the status subresource, and only when it differs from the status of original.
// It reports whether it wrote; updated then holds the object as the server returned it. A
// resource that is gone has no status left to write: NotFound is not an error.
//
// The patch carries original's resourceVersion, so the API server refuses it with a Conflict
// when original is stale. original comes from the cache, which may not have seen the previous
// status write yet: a merge patch leaves out every field whose new value equals the stale one,
// so without the lock the server would keep the newer, different value of that write, e.g.
// readyReplicas 0 (written while a StatefulSet was replaced) under "Available: 3/3" for good
// (found by test/faults). On a Conflict the reconcile is retried on a fresh read.
func Status[T client.Object](ctx context.Context, c client.Client, original, updated T) (bool, error) {
	// Only the status differs between the two, so comparing the objects compares the statuses.
	if equality.Semantic.DeepEqual(original, updated) {
		return false, nil
	}
	if err := c.Status().Patch(ctx, updated, LockedMergeFrom(original)); err != nil {
		return false, client.IgnoreNotFound(fmt.Errorf("patching the status: %w", err))
	}
	return true, nil
}

// AddFinalizer adds finalizer to obj unless it is there. The patch carries obj's
// resourceVersion, so it fails if the object changed since it was read: a reconcile never acts
// on a deletion it has not seen.
func AddFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer string) error {
	if controllerutil.ContainsFinalizer(obj, finalizer) {
		return nil
	}
	return patchFinalizers(ctx, c, obj, "adding the finalizer", func() { controllerutil.AddFinalizer(obj, finalizer) })
}

// RemoveFinalizer removes finalizer from obj once its cleanup is done, with a patch that fails
// if the object changed since it was read. The error is NotFound when the object is already gone,
// which callers usually ignore.
func RemoveFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer string) error {
	if !controllerutil.ContainsFinalizer(obj, finalizer) {
		return nil
	}
	return patchFinalizers(ctx, c, obj, "removing the finalizer", func() { controllerutil.RemoveFinalizer(obj, finalizer) })
}

// patchFinalizers makes change to the finalizers of obj and writes it in one merge patch that
// carries obj's resourceVersion; doing names the write in its error.
func patchFinalizers(ctx context.Context, c client.Client, obj client.Object, doing string, change func()) error {
	original := obj.DeepCopyObject().(client.Object)
	change()
	if err := c.Patch(ctx, obj, LockedMergeFrom(original)); err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	return nil
}

// LockedMergeFrom is a merge patch from original that carries its resourceVersion, so that the
// API server refuses it with a Conflict when the object changed meanwhile: a write decided from
// what original showed is never applied over a newer version (the status, the finalizers, a
// label or annotation the controller writes) but decided again on a fresh read.
func LockedMergeFrom(original client.Object) client.Patch {
	return client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{})
}
