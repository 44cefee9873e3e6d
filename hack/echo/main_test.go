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

package main

import (
	"bytes"
	"context"
	"testing"
)

// printScript is the script of the Echo Jobs (controllers/echo's printCommand).
const printScript = `printf '%s\n' "$MESSAGE"`

func TestRun(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		env        []string
		wantStatus int
		wantOut    string
		wantErr    string
	}{
		{name: "the Echo Job's script prints the message", args: []string{"-c", printScript},
			env: []string{"MESSAGE=Hello from database-operator"}, wantOut: "Hello from database-operator\n"},
		{name: "a message that looks like an option is printed as it is", args: []string{"-c", printScript},
			env: []string{"MESSAGE=-n"}, wantOut: "-n\n"},
		{name: "backslashes and format verbs in the message are not interpreted", args: []string{"-c", printScript},
			env: []string{`MESSAGE=a\nb %s %d`}, wantOut: "a\\nb %s %d\n"},
		{name: "shell syntax in the message is not run", args: []string{"-c", printScript},
			env: []string{`MESSAGE="; rm -rf / #$(id)`}, wantOut: "\"; rm -rf / #$(id)\n"},
		{name: "an unset message prints an empty line", args: []string{"-c", printScript}, wantOut: "\n"},
		{name: "echo is a builtin too", args: []string{"-c", "echo a b"}, wantOut: "a b\n"},
		{name: "the exit status of the script", args: []string{"-c", "exit 3"}, wantStatus: 3},
		{name: "a program the image does not hold", args: []string{"-c", "ls /"}, wantStatus: 127,
			wantErr: "\"ls\": executable file not found in $PATH\n"},
		{name: "a script that does not parse", args: []string{"-c", "printf 'x"}, wantStatus: 2,
			wantErr: "sh:1:8: reached EOF without closing quote `'`\n"},
		{name: "no script", args: nil, wantStatus: 2, wantErr: "usage: sh -c SCRIPT\n"},
		{name: "a script file", args: []string{"script.sh"}, wantStatus: 2, wantErr: "usage: sh -c SCRIPT\n"},
		{name: "arguments after the script", args: []string{"-c", "echo", "name"}, wantStatus: 2,
			wantErr: "usage: sh -c SCRIPT\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			got := run(context.Background(), tt.args, tt.env, &stdout, &stderr)
			if got != tt.wantStatus || stdout.String() != tt.wantOut || stderr.String() != tt.wantErr {
				t.Errorf("run(%q) = %d, stdout %q, stderr %q; want %d, %q, %q",
					tt.args, got, stdout.String(), stderr.String(), tt.wantStatus, tt.wantOut, tt.wantErr)
			}
		})
	}
}
