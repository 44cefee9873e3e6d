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

package operator_test

import (
	"context"
	"net/http"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/operator"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// wire records the media types of every request a client sends, by method and path (without
// the query).
type wire struct {
	mu   sync.Mutex
	sent map[string][2]string // "POST /api/v1/namespaces/x/services" → {Content-Type, Accept}
}

func (w *wire) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		w.mu.Lock()
		w.sent[req.Method+" "+req.URL.Path] = [2]string{req.Header.Get("Content-Type"), req.Header.Get("Accept")}
		w.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// headers returns the Content-Type and Accept headers last sent with method to path, nil when
// no request was.
func (w *wire) headers(method, path string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	h, ok := w.sent[method+" "+path]
	if !ok {
		return nil
	}
	return h[:]
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// The manager's clients speak protobuf, the API server's cheapest format, for every built-in
// kind: its client and cache (controller-runtime picks protobuf where the config names no
// content type, as NewManager leaves it) and its events client (client-go's generated clients
// ask for protobuf themselves). Custom resources have no protobuf form and travel as JSON.
var _ = Describe("The manager's wire format", Ordered, Label("integration"), func() {
	env := testenv.StartInBeforeAll(func(ctrl.Manager) error { return nil })
	const ns = "default"

	It("is protobuf for built-in kinds and events, JSON for custom resources", func(ctx SpecContext) {
		w := &wire{sent: map[string][2]string{}}
		cfg := env.Config()
		cfg.Wrap(w.wrap)
		mgr, stopLock, err := operator.NewManager(cfg, operator.Settings{MetricsAddr: "0", ProbeAddr: "0", QPS: 50, Burst: 100})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(stopLock)
		base, err := operator.NewReconcilerBase(mgr, 1)
		Expect(err).NotTo(HaveOccurred())
		mgrCtx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- mgr.Start(mgrCtx) }()
		DeferCleanup(func() { cancel(); Expect(<-done).To(Succeed()) })

		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "wire", Namespace: ns},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
		}
		Expect(base.Create(ctx, svc)).To(Succeed())
		Expect(base.Create(ctx, &echov1alpha1.Echo{
			ObjectMeta: metav1.ObjectMeta{Name: "wire", Namespace: ns},
			Spec:       echov1alpha1.EchoSpec{Message: "wire"},
		})).To(Succeed())
		Expect(base.List(ctx, &corev1.PodList{}, client.InNamespace(ns))).To(Succeed())
		base.Recorder.Eventf(svc, nil, corev1.EventTypeNormal, "Wire", "Test", "the wire format")

		protobuf := HaveExactElements(runtime.ContentTypeProtobuf, HavePrefix(runtime.ContentTypeProtobuf))
		Expect(w.headers("POST", "/api/v1/namespaces/default/services")).To(protobuf, "a Service created")
		Expect(w.headers("GET", "/api/v1/pods")).To(HaveExactElements("", HavePrefix(runtime.ContentTypeProtobuf)),
			"the cache's list and watch of pods")
		Expect(w.headers("POST", "/apis/echo.seed1b407122.io/v1alpha1/namespaces/default/echoes")).To(
			HaveExactElements(runtime.ContentTypeJSON, HavePrefix(runtime.ContentTypeJSON)), "an Echo created")
		Eventually(func() []string { return w.headers("POST", "/apis/events.k8s.io/v1/namespaces/default/events") }).
			Should(protobuf, "an event recorded")
	})
})
