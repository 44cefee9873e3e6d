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

package admission

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/echo"
	"github.com/seed1b407122/database-operator/controllers/voteconfig"
	"github.com/seed1b407122/database-operator/test/harness/fuzzspec"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

// seedCorpus is the committed seed corpus of one builder fuzz target: the decoder its inputs go
// through, and the children the controller builds from an admitted resource.
type seedCorpus struct {
	pkg, target string
	decode      any
	// build returns the children of the stored resource, or buildErr when the controller would
	// build none and report the spec instead; wantRefusedField is then the field the API
	// server must name when it refuses the child.
	build func(obj client.Object) (children []client.Object, wantRefusedField string, err error)
}

// The seed corpora of the builder fuzz targets (the drift targets hold the same specs).
var seedCorpora = []seedCorpus{
	{
		pkg: "controllers/databasecluster", target: "FuzzBuildChildren", decode: fuzzspec.DatabaseCluster,
		build: func(obj client.Object) ([]client.Object, string, error) {
			dc := obj.(*databasev1alpha1.DatabaseCluster)
			sts, err := specs.BuildStatefulSet(dc, specs.Inputs{})
			if err != nil {
				return nil, "", err
			}
			children := []client.Object{sts, specs.BuildHeadlessService(dc), specs.BuildClientService(dc)}
			if dc.PDBEnabled() {
				children = append(children, specs.BuildPodDisruptionBudget(dc))
			}
			return children, "", nil
		},
	},
	{
		pkg: "controllers/echo", target: "FuzzBuildJob", decode: fuzzspec.Echo,
		build: func(obj client.Object) ([]client.Object, string, error) {
			return []client.Object{echo.BuildJob(obj.(*echov1alpha1.Echo), testImage)}, "", nil
		},
	},
	{
		pkg: "controllers/echo", target: "FuzzBuildCronJob", decode: fuzzspec.ScheduledEcho,
		build: func(obj client.Object) ([]client.Object, string, error) {
			s := obj.(*echov1alpha1.ScheduledEcho)
			children := []client.Object{echo.BuildCronJob(s, testImage)}
			// The controller checks the schedule with the CronJob API's parser before it
			// writes: what the parser refuses is reported, and the API server refuses it too.
			if _, err := cron.ParseStandard(s.Spec.Schedule); err != nil {
				return children, "spec.schedule", nil
			}
			return children, "", nil
		},
	},
	{
		pkg: "controllers/voteconfig", target: "FuzzBuildConfigMap", decode: fuzzspec.VoteConfig,
		build: func(obj client.Object) ([]client.Object, string, error) {
			cm, err := voteconfig.BuildConfigMap(obj.(*votingv1alpha1.VoteConfig))
			return []client.Object{cm}, "", err
		},
	},
}

