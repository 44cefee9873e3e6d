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
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/cachecfg"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/certs"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// The pods' inputs: the ConfigMap of inline config files (owned, cached by label), the user's
// ConfigMap (read by name), and the credentials Secrets, read by name and never listed or
// watched: get to read them, create to generate one, patch to release it on deletion.
// +kubebuilder:rbac:groups=core,resources=configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;create;patch

// passwordLength and passwordAlphabet make a generated password: 32 letters and digits, about
// 190 bits from crypto/rand, with no character a shell, a URL or a connection string quotes.
const (
	passwordLength   = 32
	passwordAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
)

// inputMissingError is an input of the pods that is not there: nothing the operator can fix, and
// no pod is changed until the user provides it. Degraded carries its message.
type inputMissingError struct{ message string }

func (e *inputMissingError) Error() string { return e.message }

// isInputMissing says whether err is an inputMissingError.
func isInputMissing(err error) bool {
	var missing *inputMissingError
	return errors.As(err, &missing)
}

// podInputs is what the inputs phase found: the checksum of the content the pods mount ("" when
// none changes: no config, no TLS) and the serving certificate (nil without spec.tls).
type podInputs struct {
	checksum string
	tls      *servingCertificate
}

// reconcileInputs is the phase of the pod's inputs: it keeps the ConfigMap of inline config
// files, the generated credentials Secret and the cluster's certificates, reads the user's
// ConfigMap or Secrets, and returns the checksum of what the pods mount. An input that is missing
// stops the phases here, so that no pod is rolled for it.
func (r *Reconciler) reconcileInputs(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, noted *changes) (podInputs, error) {
	files, err := r.reconcileConfig(ctx, dc, noted)
	if err != nil {
		return podInputs{}, err
	}
	if err := r.reconcileCredentials(ctx, dc, noted); err != nil {
		return podInputs{}, err
	}
	tls, err := r.reconcileTLS(ctx, dc, noted)
	if err != nil {
		return podInputs{}, err
	}
	if err := r.reconcileAgentTLS(ctx, dc, noted); err != nil {
		return podInputs{}, err
	}
	return podInputs{checksum: inputsChecksum(files, tls), tls: tls}, nil
}

// inputsChecksum is the checksum of the config files and the certificate the pods mount, "" when
// there are neither (a cluster without them keeps the template it had).
func inputsChecksum(files map[string][]byte, tls *servingCertificate) string {
	if files == nil && tls == nil {
		return ""
	}
	content := map[string][]byte{}
	for name, data := range files {
		content["config/"+name] = data
	}
	if tls != nil {
		for name, data := range tls.content {
			content["tls/"+name] = data
		}
	}
	return certs.ChecksumMap(content)
}

// reconcileConfig keeps the ConfigMap of inline files, or reads the user's, and returns the files
// (nil without spec.config).
func (r *Reconciler) reconcileConfig(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, noted *changes) (map[string][]byte, error) {
	config := dc.Spec.Config
	if config == nil {
		return nil, nil
	}
	if config.ConfigMapRef == nil {
		err := ensureChild(ctx, r, "ConfigMap", specs.BuildConfigMap(dc), &corev1.ConfigMap{}, child.ConfigMapData, noted)
		return configFiles(config.Files, nil), err
	}
	// The user's ConfigMap is read from the API server: the cache holds only the operator's.
	cm := &corev1.ConfigMap{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: config.ConfigMapRef.Name}, cm)
	if apierrors.IsNotFound(err) {
		return nil, &inputMissingError{fmt.Sprintf(
			"spec.config.configMapRef names the ConfigMap %s, which does not exist in namespace %s: no pod is changed until it does",
			config.ConfigMapRef.Name, dc.Namespace)}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the ConfigMap %s of spec.config: %w", config.ConfigMapRef.Name, err)
	}
	return configFiles(cm.Data, cm.BinaryData), nil
}

// configFiles are the files of a ConfigMap's data, as bytes.
func configFiles(data map[string]string, binary map[string][]byte) map[string][]byte {
	files := make(map[string][]byte, len(data)+len(binary))
	for name, content := range data {
		files[name] = []byte(content)
	}
	maps.Copy(files, binary)
	return files
}

