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
	"net"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/certs"
	"github.com/seed1b407122/database-operator/controllers/memberagent"
)

// AgentMembers reads the members through their agents over mutual TLS. The operator presents a
// client certificate it issues itself, in memory, from the cluster's CA (the Secret NAME-ca,
// read by name from the API server), and trusts an agent only if the same CA signed its
// serving certificate for the member's DNS name in the headless Service.
type AgentMembers struct {
	// APIReader reads the CA Secret (Secrets are never cached).
	APIReader client.Reader
	// Address is where a member's agent is dialled (host:port); nil means its pod IP and
	// memberagent.Port. Tests whose pods run nothing point it at agents of their own.
	Address func(pod *corev1.Pod) string
	// Clock tells the time; nil means the real clock.
	Clock clock.PassiveClock

	mu      sync.Mutex
	clients map[types.NamespacedName]memberClient
	locks   map[types.NamespacedName]*sync.Mutex
}

// memberClient is one cluster's client, for the CA it was issued from, until renewAt; the CA
// Secret was last found unchanged at checkedAt.
type memberClient struct {
	caPEM     []byte
	renewAt   time.Time
	checkedAt time.Time
	client    *memberagent.Client
}

// Observe reads pod's member through its agent.
func (a *AgentMembers) Observe(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod) (memberagent.Observation, error) {
	return a.act(ctx, dc, pod, func(c *memberagent.Client, agent memberagent.Agent) (memberagent.Observation, error) {
		return c.Observe(ctx, agent)
	})
}

// Promote makes pod's member the primary through its agent.
func (a *AgentMembers) Promote(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod) (memberagent.Observation, error) {
	return a.act(ctx, dc, pod, func(c *memberagent.Client, agent memberagent.Agent) (memberagent.Observation, error) {
		return c.Promote(ctx, agent)
	})
}

// Fence stops pod's member accepting writes through its agent.
func (a *AgentMembers) Fence(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod) (memberagent.Observation, error) {
	return a.act(ctx, dc, pod, func(c *memberagent.Client, agent memberagent.Agent) (memberagent.Observation, error) {
		return c.Fence(ctx, agent)
	})
}

// TransferLeadership hands the primary role of pod's member to the member to, through its agent.
func (a *AgentMembers) TransferLeadership(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod,
	to string,
) (memberagent.Observation, error) {
	return a.act(ctx, dc, pod, func(c *memberagent.Client, agent memberagent.Agent) (memberagent.Observation, error) {
		return c.TransferLeadership(ctx, agent, to)
	})
}

// AddMember adds the member name at peerURL to the cluster through pod's agent.
func (a *AgentMembers) AddMember(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod,
	name, peerURL string,
) (memberagent.Observation, error) {
	return a.act(ctx, dc, pod, func(c *memberagent.Client, agent memberagent.Agent) (memberagent.Observation, error) {
		return c.AddMember(ctx, agent, name, peerURL)
	})
}

// RemoveMember removes the member name from the cluster through pod's agent.
func (a *AgentMembers) RemoveMember(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod,
	name string,
) (memberagent.Observation, error) {
	return a.act(ctx, dc, pod, func(c *memberagent.Client, agent memberagent.Agent) (memberagent.Observation, error) {
		return c.RemoveMember(ctx, agent, name)
	})
}

// act calls pod's agent with the cluster's client.
func (a *AgentMembers) act(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, pod *corev1.Pod,
	call func(*memberagent.Client, memberagent.Agent) (memberagent.Observation, error),
) (memberagent.Observation, error) {
	c, err := a.client(ctx, dc)
	if err != nil {
		return memberagent.Observation{}, err
	}
	obs, err := call(c, memberagent.Agent{Address: a.address(pod), ServerName: memberDNSName(dc, pod.Name)})
	if err != nil {
		a.recheckCA(dc) // a new CA is one reason an agent may refuse or be refused
	}
	return obs, err
}

// caRecheck is how long a cluster's client is used before its CA Secret is read again to see
// whether the CA changed: the Secret is read once per cluster in that time, not once per member
// read (at N = 1,000 clusters of 3 members every 10 s, 300 reads a second of the API server).
const caRecheck = time.Minute

