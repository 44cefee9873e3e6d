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

// Command kubectl-dbc is a kubectl plugin for DatabaseClusters: "kubectl dbc status NAME" shows
// a cluster on one screen; restart, hibernate, wake, pause, resume, backup and switchover change
// the one field or annotation that does each. Install it with
//
//	go install github.com/seed1b407122/database-operator/cmd/kubectl-dbc@latest
//
// or from the archive of "make kubectl-dbc-release"; kubectl finds it on PATH.
package main

import (
	"context"
	"os"
	"os/signal"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/seed1b407122/database-operator/cmd/kubectl-dbc/plugin"
)

func main() {
	os.Exit(run())
}

// run is main with its deferred calls done before the exit: Ctrl-C cancels the requests.
func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return plugin.Run(ctx, plugin.Options{
		Streams: genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr},
	}, os.Args[1:])
}