// The seed corpora of the fuzz targets replayed against a real kube-apiserver: every seed spec
// is created, and the API server must agree with the in-process admission the fuzz targets
// filter their inputs with (fuzzspec.Admitter); for every admitted one, the children the
// controller builds from the stored resource must pass the API server's validation of their
// kind, by a server-side dry-run create.
var _ = Describe("Fuzz seed corpora", Ordered, Label("integration"), func() {
	var (
		k8s      client.Client
		admitter *fuzzspec.Admitter
	)

	// No controller runs: the children are built here and only dry-run.
	env := testenv.StartInBeforeAll(func(ctrl.Manager) error { return nil })
	BeforeAll(func() {
		var err error
		admitter, err = fuzzspec.NewAdmitter()
		Expect(err).NotTo(HaveOccurred())
		k8s = env.Client
	})

	for _, corpus := range seedCorpora {
		It(fmt.Sprintf("%s/testdata/fuzz/%s: the API server admits what the fuzz target admits, and every child built from an admitted spec passes its validation", corpus.pkg, corpus.target),
			func(ctx SpecContext) {
				seeds, err := fuzzspec.Corpus(corpus.pkg, corpus.target)
				Expect(err).NotTo(HaveOccurred())
				Expect(seeds).NotTo(BeEmpty())
				var admitted, refused, gaps, dryRuns int
				for _, seed := range seeds {
					decoded, err := fuzzspec.Call(corpus.decode, seed.Args)
					Expect(err).NotTo(HaveOccurred(), seed.File)
					obj, ok := decoded.(client.Object)
					if !ok || reflect.ValueOf(obj).IsNil() {
						continue // a quantity that does not parse: the typed API cannot hold it
					}
					switch replayed := replaySeed(ctx, k8s, admitter, corpus, seed, obj); replayed {
					case seedRefused:
						refused++
					case seedChildRefused:
						gaps++
					default:
						admitted++
						dryRuns += replayed
					}
				}
				GinkgoWriter.Printf("%s: %d seeds admitted (%d children dry-run created), %d refused, %d admitted with a child refused (%s*)\n",
					corpus.target, admitted, dryRuns, refused, gaps, fuzzspec.ChildRefusedPrefix)
				Expect(admitted).To(BeNumerically(">", 0))
			})
	}
})

// What replaySeed returns when it dry-ran no child.
const (
	seedRefused      = -1 // the API server refused the resource, as the in-process admission did
	seedChildRefused = -2 // admitted, and a child refused as the seed's name says
)

// replaySeed creates the resource of one seed in a namespace of its own and dry-runs its
// children. It returns the number of children dry-run, seedRefused or seedChildRefused.
func replaySeed(ctx context.Context, k8s client.Client, admitter *fuzzspec.Admitter, corpus seedCorpus,
	seed fuzzspec.Seed, obj client.Object,
) int {
	GinkgoHelper()
	name := corpus.target + "/" + seed.File
	refusedHere, err := admitter.Admit(obj.DeepCopyObject().(client.Object))
	Expect(err).NotTo(HaveOccurred(), name)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "seed-"}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	obj.SetNamespace(ns.Name)
	obj.SetUID("")
	err = k8s.Create(ctx, obj, client.FieldValidation("Strict"))
	if len(refusedHere) > 0 {
		Expect(err).To(HaveOccurred(), "%s: the fuzz target refuses it (%v), the API server admitted it", name, refusedHere.ToAggregate())
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: %v", name, err)
		return seedRefused
	}
	Expect(err).NotTo(HaveOccurred(), "%s: the fuzz target admits it, the API server refused it", name)

	// obj is now the stored resource, with the API server's defaults and UID.
	children, refusedField, err := corpus.build(obj)
	Expect(err).NotTo(HaveOccurred(), "%s: an admitted spec does not build", name)
	if strings.HasPrefix(seed.File, fuzzspec.ChildRefusedPrefix) {
		// A known gap of admission: the CRD does not check the field, the API server refuses the
		// child, and the controller reports Degraded (a terminal error). The seed stays so that
		// closing the gap shows here (the resource is then refused: rename the seed).
		var refusedChildren int
		for _, c := range children {
			if err := k8s.Create(ctx, c, client.DryRunAll); err != nil {
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: %v", name, err)
				refusedChildren++
			}
		}
		Expect(refusedChildren).To(BeNumerically(">", 0), "%s: every child passes: drop the prefix %s", name, fuzzspec.ChildRefusedPrefix)
		return seedChildRefused
	}
	for _, c := range children {
		err := k8s.Create(ctx, c, client.DryRunAll)
		if refusedField != "" {
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: %T %s: want Invalid on %s, got %v", name, c, c.GetName(), refusedField, err)
			Expect(err.Error()).To(ContainSubstring(refusedField), name)
			continue
		}
		Expect(err).NotTo(HaveOccurred(), "%s: the API server refuses the %T %s built from an admitted spec", name, c, c.GetName())
	}
	return len(children)
}