// reconcileCredentials checks the user's credentials Secret, or generates NAME-credentials once.
// Secrets are read from the API server by name, never cached or listed: the operator reads only
// the Secrets of spec.credentials.
func (r *Reconciler) reconcileCredentials(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, noted *changes) error {
	if dc.Spec.Credentials == nil {
		return nil
	}
	name := dc.CredentialsSecretName()
	secret := &corev1.Secret{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: name}, secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading the Secret %s of spec.credentials: %w", name, err)
	}
	if dc.Spec.Credentials.SecretName != "" {
		return checkUserCredentials(dc, secret, err)
	}
	if apierrors.IsNotFound(err) {
		return r.generateCredentials(ctx, dc, noted)
	}
	// Never overwritten: only the ownership is checked (a Secret of that name the cluster does
	// not control is a conflict, reported and left as it is).
	_, _, err = child.Ensure(ctx, secretReader{r.Client, r.APIReader}, r.APIReader, buildCredentialsMeta(dc), &corev1.Secret{}, credentialsSpec)
	return err
}

// checkUserCredentials reports a user's credentials Secret that is missing or lacks a key.
func checkUserCredentials(dc *databasev1alpha1.DatabaseCluster, secret *corev1.Secret, getErr error) error {
	name := dc.Spec.Credentials.SecretName
	if apierrors.IsNotFound(getErr) {
		return &inputMissingError{fmt.Sprintf(
			"spec.credentials.secretName names the Secret %s, which does not exist in namespace %s: no pod is changed until it does",
			name, dc.Namespace)}
	}
	for _, key := range []string{databasev1alpha1.UsernameKey, databasev1alpha1.PasswordKey} {
		if len(secret.Data[key]) == 0 {
			return &inputMissingError{fmt.Sprintf("the Secret %s of spec.credentials has no key %s: it needs username and password", name, key)}
		}
	}
	return nil
}

// generateCredentials creates NAME-credentials with a new password, only for a cluster that has
// no StatefulSet yet: a cluster that already ran initialized its data with the password of a
// Secret that is now gone, and a new password would not open it.
func (r *Reconciler) generateCredentials(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, noted *changes) error {
	sts, err := r.cachedStatefulSet(ctx, dc)
	if err == nil && sts != nil {
		return &inputMissingError{fmt.Sprintf(
			"the Secret %s that holds the database's password is gone: restore it (the data was initialized with that password), or name a Secret of yours in spec.credentials.secretName; the operator does not generate a new password for a cluster that already ran",
			dc.GeneratedCredentialsName())}
	}
	if err != nil {
		return err
	}
	password, err := randomPassword()
	if err != nil {
		return err
	}
	desired := buildCredentialsMeta(dc)
	desired.Type = corev1.SecretTypeBasicAuth
	desired.Data = map[string][]byte{
		databasev1alpha1.UsernameKey: []byte(dc.Spec.Credentials.Username),
		databasev1alpha1.PasswordKey: []byte(password),
		databasev1alpha1.HostKey:     []byte(dc.ClientServiceName() + "." + dc.Namespace + ".svc"),
		databasev1alpha1.PortKey:     []byte(strconv.Itoa(int(dc.DatabasePort()))),
	}
	_, result, err := child.Ensure(ctx, secretReader{r.Client, r.APIReader}, r.APIReader, desired, &corev1.Secret{}, credentialsSpec)
	if err != nil {
		return err
	}
	noted.ensured(result, "Secret", desired.Name)
	return nil
}

// buildCredentialsMeta is the generated credentials Secret without its data.
func buildCredentialsMeta(dc *databasev1alpha1.DatabaseCluster) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: specs.ChildMeta(dc, dc.GeneratedCredentialsName())}
}

// credentialsSpec never changes a credentials Secret's data: the database keeps the password it
// was initialized with.
var credentialsSpec = child.Spec[*corev1.Secret]{
	InSync: func(_, _ *corev1.Secret) bool { return true },
	Merge:  func(_, _ *corev1.Secret) {},
}

// secretReader is the client for the credentials Secret: reads go to the API server, so that no
// informer of every Secret is started.
type secretReader struct {
	client.Client
	reader client.Reader
}

// Get reads from the API server.
func (s secretReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return s.reader.Get(ctx, key, obj, opts...)
}

