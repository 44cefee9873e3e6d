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

package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Engine says how the operator learns and changes the roles of a cluster's members.
// +kubebuilder:validation:Enum=none;etcd;postgresql
type Engine string

const (
	// EngineNone is 0.4's behaviour: the operator knows no roles, the StatefulSet rolls its pods
	// (highest ordinal first) and membership is the database's own business.
	EngineNone Engine = "none"
	// EngineEtcd is etcd: the leader is the primary; the operator moves leadership before it
	// deletes the leader's pod and changes the membership when the cluster is scaled.
	EngineEtcd Engine = "etcd"
	// EnginePostgreSQL is PostgreSQL with streaming replication: one primary, the other members
	// replicas cloned from it.
	EnginePostgreSQL Engine = "postgresql"
)

// UpdateMethod is how the primary is updated once every replica runs the new template.
// +kubebuilder:validation:Enum=switchover;restart
type UpdateMethod string

const (
	// UpdateMethodSwitchover hands the primary role to the most advanced healthy replica first,
	// then deletes the old primary's pod: writes pause for the switchover only.
	UpdateMethodSwitchover UpdateMethod = "switchover"
	// UpdateMethodRestart deletes the primary's pod in place: writes pause until it is back.
	UpdateMethodRestart UpdateMethod = "restart"
)

// MemberAgentPort is the port of the member agent, the operator's sidecar in the pods of a
// cluster with an engine (the storage agent's container, in its member mode): the operator
// reads and changes each member's role there, over mutual TLS.
const MemberAgentPort int32 = 9191

// MemberAgentPortName is the name of the member agent's container port.
const MemberAgentPortName = "member-agent"

// MemberAgentHealthPort is where the member agent of engine postgresql serves the database's
// readiness check in plain HTTP (the database container's default readiness probe): it answers
// for a frozen database, which a TCP check of the database's port does not see.
const MemberAgentHealthPort int32 = 9192

// MemberAgentHealthPortName is the name of the member agent's health port.
const MemberAgentHealthPortName = "agent-health"

// MemberAgentReadyPath is the readiness check on MemberAgentHealthPort: 200 while the database
// answers within MemberAgentReadyTimeoutSeconds, 503 otherwise.
const MemberAgentReadyPath = "/readyz"

// MemberAgentReadyTimeoutSeconds bounds the database's answer to one readiness check.
const MemberAgentReadyTimeoutSeconds = 2

// The member agent's certificate: a serving certificate for the members' DNS names, issued by
// the cluster's CA (NAME-ca), with the CA that the operator's client certificate comes from.
const (
	// AgentTLSVolumeName is its volume, mounted in the agent only.
	AgentTLSVolumeName = "agent-tls"
	// AgentTLSMountPath holds tls.crt, tls.key and ca.crt, read-only.
	AgentTLSMountPath = "/etc/database/agent-tls"
)

// AgentTLSSecretName is the name of the Secret of the member agent's certificate.
func (dc *DatabaseCluster) AgentTLSSecretName() string { return dc.Name + "-agent-tls" }

// DefaultFailoverAfterSeconds is spec.roles.failover.afterSeconds when unset.
const DefaultFailoverAfterSeconds int32 = 30

// RolesSpec says how the operator changes the roles of the members of a cluster with an engine.
type RolesSpec struct {
	// UpdateMethod is how the primary takes a new template once every replica runs it:
	// switchover (default) hands the role to the most advanced healthy replica before the old
	// primary's pod is deleted; restart deletes the primary's pod in place.
	// +optional
	// +kubebuilder:default=switchover
	UpdateMethod UpdateMethod `json:"updateMethod,omitempty"`

	// Failover, when enabled, promotes the most advanced healthy replica once the primary has
	// been unavailable for afterSeconds and is fenced (its pod gone, its node confirmed gone, or
	// its agent has demoted it). Never while two members claim to be primary. Off by default.
	// +optional
	Failover *FailoverSpec `json:"failover,omitempty"`

	// Synchronous makes commits wait for that many replicas (PostgreSQL:
	// synchronous_standby_names = 'ANY number (replicas)'). Unset: asynchronous replication.
	// +optional
	Synchronous *SynchronousSpec `json:"synchronous,omitempty"`
}

// FailoverSpec opts in to automatic failover.
type FailoverSpec struct {
	// Enabled turns failover on. It needs replicas of 2 or more.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// AfterSeconds is how long the primary must have been unreachable and not Ready before a
	// replica is promoted (once the primary is fenced). 10 to 3600; default 30.
	// +optional
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=3600
	AfterSeconds *int32 `json:"afterSeconds,omitempty"`
}

// SynchronousSpec is PostgreSQL's synchronous replication.
type SynchronousSpec struct {
	// Number is how many replicas must confirm a commit before it is acknowledged: 1 or more,
	// and fewer than replicas (a commit that waits for every member stops with the first one
	// down).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=8
	Number int32 `json:"number"`
}

// MemberRole is a member's role as its agent reports it.
// +kubebuilder:validation:Enum=primary;replica;unknown
type MemberRole string

