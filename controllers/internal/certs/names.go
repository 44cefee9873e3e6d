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

package certs

import (
	"net"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// ClusterDomain is the cluster's DNS domain in the fully qualified names. It is the kubelet's
// default; a cluster with another domain still resolves the ".svc" forms, which are also in the
// certificate.
const ClusterDomain = "cluster.local"

// Localhost is the name in-pod clients use: a sidecar (an exporter, a backup agent), an exec
// probe, etcdctl's default endpoint. Kubelet's own HTTPS probes do not verify certificates and its
// TCP probes speak no TLS, so localhost is for the clients inside the pod. Any holder of a key
// this CA signed can claim localhost to a client trusting this CA, but that holder can already
// claim to be every member; the name grants nothing new.
const Localhost = "localhost"

// LoopbackIPs are the IP SANs of every serving certificate: 127.0.0.1 and ::1, for in-pod clients
// that dial an address rather than localhost (etcd's default listen and client URLs), on IPv4 and
// IPv6 clusters alike. Pod IPs are left out: they change with every restart, and clients
// outside the pod use the names.
func LoopbackIPs() []net.IP {
	return []net.IP{net.IPv4(127, 0, 0, 1).To4(), net.IPv6loopback}
}

// ServingDNSNames are the DNS SANs of the serving certificate of the DatabaseCluster name in
// namespace with replicas members:
//   - the client Service and the headless Service, each as NAME, NAME.NS, NAME.NS.svc and
//     NAME.NS.svc.<ClusterDomain>;
//   - the wildcards *.HEADLESS.NS.svc and *.HEADLESS.NS.svc.<ClusterDomain>;
//   - every member's stable name MEMBER.HEADLESS.NS.svc and MEMBER.HEADLESS.NS.svc.<ClusterDomain>;
//   - Localhost.
//
// The wildcards cover the members a scale-up adds: without them the certificate would have to be
// reissued, and every pod rolled, at the moment the user asked for more capacity (NeedsRenewal
// counts a name as covered when a wildcard matches it). They grant nothing beyond the namespace:
// only a pod the headless Service selects gets a name under it, and whoever can create such a pod
// in the namespace can already mount the Secret. The explicit names stay for clients that do not
// match wildcards.
func ServingDNSNames(name, namespace string, replicas int32) []string {
	// The names come from the API type's helpers, the one place they are defined.
	dc := &v1alpha1.DatabaseCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	headless := dc.HeadlessServiceName()
	names := append(serviceNames(dc.ClientServiceName(), namespace), serviceNames(headless, namespace)...)
	names = append(names, clusterNames("*."+headless+"."+namespace)...)
	for i := range replicas {
		member := dc.StatefulSetName() + "-" + strconv.Itoa(int(i))
		names = append(names, clusterNames(member+"."+headless+"."+namespace)...)
	}
	return append(names, Localhost)
}

// ServiceDNSNames are the four names that resolve to service in namespace from inside the
// cluster: NAME, NAME.NS, NAME.NS.svc and NAME.NS.svc.<ClusterDomain>.
func ServiceDNSNames(service, namespace string) []string {
	return serviceNames(service, namespace)
}

// serviceNames are the four names that resolve to a Service from inside the cluster.
func serviceNames(service, namespace string) []string {
	return append([]string{service, service + "." + namespace}, clusterNames(service+"."+namespace)...)
}

// clusterNames are the two fully qualified forms of a name in a namespace ("NAME.NS").
func clusterNames(nameNS string) []string {
	return []string{nameNS + ".svc", nameNS + ".svc." + ClusterDomain}
}
