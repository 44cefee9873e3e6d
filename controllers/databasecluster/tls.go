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
	"bytes"
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/databasecluster/specs"
	"github.com/seed1b407122/database-operator/controllers/internal/certs"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
)

// userTLSRecheck is how often a cluster that serves a Secret of the user's reads it again: the
// operator does not watch Secrets (it only reads those it is told to, by name), and a
// cert-manager renewal, 30 days ahead by default, can wait that long.
const userTLSRecheck = 10 * time.Minute

// servingCertificate is what the TLS phase found: the content the pods mount (for the checksum),
// when the certificate expires, and when to look again.
type servingCertificate struct {
	content  map[string][]byte
	notAfter time.Time
	recheck  time.Duration
}

// reconcileTLS keeps the cluster's CA and serving certificate, renewing each once two thirds of
// its life have passed, or reads the user's Secret; nil without spec.tls.
func (r *Reconciler) reconcileTLS(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, noted *changes) (*servingCertificate, error) {
	if dc.Spec.TLS == nil {
		return nil, nil
	}
	if dc.Spec.TLS.ServerSecretName != "" {
		return r.readUserTLS(ctx, dc)
	}
	now := r.clock().Now()
	caPair, err := r.ensureCA(ctx, dc, now, noted)
	if err != nil {
		return nil, err
	}
	serving, err := r.ensureSecret(ctx, dc, dc.GeneratedTLSSecretName(), noted, func(data map[string][]byte) (map[string][]byte, error) {
		return servingData(dc, caPair, data, now, servingValidity(dc))
	})
	if err != nil {
		return nil, err
	}
	return certificateState(serving, now, caPair.CertPEM)
}

// caData is the data of the CA Secret: the one found while it is good, renewed with the same key
// once two thirds of its life have passed (certificates it signed still verify), or a new CA.
func caData(dc *databasev1alpha1.DatabaseCluster, found map[string][]byte, now time.Time) (map[string][]byte, error) {
	if pair, err := certs.PairFromSecretData(found); err == nil {
		cert, err := certs.ParseCertificate(pair.CertPEM)
		if err == nil && now.Before(certs.RenewAt(cert)) {
			return found, nil
		}
		if err == nil {
			renewed, err := certs.RenewCA(pair, now)
			return renewed.SecretData(), err
		}
	}
	ca, err := certs.NewCA(dc.Namespace+"/"+dc.Name+" CA", now)
	return ca.SecretData(), err
}

// servingData is the data of the serving certificate's Secret: the one found while it is good for
// the cluster's names and signed by ca, otherwise a new certificate.
func servingData(dc *databasev1alpha1.DatabaseCluster, ca certs.Pair, found map[string][]byte, now time.Time,
	validity time.Duration,
) (map[string][]byte, error) {
	names := certs.ServingDNSNames(dc.Name, dc.Namespace, ptr.Deref(dc.Spec.Replicas, 1))
	if dc.HasEngine() {
		// The role Services: a PostgreSQL replica streams from NAME-rw, verifying its name.
		names = append(append(names, certs.ServiceDNSNames(dc.ReadWriteServiceName(), dc.Namespace)...),
			certs.ServiceDNSNames(dc.ReadOnlyServiceName(), dc.Namespace)...)
	}
	if renew, _ := certs.NeedsRenewal(found[corev1.TLSCertKey], names, ca.CertPEM, now); !renew &&
		bytes.Equal(found[certs.CACertKey], ca.CertPEM) {
		return found, nil
	}
	serving, err := certs.NewServingValidFor(ca, names, now, validity)
	if err != nil {
		return nil, err
	}
	return certs.ServingSecretData(serving, ca.CertPEM), nil
}

// servingValidity is how long the serving certificate of spec.tls is valid.
func servingValidity(dc *databasev1alpha1.DatabaseCluster) time.Duration {
	if d := dc.Spec.TLS.CertificateDuration; d != nil {
		return d.Duration
	}
	return certs.ServingValidity
}

// ensureCA keeps the cluster's CA Secret and returns the CA.
func (r *Reconciler) ensureCA(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, now time.Time, noted *changes) (certs.Pair, error) {
	ca, err := r.ensureSecret(ctx, dc, dc.CASecretName(), noted, func(data map[string][]byte) (map[string][]byte, error) {
		return caData(dc, data, now)
	})
	if err != nil {
		return certs.Pair{}, err
	}
	return certs.PairFromSecretData(ca)
}

