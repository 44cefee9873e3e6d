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

package plugin

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// toggle is a command that sets one boolean field of the cluster's spec.
type toggle struct {
	// use is the command's name.
	use string
	// field is the JSON name of the field under spec.
	field string
	// value is what the command sets.
	value bool
	// done is the past participle printed after the change.
	done string
	// short is the command's one-line help.
	short string
	// get reads the field from a cluster.
	get func(*databasev1alpha1.DatabaseCluster) bool
}

func paused(dc *databasev1alpha1.DatabaseCluster) bool     { return dc.Spec.Paused }
func hibernated(dc *databasev1alpha1.DatabaseCluster) bool { return dc.Spec.Hibernated }

// The JSON names of the spec fields the toggles set.
const (
	fieldPaused     = "paused"
	fieldHibernated = "hibernated"
)

// toggles are pause, resume, hibernate and wake.
var toggles = []toggle{
	{use: "pause", field: fieldPaused, value: true, done: "paused", get: paused,
		short: "Set spec.paused: the operator stops changing the cluster's children until resume"},
	{use: "resume", field: fieldPaused, value: false, done: "resumed", get: paused,
		short: "Clear spec.paused: the operator applies the pending changes again"},
	{use: "hibernate", field: fieldHibernated, value: true, done: "hibernated", get: hibernated,
		short: "Set spec.hibernated: every pod stops; claims, Services and status are kept"},
	{use: "wake", field: fieldHibernated, value: false, done: "woken", get: hibernated,
		short: "Clear spec.hibernated: spec.replicas pods come back on the same claims"},
}

// specPatch is the merge patch that sets spec.<field> to value and nothing else.
func specPatch(field string, value bool) []byte {
	data, _ := json.Marshal(map[string]any{"spec": map[string]any{field: value}})
	return data
}

// restartPatch is the merge patch that sets the restart annotation to at (RFC 3339, UTC) and
// nothing else.
func restartPatch(at time.Time) []byte {
	data, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		databasev1alpha1.RestartedAtAnnotation: at.UTC().Format(time.RFC3339),
	}}})
	return data
}

// cluster reads the DatabaseCluster name of the target namespace.
func (c *cli) cluster(cmd *cobra.Command, name string) (client.Client, *databasev1alpha1.DatabaseCluster, error) {
	k, ns, err := c.target()
	if err != nil {
		return nil, nil, err
	}
	dc := &databasev1alpha1.DatabaseCluster{}
	if err := k.Get(cmd.Context(), client.ObjectKey{Namespace: ns, Name: name}, dc); err != nil {
		return nil, nil, fmt.Errorf("reading databasecluster %s/%s: %w", ns, name, err)
	}
	return k, dc, nil
}

// patch sends a merge patch of the cluster, under the plugin's field manager.
func patch(cmd *cobra.Command, k client.Client, dc *databasev1alpha1.DatabaseCluster, data []byte) error {
	target := &databasev1alpha1.DatabaseCluster{ObjectMeta: metav1.ObjectMeta{Namespace: dc.Namespace, Name: dc.Name}}
	if err := k.Patch(cmd.Context(), target, client.RawPatch(types.MergePatchType, data), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("patching databasecluster %s/%s with %s: %w", dc.Namespace, dc.Name, data, err)
	}
	return nil
}

// toggleCommand is the command of t. A cluster that already has the value is not written.
func (c *cli) toggleCommand(t toggle) *cobra.Command {
	return &cobra.Command{
		Use:   t.use + " NAME",
		Short: t.short,
		Long: fmt.Sprintf("%s.\n\nIt patches spec.%s: %t of the DatabaseCluster NAME and nothing else (a JSON merge patch);\n"+
			"a cluster whose spec.%s is already %t is left untouched.", t.short, t.field, t.value, t.field, t.value),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, dc, err := c.cluster(cmd, args[0])
			if err != nil {
				return err
			}
			if t.get(dc) == t.value {
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "databasecluster/%s unchanged: spec.%s is already %t\n", dc.Name, t.field, t.value)
				return err
			}
			if err := patch(cmd, k, dc, specPatch(t.field, t.value)); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "databasecluster/%s %s (spec.%s: %t)\n", dc.Name, t.done, t.field, t.value)
			return err
		},
	}
}

// restartCommand sets the restart annotation to the current time.
func (c *cli) restartCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "restart NAME",
		Short: "Roll the cluster's pods, one at a time, by setting the restartedAt annotation",
		Long: `Roll the cluster's pods, one at a time, as the operator does for any change of the pod
template: the command sets the annotation ` + databasev1alpha1.RestartedAtAnnotation + `
to the current time (RFC 3339, UTC) and changes nothing else (a JSON merge patch). A paused
cluster rolls once it is resumed; a hibernated one has no pod to roll.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, dc, err := c.cluster(cmd, args[0])
			if err != nil {
				return err
			}
			at := c.Now().UTC().Truncate(time.Second)
			if err := patch(cmd, k, dc, restartPatch(at)); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "databasecluster/%s restarted (%s: %s)\n",
				dc.Name, databasev1alpha1.RestartedAtAnnotation, at.Format(time.RFC3339))
			return err
		},
	}
}

// backupCommand creates a DatabaseBackup of the cluster.
func (c *cli) backupCommand() *cobra.Command {
	var name string
	var offline bool
	cmd := &cobra.Command{
		Use:   "backup NAME [--name BACKUP] [--offline]",
		Short: "Create a DatabaseBackup of the cluster (Online, or Offline with --offline)",
		Long: `Create a DatabaseBackup of the DatabaseCluster NAME: a VolumeSnapshot of every member's
data claim, taken by the operator. Online (the default) snapshots the running members
(crash-consistent); --offline stops the cluster while the snapshots are cut, then starts it again
(it needs the cluster Available). Without --name the API server names the backup NAME-<5 random
characters>. The command returns once the backup exists; follow it with
"kubectl get dbb BACKUP -w" or "kubectl dbc status NAME".`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, dc, err := c.cluster(cmd, args[0])
			if err != nil {
				return err
			}
			b := newBackup(dc, name, offline)
			if err := k.Create(cmd.Context(), b, client.FieldOwner(FieldManager)); err != nil {
				return fmt.Errorf("creating a databasebackup of %s/%s: %w", dc.Namespace, dc.Name, err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "databasebackup/%s created (%s backup of databasecluster/%s)\n",
				b.Name, b.Spec.Method, dc.Name)
			return err
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "name of the DatabaseBackup (default: the cluster's name, '-' and 5 random characters)")
	cmd.Flags().BoolVar(&offline, "offline", false, "stop the cluster while the snapshots are cut (method Offline)")
	return cmd
}

// newBackup is the DatabaseBackup the backup command creates: named name, or generated from the
// cluster's name when name is empty.
func newBackup(dc *databasev1alpha1.DatabaseCluster, name string, offline bool) *databasev1alpha1.DatabaseBackup {
	b := &databasev1alpha1.DatabaseBackup{
		ObjectMeta: metav1.ObjectMeta{Namespace: dc.Namespace, Name: name},
		Spec:       databasev1alpha1.DatabaseBackupSpec{ClusterName: dc.Name, Method: databasev1alpha1.BackupOnline},
	}
	if name == "" {
		b.GenerateName = dc.Name + "-"
	}
	if offline {
		b.Spec.Method = databasev1alpha1.BackupOffline
	}
	return b
}
