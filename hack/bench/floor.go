package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

// The floor case: the same cluster, N and DatabaseClusters as the operator case, but no
// operator: an ideal controller creates the children the operator would, and the case ends
// when every StatefulSet is ready (docs/benchmarks.md's *The floor*).

// floorChildren are the children of the cluster name as the operator builds them: headless
// Service, client Service, StatefulSet, and the PodDisruptionBudget when the spec wants one.
// Without their owner reference: no operator adds the DatabaseCluster's UID, and the garbage
// collector would delete children whose owner is missing.
func floorChildren(name string) ([]client.Object, error) {
	dc := newDatabaseCluster(name)
	dc.UID = types.UID("floor-" + name) // the builders set a controller reference to it
	sts, err := specs.BuildStatefulSet(dc, specs.Inputs{})
	if err != nil {
		return nil, err
	}
	children := []client.Object{specs.BuildHeadlessService(dc), specs.BuildClientService(dc), sts}
	if dc.PDBEnabled() {
		children = append(children, specs.BuildPodDisruptionBudget(dc))
	}
	for _, c := range children {
		c.SetOwnerReferences(nil)
	}
	return children, nil
}

// createFloor creates the n DatabaseClusters as the operator case does and, the moment each
// create returns, hands its name to controllers goroutines that create its children in the
// operator's order: no watch, no queue, no rate limit, no finalizer, status or event. It
// returns how many children it created.
func createFloor(ctx context.Context, c client.Client, n, controllers int, tr *tracker) (int64, error) {
	var created atomic.Int64
	names := make(chan string, n)
	done := make(chan error, controllers)
	for range controllers {
		go func() {
			var err error
			for name := range names {
				if err == nil {
					err = createChildren(ctx, c, name, &created)
				}
			}
			done <- err
		}()
	}
	err := forEach(n, workers, func(name string) error {
		err := createCluster(ctx, c, name, tr)
		if err == nil {
			names <- name
		}
		return err
	})
	close(names)
	for range controllers {
		err = errors.Join(err, <-done)
	}
	return created.Load(), err
}

func createChildren(ctx context.Context, c client.Client, name string, created *atomic.Int64) error {
	children, err := floorChildren(name)
	if err != nil {
		return err
	}
	for _, child := range children {
		if err := c.Create(ctx, child); err != nil {
			return fmt.Errorf("creating %T %s: %w", child, child.GetName(), err)
		}
		created.Add(1)
	}
	return nil
}

// statefulSetConverged names the cluster of a StatefulSet (named like it) that the StatefulSet
// controller has seen at its current spec with every replica Ready: what the operator's
// Available condition waits for.
func statefulSetConverged(obj any) (string, bool) {
	sts, ok := obj.(*appsv1.StatefulSet)
	if !ok || sts.Status.ObservedGeneration < sts.Generation || sts.Status.ReadyReplicas < ptr.Deref(sts.Spec.Replicas, 1) {
		return "", false
	}
	return sts.Name, true
}

// measureFloor runs the floor case on a running cluster without a manager: convergence,
// latencies and steps as the operator case measures them ("Available" read as "StatefulSet
// ready"), the children created per cluster, and every client's writes.
func measureFloor(ctx context.Context, c client.Client, admin *rest.Config, bc benchCase, s settings, res *result) error {
	baseAPI, _ := scrapeAPIServer(ctx, admin)
	tr, err := startTracker(ctx, admin, bc.N, &appsv1.StatefulSet{}, statefulSetConverged)
	if err != nil {
		return err
	}
	defer tr.stop()
	logf("floor: creating %d DatabaseClusters and, with %d goroutines, their children; no operator", bc.N, bc.Concurrency)
	waitErr := converge(ctx, c, admin, nil, bc, s, res, tr, func() (err error) {
		res.OperatorWrites, err = createFloor(ctx, c, bc.N, bc.Concurrency, tr)
		return err
	})
	convAPI, _ := scrapeAPIServer(ctx, admin)
	res.WritesPerCluster = float64(res.OperatorWrites) / float64(bc.N)
	res.SystemWrites = systemWrites(convAPI) - systemWrites(baseAPI)
	logf("floor: converged in %.1fs (p50 %.1fs, p99 %.1fs)", res.ConvergenceSec, res.LatencyP50Sec, res.LatencyP99Sec)
	return waitErr
}
