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

// Command sh is /bin/sh of the Echo image (make echo-image): "sh -c SCRIPT" runs SCRIPT with
// mvdan.cc/sh's POSIX shell interpreter, whose builtins include printf and echo. The Jobs of
// Echo and ScheduledEcho run exactly that (controllers/echo: printf '%s\n' "$MESSAGE"). It is
// static and reproducible, so the image is named by digest in the bundle; the image holds
// nothing else, so a script that runs another program fails with status 127.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// usageStatus is the exit status of a command line this shell does not take, and of a script
// that does not parse (as in POSIX shells).
const usageStatus = 2

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}

// run runs "sh -c SCRIPT" with env and returns the exit status.
func run(ctx context.Context, args, env []string, stdout, stderr io.Writer) int {
	if len(args) != 2 || args[0] != "-c" {
		return report(stderr, "usage: sh -c SCRIPT", usageStatus)
	}
	prog, err := syntax.NewParser().Parse(strings.NewReader(args[1]), "sh")
	if err != nil {
		return report(stderr, err, usageStatus)
	}
	r, err := interp.New(interp.StdIO(nil, stdout, stderr), interp.Env(expand.ListEnviron(env...)))
	if err != nil {
		return report(stderr, err, usageStatus)
	}
	return status(r.Run(ctx, prog), stderr)
}

// status is the exit status of a script that ended with err.
func status(err error, stderr io.Writer) int {
	var exit interp.ExitStatus
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return int(exit)
	default:
		return report(stderr, err, 1)
	}
}

// report writes what went wrong to stderr and returns status; a stderr that cannot be written
// leaves nothing else to tell.
func report(stderr io.Writer, what any, status int) int {
	_, _ = fmt.Fprintln(stderr, what)
	return status
}