// recheckCA makes the next call of dc's client read its CA Secret first.
func (a *AgentMembers) recheckCA(dc *databasev1alpha1.DatabaseCluster) {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := client.ObjectKeyFromObject(dc)
	if c, ok := a.clients[key]; ok {
		c.checkedAt = time.Time{}
		a.clients[key] = c
	}
}

func (a *AgentMembers) address(pod *corev1.Pod) string {
	if a.Address != nil {
		return a.Address(pod)
	}
	return net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(memberagent.Port))
}

func (a *AgentMembers) now() time.Time {
	if a.Clock == nil {
		return time.Now()
	}
	return a.Clock.Now()
}

// memberDNSName is member's name in the headless Service of dc, which its serving certificate
// carries.
func memberDNSName(dc *databasev1alpha1.DatabaseCluster, member string) string {
	return member + "." + dc.HeadlessServiceName() + "." + dc.Namespace + ".svc"
}

// client returns the client of dc: the one made before while the CA is the same and the client
// certificate is not two thirds through its life, otherwise a new one.
func (a *AgentMembers) client(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) (*memberagent.Client, error) {
	key := client.ObjectKeyFromObject(dc)
	now := a.now()
	fresh := func(c memberClient) bool {
		return now.Before(c.renewAt) && now.Sub(c.checkedAt) < caRecheck && !now.Before(c.checkedAt)
	}
	if c, ok := a.cached(key); ok && fresh(c) {
		return c.client, nil
	}
	// One read of the CA Secret per cluster at a time: the members read at once wait for it.
	lock := a.clusterLock(key)
	lock.Lock()
	defer lock.Unlock()
	if c, ok := a.cached(key); ok && fresh(c) {
		return c.client, nil
	}
	ca, err := a.readCA(ctx, dc)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.clients[key]; ok && bytes.Equal(c.caPEM, ca.CertPEM) && now.Before(c.renewAt) {
		c.checkedAt = now
		a.clients[key] = c
		return c.client, nil
	}
	pair, err := memberagent.NewClientCertificate(ca, memberagent.OperatorClientName, now, memberagent.ClientValidity)
	if err != nil {
		return nil, fmt.Errorf("issuing the operator's client certificate from the CA of %s: %w", dc.Name, err)
	}
	// The client's own bound is the agent's longest action (a promotion waits for the database);
	// reads are bounded by their context (agentTimeout).
	c, err := memberagent.NewClient(ca.CertPEM, pair.CertPEM, pair.KeyPEM, memberagent.RequestTimeout)
	if err != nil {
		return nil, err
	}
	if a.clients == nil {
		a.clients = map[types.NamespacedName]memberClient{}
	}
	a.clients[key] = memberClient{caPEM: ca.CertPEM, renewAt: now.Add(memberagent.ClientValidity * 2 / 3), checkedAt: now, client: c}
	return c, nil
}

// clusterLock is the lock that makes one call at a time read cluster's CA Secret.
func (a *AgentMembers) clusterLock(cluster types.NamespacedName) *sync.Mutex {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.locks == nil {
		a.locks = map[types.NamespacedName]*sync.Mutex{}
	}
	if a.locks[cluster] == nil {
		a.locks[cluster] = &sync.Mutex{}
	}
	return a.locks[cluster]
}

// cached is the client made for cluster, if any.
func (a *AgentMembers) cached(cluster types.NamespacedName) (memberClient, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.clients[cluster]
	return c, ok
}

// readCA reads the cluster's CA from its Secret.
func (a *AgentMembers) readCA(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) (certs.Pair, error) {
	secret := &corev1.Secret{}
	if err := a.APIReader.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.CASecretName()}, secret); err != nil {
		return certs.Pair{}, fmt.Errorf("reading the CA Secret %s: %w", dc.CASecretName(), err)
	}
	return certs.PairFromSecretData(secret.Data)
}

// Forget drops the client of a cluster that is gone.
func (a *AgentMembers) Forget(cluster types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.clients, cluster)
	delete(a.locks, cluster)
}
