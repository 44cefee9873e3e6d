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

// Package testenv starts what the envtest specs of every controller need: a real kube-apiserver
// and etcd (envtest, binaries from KUBEBUILDER_ASSETS) with the operator's CRDs, and a manager
// with the production cache settings running the controller under test.
//
// It is also what the specs of every controller share: reading and writing resources in that API
// server (specs.go, Kind), the ownership rule (ownership.go), the operator's metrics
// (metrics.go), and the fixtures of the unit specs (fixtures.go).
//
// It is a harness library: only the controllers' *_test.go files import it (hack/check-layout.sh
// keeps Ginkgo, Gomega and envtest out of the product's code), so the manager never links it.
// Named testenv, not envtest, so as not to shadow controller-runtime's envtest, which it wraps.
package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/seed1b407122/database-operator/api/scheme"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/operator"
	"github.com/seed1b407122/database-operator/test/harness/repodir"
)

// RunSuite runs the Ginkgo specs of a controller's package as the go test t, under the suite
// name: the unit specs (label "unit": builders and conditions, no API server) and the envtest
// specs (label "integration": a real kube-apiserver and etcd).
func RunSuite(t *testing.T, name string) {
	t.Helper()
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, name)
}

// ReconcilerBase returns what the controller under test is given in a manager of an envtest
// environment: the manager's, with two workers so that concurrent reconciles are exercised.
func ReconcilerBase(mgr ctrl.Manager) operator.ReconcilerBase {
	deps, err := operator.NewReconcilerBase(mgr, 2)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return deps
}

// Controller is a Reconciler that registers itself and its watches with a manager.
type Controller interface {
	SetupWithManager(mgr ctrl.Manager) error
}

// StartWith is StartInBeforeAll with the controller that newController returns, given the
// ReconcilerBase: the common case of a suite that runs one controller.
func StartWith[C Controller](newController func(operator.ReconcilerBase) C) *Env {
	return StartInBeforeAll(func(mgr ctrl.Manager) error {
		return newController(ReconcilerBase(mgr)).SetupWithManager(mgr)
	})
}

// stopTimeout bounds how long the manager may take to stop.
const stopTimeout = 30 * time.Second

// Env is a running API server with a manager. It is a client of that API server: its Client
// talks to it directly (no cache), as a user would.
type Env struct {
	client.Client

	env    *envtest.Environment
	cancel context.CancelFunc
	done   chan error
}

// Config is the API server's address and the admin's credentials, for a client or a manager of
// a test's own.
func (e *Env) Config() *rest.Config { return rest.CopyConfig(e.env.Config) }

// StartInBeforeAll registers, in the current Ordered container, a BeforeAll that starts an
// environment with setup (the manager logging to GinkgoWriter) and stops it after the container.
// The returned Env is filled in when the container runs.
func StartInBeforeAll(setup func(ctrl.Manager) error) *Env {
	e := &Env{}
	ginkgo.BeforeAll(func() {
		ctrl.SetLogger(zap.New(zap.WriteTo(ginkgo.GinkgoWriter), zap.UseDevMode(true)))
		started, err := Start(ginkgo.GinkgoWriter, setup)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		*e = *started
		ginkgo.DeferCleanup(e.Stop)
	})
	return e
}

// Start starts the API server, installs the CRDs, creates a manager, lets setup register the
// controller under test with it, and starts it. Progress lines go to log.
func Start(log io.Writer, setup func(ctrl.Manager) error) (*Env, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS must name the directory of kube-apiserver and etcd: run the suite with 'make test'")
	}
	e := &Env{env: &envtest.Environment{
		CRDDirectoryPaths:     []string{crdDirectory()},
		ErrorIfCRDPathMissing: true,
	}}
	// A first reconcile on a loaded 2-core machine (CI runs compiles beside the suites) can take
	// longer than gomega's 1 s default: every envtest suite waits up to 10 s.
	gomega.SetDefaultEventuallyTimeout(10 * time.Second)
	started := time.Now()
	cfg, err := e.env.Start()
	if err != nil {
		// envtest leaves kube-apiserver and etcd running when it fails after starting them
		// (e.g. a CRD the API server refuses): stop them here.
		return nil, errors.Join(fmt.Errorf("starting kube-apiserver and etcd: %w", err), e.env.Stop())
	}
	_, _ = fmt.Fprintf(log, "Started kube-apiserver and etcd in %s\n", time.Since(started).Round(time.Millisecond))
	if err := e.startManager(cfg, setup); err != nil {
		return nil, errors.Join(err, e.env.Stop())
	}
	return e, nil
}

func (e *Env) startManager(cfg *rest.Config, setup func(ctrl.Manager) error) error {
	kinds, err := scheme.New()
	if err != nil {
		return err
	}
	if e.Client, err = client.New(cfg, client.Options{Scheme: kinds}); err != nil {
		return fmt.Errorf("creating the client: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  kinds,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   cachecfg.Options(nil, cachecfg.NewShared()),
		// A suite may start one environment per Describe, each with the same controller; the
		// names must be unique only per manager here.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := setup(mgr); err != nil {
		return fmt.Errorf("setting up the controller: %w", err)
	}
	var ctx context.Context
	ctx, e.cancel = context.WithCancel(context.Background())
	e.done = make(chan error, 1)
	go func() { e.done <- mgr.Start(ctx) }()
	return nil
}

// Stop stops the manager, then the API server and etcd.
func (e *Env) Stop() error {
	var errs []error
	if e.cancel != nil {
		e.cancel()
		select {
		case err := <-e.done:
			errs = append(errs, err)
		case <-time.After(stopTimeout):
			errs = append(errs, fmt.Errorf("the manager did not stop within %s", stopTimeout))
		}
	}
	return errors.Join(append(errs, e.env.Stop())...)
}

// crdDirectory is config/crd/bases of this repository, so that suites in any package use it.
func crdDirectory() string {
	return filepath.Join(repodir.MustRoot(), "config", "crd", "bases")
}