// reconcileAgentTLS keeps, for a cluster with an engine, the cluster's CA (also without
// spec.tls, or with the user's certificate) and the member agent's serving certificate
// (NAME-agent-tls, for the members' DNS names), renewed as spec.tls's is. The agent reads its
// files again when the kubelet updates them, so they are not in the pods' checksum: a renewal
// rolls no pod.
func (r *Reconciler) reconcileAgentTLS(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, noted *changes) error {
	if !dc.HasEngine() {
		return nil
	}
	now := r.clock().Now()
	ca, err := r.ensureCA(ctx, dc, now, noted)
	if err != nil {
		return err
	}
	_, err = r.ensureSecret(ctx, dc, dc.AgentTLSSecretName(), noted, func(data map[string][]byte) (map[string][]byte, error) {
		return servingData(dc, ca, data, now, certs.ServingValidity)
	})
	return err
}

// ensureSecret keeps the operator's Secret name of dc (type kubernetes.io/tls) with the data
// decide returns for the data found (nil when there is none), and returns that data. Secrets are
// read from the API server by name, never cached or listed.
func (r *Reconciler) ensureSecret(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, name string, noted *changes,
	decide func(found map[string][]byte) (map[string][]byte, error),
) (map[string][]byte, error) {
	found := &corev1.Secret{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: name}, found)
	if client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("reading the Secret %s: %w", name, err)
	}
	data, err := decide(found.Data)
	if err != nil {
		return nil, fmt.Errorf("issuing the certificate of the Secret %s: %w", name, err)
	}
	desired := &corev1.Secret{ObjectMeta: specs.ChildMeta(dc, name), Type: corev1.SecretTypeTLS, Data: data}
	_, result, err := child.Ensure(ctx, secretReader{r.Client, r.APIReader}, r.APIReader, desired, &corev1.Secret{}, tlsSecretSpec)
	if err != nil {
		return nil, err
	}
	noted.ensured(result, "Secret", name)
	return data, nil
}

// tlsSecretSpec keeps the data of the operator's certificate Secrets.
var tlsSecretSpec = child.Spec[*corev1.Secret]{
	InSync: func(desired, observed *corev1.Secret) bool {
		return maps.EqualFunc(desired.Data, observed.Data, bytes.Equal)
	},
	Merge: func(desired, observed *corev1.Secret) { observed.Data = desired.Data },
}

// readUserTLS reads the user's kubernetes.io/tls Secret and checks it: it must hold a certificate
// and its key, and ca.crt.
func (r *Reconciler) readUserTLS(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) (*servingCertificate, error) {
	name := dc.Spec.TLS.ServerSecretName
	secret := &corev1.Secret{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: name}, secret)
	if apierrors.IsNotFound(err) {
		return nil, &inputMissingError{fmt.Sprintf(
			"spec.tls.serverSecretName names the Secret %s, which does not exist in namespace %s: no pod is changed until it does",
			name, dc.Namespace)}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the Secret %s of spec.tls: %w", name, err)
	}
	if _, err := certs.ValidateTLSSecret(secret); err != nil {
		return nil, &inputMissingError{"spec.tls.serverSecretName: " + err.Error()}
	}
	if len(secret.Data[certs.CACertKey]) == 0 {
		return nil, &inputMissingError{fmt.Sprintf("the Secret %s of spec.tls has no key ca.crt: clients and members need the CA that signed tls.crt", name)}
	}
	state, err := certificateState(secret.Data, r.clock().Now(), nil)
	if err != nil {
		return nil, err
	}
	state.recheck = userTLSRecheck
	return state, nil
}

// certificateState is what the pods mount of a certificate Secret's data, its expiry, and when
// the operator must look again: at the renewal point of the serving certificate or of the CA
// (caPEM; nil for a user's Secret, which its issuer renews).
func certificateState(data map[string][]byte, now time.Time, caPEM []byte) (*servingCertificate, error) {
	cert, err := certs.ParseCertificate(data[corev1.TLSCertKey])
	if err != nil {
		return nil, err
	}
	state := &servingCertificate{
		content:  map[string][]byte{corev1.TLSCertKey: data[corev1.TLSCertKey], certs.CACertKey: data[certs.CACertKey]},
		notAfter: cert.NotAfter,
		recheck:  certs.RenewAt(cert).Sub(now),
	}
	if ca, err := certs.ParseCertificate(caPEM); caPEM != nil && err == nil {
		state.recheck = min(state.recheck, certs.RenewAt(ca).Sub(now))
	}
	state.recheck = max(state.recheck, time.Second)
	return state, nil
}

// withCertificateRecheck brings the cluster back when its certificate (or CA) is due for
// renewal, or when a user's Secret is to be read again.
func withCertificateRecheck(obs *observation) {
	if obs.tls == nil {
		return
	}
	if obs.recheckAfter == 0 || obs.recheckAfter > obs.tls.recheck {
		obs.recheckAfter = obs.tls.recheck
	}
}