// randomPassword is passwordLength characters of passwordAlphabet from crypto/rand.
func randomPassword() (string, error) {
	password := make([]byte, passwordLength)
	for i := range password {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(passwordAlphabet))))
		if err != nil {
			return "", fmt.Errorf("generating a password: %w", err)
		}
		password[i] = passwordAlphabet[n.Int64()]
	}
	return string(password), nil
}

// releaseCredentials keeps the generated credentials Secret when the cluster is deleted and its
// data kept (whenDeleted Retain): it removes the cluster's owner reference, so that garbage
// collection leaves the Secret with the claims. A Secret the cluster does not control is not
// touched. It says whether it released one.
func (r *Reconciler) releaseCredentials(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) (bool, error) {
	if dc.Spec.Credentials == nil || dc.Spec.Credentials.SecretName != "" || dc.WhenDeleted() != databasev1alpha1.RetainPVC {
		return false, nil
	}
	secret := &corev1.Secret{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.GeneratedCredentialsName()}, secret)
	if err != nil || !metav1.IsControlledBy(secret, dc) {
		return false, client.IgnoreNotFound(err)
	}
	released := secret.DeepCopy()
	released.OwnerReferences = slices.DeleteFunc(released.OwnerReferences, func(ref metav1.OwnerReference) bool {
		return ref.UID == dc.UID
	})
	if err := r.Patch(ctx, released, client.MergeFrom(secret)); err != nil {
		return false, fmt.Errorf("releasing the Secret %s from the cluster: %w", secret.Name, err)
	}
	return true, nil
}

// keptNote tells in the deletion event that the credentials Secret was kept.
func keptNote(kept bool, dc *databasev1alpha1.DatabaseCluster) string {
	if !kept {
		return ""
	}
	return "; the Secret " + dc.GeneratedCredentialsName() + " is kept with the claims"
}

// configMapRefIndex indexes the cached DatabaseClusters by the ConfigMap spec.config.configMapRef
// names, so that a change of that ConfigMap finds its clusters without a list of all of them.
const configMapRefIndex = "spec.config.configMapRef.name"

// indexConfigMapRef is the index function of configMapRefIndex.
func indexConfigMapRef(obj client.Object) []string {
	dc, ok := obj.(*databasev1alpha1.DatabaseCluster)
	if !ok || dc.Spec.Config == nil || dc.Spec.Config.ConfigMapRef == nil {
		return nil
	}
	return []string{dc.Spec.Config.ConfigMapRef.Name}
}

// watchInputs watches the metadata of every ConfigMap, in a cache of its own
// (cachecfg.InputsOptions), and queues the clusters whose spec.config names the one that
// changed: its content is then read again and a new checksum rolls the pods.
func (r *Reconciler) watchInputs(mgr ctrl.Manager, c controller.Controller) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &databasev1alpha1.DatabaseCluster{},
		configMapRefIndex, indexConfigMapRef); err != nil {
		return fmt.Errorf("indexing DatabaseClusters by %s: %w", configMapRefIndex, err)
	}
	inputs, err := cache.New(mgr.GetConfig(), cachecfg.InputsOptions(r.Namespaces, mgr.GetScheme(), mgr.GetRESTMapper()))
	if err != nil {
		return fmt.Errorf("creating the cache of the user's ConfigMaps: %w", err)
	}
	if err := mgr.Add(inputs); err != nil {
		return err
	}
	configMaps := &metav1.PartialObjectMetadata{}
	configMaps.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return c.Watch(source.Kind(inputs, configMaps,
		handler.TypedEnqueueRequestsFromMapFunc(r.clustersNaming),
		predicate.TypedResourceVersionChangedPredicate[*metav1.PartialObjectMetadata]{}))
}

// clustersNaming are the clusters of cm's namespace whose spec.config names cm.
func (r *Reconciler) clustersNaming(ctx context.Context, cm *metav1.PartialObjectMetadata) []reconcile.Request {
	clusters := &databasev1alpha1.DatabaseClusterList{}
	if err := r.List(ctx, clusters, client.InNamespace(cm.Namespace), client.MatchingFields{configMapRefIndex: cm.Name}); err != nil {
		logf.FromContext(ctx).Error(err, "Listing the clusters that name a ConfigMap", "configMap", cm.Name)
		return nil
	}
	requests := make([]reconcile.Request, len(clusters.Items))
	for i := range clusters.Items {
		requests[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&clusters.Items[i])}
	}
	return requests
}
