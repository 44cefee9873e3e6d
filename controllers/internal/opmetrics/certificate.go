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

package opmetrics

import "time"

// CertificateExpiry is when the serving certificate of each DatabaseCluster with spec.tls
// expires, as a Unix time; the alert DatabaseClusterCertificateExpiring compares it with time().
var CertificateExpiry = newClusterGauge("database_operator_databasecluster_certificate_expiry_timestamp_seconds",
	"When the serving certificate of a DatabaseCluster (spec.tls) expires, in seconds since the Unix epoch.")

// RecordCertificate sets the certificate series of one DatabaseCluster; a zero notAfter (no
// spec.tls, or not known) removes it.
func RecordCertificate(namespace, name string, notAfter time.Time) {
	key := objectKey{namespace, name}
	if notAfter.IsZero() {
		CertificateExpiry.delete(key)
		return
	}
	CertificateExpiry.set(key, float64(notAfter.Unix()))
}
