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

// Package plugin is the kubectl plugin kubectl-dbc: the cobra commands, the reads behind
// "status" and its rendering, and the writes of the other commands. Every write is a merge patch
// of exactly one field or annotation of a DatabaseCluster, or the creation of a DatabaseBackup;
// nothing else is changed. "switchover --wait" then reads the cluster until the operator has
// answered the request. The command of cmd/kubectl-dbc and the e2e suite run it through Run.
package plugin

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apischeme "github.com/seed1b407122/database-operator/api/scheme"
)

// FieldManager is the field manager of every write of the plugin: the cluster's managedFields
// show which fields it set.
const FieldManager = "kubectl-dbc"

// Version is the plugin's version, set by "make kubectl-dbc-release" (-ldflags -X). Empty: the
// module version that "go install ...@VERSION" recorded in the binary, else "(devel)".
var Version = ""

// version is what --version prints.
func version() string {
	if Version != "" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

// Options are what the commands need from outside: where they print and what time it is.
type Options struct {
	// Streams are standard input, output and error.
	Streams genericiooptions.IOStreams
	// Now is the clock of the ages "status" prints and of the restart annotation's value; nil is
	// time.Now.
	Now func() time.Time
}

// cli is one invocation: the options and the kubeconfig flags (--kubeconfig, --context,
// -n/--namespace and the rest of kubectl's), resolved the way kubectl resolves them.
type cli struct {
	Options
	flags *genericclioptions.ConfigFlags
	// connect, when set, replaces the client and namespace of the kubeconfig flags: the
	// package's tests run the commands against a fake API server.
	connect func() (client.Client, string, error)
	// interval is how often "switchover --wait" reads the cluster.
	interval time.Duration
}

// NewCommand returns the root command "kubectl dbc" with every subcommand.
func NewCommand(o Options) *cobra.Command {
	return newCLI(o).command()
}

// newCLI is an invocation with o, its clock defaulted, and kubectl's kubeconfig flags.
func newCLI(o Options) *cli {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &cli{Options: o, flags: genericclioptions.NewConfigFlags(true), interval: switchoverPollInterval}
}

// command is the root command, its persistent flags bound to c's kubeconfig flags.
func (c *cli) command() *cobra.Command {
	o := c.Options
	root := &cobra.Command{
		Use: "kubectl-dbc",
		// kubectl runs the plugin as "kubectl dbc": usage lines and errors say so.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl dbc"},
		Short:       "Look at and operate DatabaseClusters (database.seed1b407122.io/v1alpha1)",
		Long: `kubectl dbc shows a DatabaseCluster on one screen and changes it the way its spec and
annotations do: each command patches exactly one field or annotation (a JSON merge patch, field
manager "kubectl-dbc") or creates one DatabaseBackup. The operator does the rest; "switchover
--wait" waits for it.

The kubeconfig, context and namespace are found as kubectl finds them: --kubeconfig, then
KUBECONFIG, then ~/.kube/config; -n/--namespace, then the context's namespace, then "default".`,
		// kubectl completes plugins through their own "__complete"; no "completion" command.
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		SilenceUsage:      true,
		SilenceErrors:     true,
		Version:           version(),
	}
	root.SetIn(o.Streams.In)
	root.SetOut(o.Streams.Out)
	root.SetErr(o.Streams.ErrOut)
	c.flags.AddFlags(root.PersistentFlags())
	root.AddCommand(c.statusCommand(), c.restartCommand(), c.backupCommand(), c.switchoverCommand())
	for _, t := range toggles {
		root.AddCommand(c.toggleCommand(t))
	}
	return root
}

// Run runs the root command with args (without the program's name) until ctx is done, prints
// an error as kubectl does ("error: ..."), and returns the exit code.
func Run(ctx context.Context, o Options, args []string) int {
	return newCLI(o).run(ctx, args)
}

// run is Run for the invocation c.
func (c *cli) run(ctx context.Context, args []string) int {
	cmd := c.command()
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		_, _ = fmt.Fprintf(cmd.ErrOrStderr(), "error: %v\n", err)
		return 1
	}
	return 0
}

// target is the client and the namespace the kubeconfig flags resolve to.
func (c *cli) target() (client.Client, string, error) {
	if c.connect != nil {
		return c.connect()
	}
	ns, _, err := c.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("finding the namespace: %w", err)
	}
	cfg, err := c.flags.ToRESTConfig()
	if err != nil {
		return nil, "", fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cfg.UserAgent = FieldManager
	k, err := client.New(cfg, client.Options{Scheme: apischeme.Must()})
	if err != nil {
		return nil, "", fmt.Errorf("connecting to the API server: %w", err)
	}
	return k, ns, nil
}
