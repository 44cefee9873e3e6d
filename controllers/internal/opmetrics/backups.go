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

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The backup series of a DatabaseCluster, built by backups from the finished DatabaseBackups.
var (
	lastBackupCompletion = prometheus.GaugeOpts{
		Name: "database_operator_databasecluster_last_backup_completion_timestamp_seconds",
		Help: "When the newest Completed DatabaseBackup of a DatabaseCluster completed, in seconds since the epoch.",
	}
	lastBackupSucceeded = prometheus.GaugeOpts{
		Name: "database_operator_databasecluster_last_backup_succeeded",
		Help: "1 when the newest finished DatabaseBackup of a DatabaseCluster Completed, 0 when it Failed.",
	}
)

// backups is the collector of the backup series.
var backups = newBackupCollector()

// objectKey names a cluster or a backup in its namespace.
type objectKey struct{ namespace, name string }

// finishedBackup is what the series need of a DatabaseBackup that Completed or Failed.
type finishedBackup struct {
	cluster   string
	succeeded bool
	at        time.Time
}

// lastBackups is what the series of one cluster say: the newest Completed backup (zero when
// none) and the newest finished one.
type lastBackups struct {
	completed time.Time
	last      finishedBackup
}

// backupCollector derives the backup series of each cluster at scrape time from the finished
// backups the backup controller recorded, for the clusters the cluster controller reported.
// Backups outlive their cluster on purpose (the cluster never owns them), but the series of a
// cluster that is gone would be noise: they are exported only while the cluster exists. A
// series thus goes when its cluster is deleted or its last finished backup is, whichever
// controller sees it first, and none can be left behind.
type backupCollector struct {
	mu       sync.Mutex
	clusters map[objectKey]bool
	finished map[objectKey]finishedBackup

	completion, succeeded *prometheus.Desc
}

func newBackupCollector() *backupCollector {
	labels := []string{labelNamespace, labelName}
	return &backupCollector{
		clusters:   map[objectKey]bool{},
		finished:   map[objectKey]finishedBackup{},
		completion: prometheus.NewDesc(lastBackupCompletion.Name, lastBackupCompletion.Help, labels, nil),
		succeeded:  prometheus.NewDesc(lastBackupSucceeded.Name, lastBackupSucceeded.Help, labels, nil),
	}
}

// RecordBackup records a DatabaseBackup of cluster that finished at at: Completed when
// succeeded, Failed otherwise.
func RecordBackup(namespace, name, cluster string, succeeded bool, at time.Time) {
	backups.mu.Lock()
	defer backups.mu.Unlock()
	backups.finished[objectKey{namespace, name}] = finishedBackup{cluster: cluster, succeeded: succeeded, at: at}
}

// ForgetBackup forgets a DatabaseBackup that is gone or being deleted.
func ForgetBackup(namespace, name string) {
	backups.mu.Lock()
	defer backups.mu.Unlock()
	delete(backups.finished, objectKey{namespace, name})
}

func (b *backupCollector) clusterSeen(namespace, name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clusters[objectKey{namespace, name}] = true
}

func (b *backupCollector) clusterGone(namespace, name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.clusters, objectKey{namespace, name})
}

// reset forgets every cluster and backup (for the tests).
func (b *backupCollector) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	clear(b.clusters)
	clear(b.finished)
}

// Describe sends the descriptions of both series.
func (b *backupCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- b.completion
	ch <- b.succeeded
}

// Collect sends the series of every cluster that exists and has a finished backup. The last
// result is the backup that finished last; of two that finished in the same second, a Failed
// one wins, so a failure is never hidden.
func (b *backupCollector) Collect(ch chan<- prometheus.Metric) {
	b.mu.Lock()
	defer b.mu.Unlock()
	byCluster := map[objectKey]lastBackups{}
	for key, f := range b.finished {
		cluster := objectKey{key.namespace, f.cluster}
		if !b.clusters[cluster] {
			continue
		}
		l, seen := byCluster[cluster]
		if f.succeeded && f.at.After(l.completed) {
			l.completed = f.at
		}
		if !seen || f.at.After(l.last.at) || (f.at.Equal(l.last.at) && !f.succeeded) {
			l.last = f
		}
		byCluster[cluster] = l
	}
	for cluster, l := range byCluster {
		if !l.completed.IsZero() {
			ch <- prometheus.MustNewConstMetric(b.completion, prometheus.GaugeValue,
				float64(l.completed.Unix()), cluster.namespace, cluster.name)
		}
		succeeded := 0.0
		if l.last.succeeded {
			succeeded = 1
		}
		ch <- prometheus.MustNewConstMetric(b.succeeded, prometheus.GaugeValue, succeeded, cluster.namespace, cluster.name)
	}
}