const (
	// MemberRolePrimary is the writable member (etcd: the leader).
	MemberRolePrimary MemberRole = "primary"
	// MemberRoleReplica follows the primary.
	MemberRoleReplica MemberRole = "replica"
	// MemberRoleUnknown is a member whose agent did not answer.
	MemberRoleUnknown MemberRole = "unknown"
)

// MemberStatus is one member as the operator last observed it through its agent.
type MemberStatus struct {
	// Name is the member's pod name, NAME-<ordinal>.
	Name string `json:"name"`
	// Role is the member's role.
	Role MemberRole `json:"role"`
	// Position is the member's replication position: PostgreSQL's WAL location (e.g.
	// 0/3000060), etcd's raft index.
	// +optional
	Position string `json:"position,omitempty"`
}

// SwitchoverStatus is a change of primary in progress, as the operator records it before it acts
// (so that a restarted operator resumes it rather than starting another).
type SwitchoverStatus struct {
	// From is the primary the switchover demotes (a failover: the lost primary).
	From string `json:"from"`
	// To is the member it promotes.
	To string `json:"to"`
	// Reason is why it started: Update (the primary's pod runs an old template), Requested (the
	// switchover annotation), ScaleDown (a scale-down removes the primary's pod) or Failover.
	Reason string `json:"reason"`
	// StartedAt is when it started; one that does not finish within a minute is reported.
	StartedAt metav1.Time `json:"startedAt"`
}

// The announcement of an etcd member (engine etcd): the initial cluster its etcd starts with and
// its state ("new" or "existing"), which the operator writes on the member's pod once the member
// is in etcd's member list (or, for a new cluster, once every member is desired), and which the
// pod's etcd reads through the downward API (ETCD_INITIAL_CLUSTER, ETCD_INITIAL_CLUSTER_STATE).
// The member agent holds the database back until the announcement is there.
const (
	EtcdInitialClusterAnnotation      = "database.seed1b407122.io/etcd-initial-cluster"
	EtcdInitialClusterStateAnnotation = "database.seed1b407122.io/etcd-initial-cluster-state"
)

// The announcement of a PostgreSQL member (engine postgresql): its role at start (primary or
// replica) and the host a replica streams from (the Service NAME-rw), which the operator writes
// on each new pod and the pod's database container reads through the downward API in
// RoleMountPath (DATABASE_ROLE_DIR). The project's PostgreSQL image waits for it, then initializes
// (primary), clones the primary (replica) or rewinds an old primary into a replica.
const (
	PostgreSQLRoleAnnotation        = "database.seed1b407122.io/postgresql-role"
	PostgreSQLPrimaryHostAnnotation = "database.seed1b407122.io/postgresql-primary-host"
	// RoleVolumeName and RoleMountPath are the volume of the announcement in the database
	// container, and the variable that names it.
	RoleVolumeName = "role"
	RoleMountPath  = "/etc/database/role"
	RoleDirEnv     = "DATABASE_ROLE_DIR"
)

// SwitchoverAnnotation on a DatabaseCluster with an engine asks for a switchover: its value is
// the member to promote, or "any" for the most advanced healthy replica. The operator removes it
// once it has started the switchover, found it already done, or refused it (an event says why).
const SwitchoverAnnotation = "database.seed1b407122.io/switchover-to"

// ReasonSwitchoverRefused is the reason of the Warning event the operator records when it
// refuses a requested switchover (its message says why); kubectl dbc switchover --wait reads it.
const ReasonSwitchoverRefused = "SwitchoverRefused"

// SwitchoverToAny is the SwitchoverAnnotation's value that lets the operator choose the target.
const SwitchoverToAny = "any"

// EngineName is spec.engine, or none when unset.
func (dc *DatabaseCluster) EngineName() Engine {
	if dc.Spec.Engine == "" {
		return EngineNone
	}
	return dc.Spec.Engine
}

// HasEngine reports whether the cluster has an engine other than none.
func (dc *DatabaseCluster) HasEngine() bool {
	return dc.EngineName() != EngineNone
}

// PrimaryUpdateMethod is spec.roles.updateMethod, or switchover when unset.
func (dc *DatabaseCluster) PrimaryUpdateMethod() UpdateMethod {
	if r := dc.Spec.Roles; r != nil && r.UpdateMethod != "" {
		return r.UpdateMethod
	}
	return UpdateMethodSwitchover
}

// FailoverEnabled reports whether spec.roles.failover.enabled is true.
func (dc *DatabaseCluster) FailoverEnabled() bool {
	return dc.Spec.Roles != nil && dc.Spec.Roles.Failover != nil && dc.Spec.Roles.Failover.Enabled
}

// FailoverAfter is spec.roles.failover.afterSeconds as a duration, or its default.
func (dc *DatabaseCluster) FailoverAfter() time.Duration {
	seconds := DefaultFailoverAfterSeconds
	if r := dc.Spec.Roles; r != nil && r.Failover != nil && r.Failover.AfterSeconds != nil {
		seconds = *r.Failover.AfterSeconds
	}
	return time.Duration(seconds) * time.Second
}
