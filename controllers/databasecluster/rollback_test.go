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
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
)

// stsOption changes rollbackSts.
type stsOption func(*appsv1.StatefulSet)

// rollbackSts is rolloutSts (rolling from db-old to db-new) whose template hash is "spec-hash",
// changed by opts.
func rollbackSts(opts ...stsOption) *appsv1.StatefulSet {
	sts := rolloutSts()
	sts.Annotations = map[string]string{specs.TemplateHashAnnotation: "spec-hash"}
	for _, o := range opts {
		o(sts)
	}
	return sts
}

func rolledBackFrom(hash string) stsOption {
	return func(sts *appsv1.StatefulSet) {
		sts.Annotations[specs.RolledBackFromAnnotation] = hash
		sts.Annotations[specs.RolledBackToAnnotation] = "db-old"
	}
}

func notObserved(sts *appsv1.StatefulSet) { sts.Status.ObservedGeneration = 1 }

func rolledOut(sts *appsv1.StatefulSet) { sts.Status.CurrentRevision = sts.Status.UpdateRevision }

func firstRevision(sts *appsv1.StatefulSet) { sts.Status.CurrentRevision = "" }

// stuckOf is a stuck member db-2 of revision.
func stuckOf(revision string) *stuckMember {
	return &stuckMember{pod: "db-2", uid: "uid-2", revision: revision, detail: "container database CrashLoopBackOff (last exit code 1)"}
}

var _ = Describe("Automatic rollback", Label("unit"), func() {
	DescribeTable("what phase 5 does (decideRollback)",
		func(autoRollback bool, live *appsv1.StatefulSet, desiredHash string, stuck *stuckMember, want rollbackStep) {
			Expect(decideRollback(autoRollback, cachecfg.ViewStatefulSet(live), desiredHash, stuck)).To(Equal(want))
		},
		Entry("the spec's update revision is stuck: roll back", true, rollbackSts(), "spec-hash", stuckOf("db-new"), rollBack),
		Entry("autoRollback off: only reported", false, rollbackSts(), "spec-hash", stuckOf("db-new"), applySpec),
		Entry("nothing stuck", true, rollbackSts(), "spec-hash", nil, applySpec),
		Entry("no StatefulSet yet", true, nil, "spec-hash", stuckOf("db-new"), applySpec),
		Entry("the spec asks for another template since: apply it, no rollback", true, rollbackSts(), "fixed-hash",
			stuckOf("db-new"), applySpec),
		Entry("the stuck member is of an older revision (the replacement's business)", true, rollbackSts(), "spec-hash",
			stuckOf("db-old"), applySpec),
		Entry("the StatefulSet controller has not observed the generation: its revisions are not the spec's yet", true,
			rollbackSts(notObserved), "spec-hash", stuckOf("db-new"), applySpec),
		Entry("the first revision is stuck: nothing earlier to return to", true, rollbackSts(firstRevision), "spec-hash",
			stuckOf("db-new"), applySpec),
		Entry("current is the update revision: nothing earlier to return to", true, rollbackSts(rolledOut), "spec-hash",
			stuckOf("db-new"), applySpec),
		Entry("rolled back for this template: held, once per template (no loop)", true,
			rollbackSts(rolledBackFrom("spec-hash")), "spec-hash", stuckOf("db-old"), holdRollback),
		Entry("rolled back, then the spec asks for another template: released", true,
			rollbackSts(rolledBackFrom("spec-hash")), "fixed-hash", nil, releaseRollback),
		Entry("rolled back, then autoRollback turned off: released, the spec's template applied", false,
			rollbackSts(rolledBackFrom("spec-hash")), "spec-hash", nil, releaseRollback),
		Entry("released before (annotations cleared): decided afresh", true,
			rollbackSts(rolledBackFrom("")), "spec-hash", stuckOf("db-new"), rollBack),
	)

	It("reads the pod template a StatefulSet's ControllerRevision records (revisionPodTemplate)", func() {
		template := corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: specs.ContainerName, Image: "db:good"}}},
		}
		data, err := json.Marshal(map[string]any{"spec": map[string]any{"template": template, "$patch": "replace"}})
		Expect(err).NotTo(HaveOccurred())
		got, err := revisionPodTemplate(&appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "db-old"},
			Data: runtime.RawExtension{Raw: data}})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(template))

		_, err = revisionPodTemplate(&appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "db-x"},
			Data: runtime.RawExtension{Raw: []byte(`{"spec":{}}`)}})
		Expect(err).To(MatchError("revision db-x records no pod template"))
	})

	It("says Progressing False RolledBack while held, and nothing once released (progressingOfRollback)", func() {
		cond := metav1.Condition{}
		Expect(progressingOfRollback(&cond, cachecfg.ViewStatefulSet(rollbackSts(rolledBackFrom("spec-hash"))))).To(BeTrue())
		Expect(cond).To(Equal(metav1.Condition{Status: metav1.ConditionFalse, Reason: databasev1alpha1.ReasonRolledBack,
			Message: "spec.rollout.autoRollback returned StatefulSet db to revision db-old after the rollout of the spec's " +
				"template got stuck; change the spec to roll forward"}))
		Expect(progressingOfRollback(&metav1.Condition{}, cachecfg.ViewStatefulSet(rollbackSts(rolledBackFrom(""))))).To(BeFalse())
		Expect(progressingOfRollback(&metav1.Condition{}, cachecfg.ViewStatefulSet(rollbackSts()))).To(BeFalse())
	})
})
