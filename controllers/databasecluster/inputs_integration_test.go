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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

func withConfigFiles(files map[string]string) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) {
		dc.Spec.Config = &databasev1alpha1.ConfigSpec{Files: files}
	}
}

func withConfigMapRef(name string) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) {
		dc.Spec.Config = &databasev1alpha1.ConfigSpec{ConfigMapRef: &databasev1alpha1.ConfigMapReference{Name: name}}
	}
}

func withCredentials(spec databasev1alpha1.CredentialsSpec) clusterOption {
	return func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Credentials = &spec }
}

var _ = Describe("DatabaseCluster config files and credentials", Ordered, Label("integration"), func() {
	k8s := testenv.StartInBeforeAll(setupController)
	clusters := testenv.Kind[*databasev1alpha1.DatabaseCluster, *appsv1.StatefulSet]{
		Env: k8s, Name: "DatabaseCluster", ChildName: (*databasev1alpha1.DatabaseCluster).StatefulSetName,
	}
	checksum := func(sts *appsv1.StatefulSet) string {
		return sts.Spec.Template.Annotations[databasev1alpha1.InputsChecksumAnnotation]
	}
	// withoutChecksum is the pod template of sts without the checksum: what must not change
	// when only the content of an input does.
	withoutChecksum := func(sts *appsv1.StatefulSet) corev1.PodTemplateSpec {
		template := *sts.Spec.Template.DeepCopy()
		delete(template.Annotations, databasev1alpha1.InputsChecksumAnnotation)
		return template
	}

	It("keeps inline files in NAME-config, mounts them, and rolls the pods by checksum when they change", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "config-")), withConfigFiles(map[string]string{"db.conf": "a = 1"}))
		sts := clusters.Create(ctx, dc)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		cm := &corev1.ConfigMap{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: "db-config"}, cm)).To(Succeed())
		Expect(cm.Data).To(Equal(map[string]string{"db.conf": "a = 1"}))
		Expect(metav1.IsControlledBy(cm, dc)).To(BeTrue())
		first := checksum(sts)
		Expect(first).To(HaveLen(64))
		pod := sts.Spec.Template.Spec
		Expect(pod.Volumes).To(ContainElement(corev1.Volume{Name: "config", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db-config"}, DefaultMode: ptr.To[int32](0o644)},
		}}))
		Expect(pod.Containers[0].VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "config", MountPath: "/etc/database/config", ReadOnly: true}))

		clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Config.Files["db.conf"] = "a = 2" })
		Eventually(func(g Gomega) string { return checksum(clusters.Child(ctx, dc)(g)) }).ShouldNot(Equal(first))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
		Expect(cm.Data).To(Equal(map[string]string{"db.conf": "a = 2"}))
		Expect(withoutChecksum(clusters.Child(ctx, dc)(Default))).To(Equal(withoutChecksum(sts)), "only the checksum changes")
	})

	It("waits for a missing ConfigMap of the user's without making a pod, then rolls the pods when its content changes", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "configref-")), withConfigMapRef("db-settings"))
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(Equal([]string{"True", "InputMissing",
			"spec.config.configMapRef names the ConfigMap db-settings, which does not exist in namespace " + dc.Namespace +
				": no pod is changed until it does"}))
		Expect(apierrors.IsNotFound(k8s.Get(ctx, clusters.ChildKey(dc), &appsv1.StatefulSet{}))).To(BeTrue(), "no StatefulSet before the input exists")

		user := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: dc.Namespace, Name: "db-settings"}, Data: map[string]string{"db.conf": "a = 1"}}
		Expect(k8s.Create(ctx, user)).To(Succeed())
		var sts *appsv1.StatefulSet
		Eventually(func(g Gomega) { sts = clusters.Child(ctx, dc)(g) }).Should(Succeed())
		first := checksum(sts)
		Expect(first).To(HaveLen(64))

		testenv.Update(ctx, k8s, user, func(cm *corev1.ConfigMap) { cm.Data["db.conf"] = "a = 2" })
		Eventually(func(g Gomega) string { return checksum(clusters.Child(ctx, dc)(g)) }).ShouldNot(Equal(first))
		Expect(withoutChecksum(clusters.Child(ctx, dc)(Default))).To(Equal(withoutChecksum(sts)), "only the checksum changes")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(user), user)).To(Succeed())
		Expect(user.OwnerReferences).To(BeEmpty(), "the user's ConfigMap is never taken")
		Expect(user.Labels).To(BeEmpty())
	})

	It("generates NAME-credentials once, never overwrites it, and gives it to the database container", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "creds-")), withCredentials(databasev1alpha1.CredentialsSpec{}))
		sts := clusters.Create(ctx, dc)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		secret := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: "db-credentials"}, secret)).To(Succeed())
		Expect(secret.Type).To(Equal(corev1.SecretTypeBasicAuth))
		Expect(metav1.IsControlledBy(secret, dc)).To(BeTrue())
		Expect(string(secret.Data["username"])).To(Equal("admin"))
		Expect(string(secret.Data["password"])).To(MatchRegexp("^[a-zA-Z0-9]{32}$"))
		Expect(string(secret.Data["host"])).To(Equal("db." + dc.Namespace + ".svc"))
		Expect(string(secret.Data["port"])).To(Equal("9000"))

		db := sts.Spec.Template.Spec.Containers[0]
		Expect(db.Env[:2]).To(Equal([]corev1.EnvVar{
			{Name: "DATABASE_USERNAME", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "db-credentials"}, Key: "username"}}},
			{Name: "DATABASE_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "db-credentials"}, Key: "password"}}},
		}))
		Expect(db.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "credentials", MountPath: "/etc/database/credentials", ReadOnly: true}))
		Expect(checksum(sts)).To(BeEmpty(), "the credentials never change, so they need no checksum")

		// A password changed by hand (the user rotated it in the database too) is kept.
		testenv.Update(ctx, k8s, secret, func(s *corev1.Secret) { s.Data["password"] = []byte("rotated-by-hand") })
		clusters.Update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) { dc.Spec.Image = "registry.example/db:2.0" })
		Eventually(func(g Gomega) string { return clusters.Child(ctx, dc)(g).Spec.Template.Spec.Containers[0].Image }).Should(Equal("registry.example/db:2.0"))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
		Expect(string(secret.Data["password"])).To(Equal("rotated-by-hand"))
	})

	It("never takes a Secret named NAME-credentials it does not control: ChildConflict, left as it is", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "creds-held-")
		held := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-credentials"},
			Data: map[string][]byte{"username": []byte("someone"), "password": []byte("else")}}
		Expect(k8s.Create(ctx, held)).To(Succeed())
		dc := newCluster("db", withNamespace(ns), withCredentials(databasev1alpha1.CredentialsSpec{}))
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(HaveExactElements("True", "ChildConflict", ContainSubstring("Secret db-credentials")))
		after := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(held), after)).To(Succeed())
		Expect(after.Data).To(Equal(held.Data))
		Expect(after.OwnerReferences).To(BeEmpty())
		Expect(after.ResourceVersion).To(Equal(held.ResourceVersion))
	})

	It("uses a Secret of the user's, and says which key it lacks", func(ctx SpecContext) {
		ns := k8s.Namespace(ctx, "creds-user-")
		user := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "original"},
			Data: map[string][]byte{"username": []byte("app")}}
		Expect(k8s.Create(ctx, user)).To(Succeed())
		dc := newCluster("db", withNamespace(ns), withCredentials(databasev1alpha1.CredentialsSpec{SecretName: "original"}))
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		Eventually(k8s.Condition(ctx, dc, "Degraded")).Should(Equal([]string{"True", "InputMissing",
			"the Secret original of spec.credentials has no key password: it needs username and password"}))
		testenv.Update(ctx, k8s, user, func(s *corev1.Secret) { s.Data["password"] = []byte("p") })
		sts := clusters.Child(ctx, dc)
		Eventually(func(g Gomega) string { return sts(g).Spec.Template.Spec.Volumes[0].Secret.SecretName }).Should(Equal("original"))
		Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-credentials"}, &corev1.Secret{}))).To(BeTrue())
	})

	It("keeps the generated Secret with the data when the cluster is deleted with whenDeleted Retain", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "creds-keep-")), withCredentials(databasev1alpha1.CredentialsSpec{Username: "app"}))
		clusters.Create(ctx, dc)
		key := client.ObjectKey{Namespace: dc.Namespace, Name: "db-credentials"}
		Expect(k8s.Get(ctx, key, &corev1.Secret{})).To(Succeed())
		Expect(k8s.Delete(ctx, dc)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)) }).Should(BeTrue())
		secret := &corev1.Secret{}
		Expect(k8s.Get(ctx, key, secret)).To(Succeed())
		Expect(secret.OwnerReferences).To(BeEmpty(), "released: garbage collection leaves it")
		Expect(string(secret.Data["username"])).To(Equal("app"))
	})

	It("leaves the generated Secret to garbage collection with whenDeleted Delete", func(ctx SpecContext) {
		dc := newCluster("db", withNamespace(k8s.Namespace(ctx, "creds-drop-")), withCredentials(databasev1alpha1.CredentialsSpec{}),
			withWhenDeleted(databasev1alpha1.DeletePVC))
		clusters.Create(ctx, dc)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)).To(Succeed())
		uid := dc.UID
		Expect(k8s.Delete(ctx, dc)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(dc), dc)) }).Should(BeTrue())
		secret := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: "db-credentials"}, secret)).To(Succeed())
		Expect(secret.OwnerReferences).To(HaveLen(1))
		Expect(secret.OwnerReferences[0].UID).To(Equal(uid), "envtest runs no garbage collector; the owner reference is what lets it delete the Secret")
	})
})
