package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/seed1b407122/database-operator/test/harness/controlplane"
)

// The operator's requests are counted from kube-apiserver's audit log of the manager's own user
// (auditUser, in system:masters like the admin): what the manager really sends, over TLS and
// HTTP/2 as in a cluster, at no cost to the benchmark process per request.

// countAudit is settings.count of the results: how their requests were counted. The index of
// runs shows it beside the older results, which a counting proxy counted.
const countAudit = "audit"

const auditUser = "bench-manager"

// auditPolicy logs the manager's requests once each: at ResponseComplete, and at
// ResponseStarted for watches, which complete only when they end.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: ["` + auditUser + `"]
- level: None
`

// auditArgs writes the audit policy into dir and returns the kube-apiserver flags that log to
// dir/audit.log, and that path. The default mode (blocking) writes an event before the
// response, so a snapshot taken after a request completed counts it.
func auditArgs(dir string) ([]string, string, error) {
	policy, log := filepath.Join(dir, "audit-policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return nil, "", err
	}
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + log, "--audit-log-format=json",
		"--audit-log-maxsize=0", "--audit-log-maxbackup=0"}, log, nil
}

// requestCounts are the requests seen up to a moment, by "verb resource".
type requestCounts struct {
	ByVerbResource map[string]int64 `json:"byVerbResource"`
}

// minus returns the requests made between earlier and c.
func (c requestCounts) minus(earlier requestCounts) requestCounts {
	return requestCounts{minus(c.ByVerbResource, earlier.ByVerbResource)}
}

// totals sums writes, one-shot reads (get, list) and watches.
func (c requestCounts) totals() (writes, reads, watches int64) {
	for k, v := range c.ByVerbResource {
		switch verb, _, _ := strings.Cut(k, " "); verb {
		case "create", "update", "patch", "delete", "deletecollection":
			writes += v
		case "watch":
			watches += v
		default:
			reads += v
		}
	}
	return writes, reads, watches
}

// readAudit counts the requests of every complete line of the audit log at path. Each snapshot
// reads the whole log again (a case takes three): a line still being written is counted by the
// next one.
func readAudit(path string) (requestCounts, error) {
	c := requestCounts{ByVerbResource: map[string]int64{}}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return c, nil // nothing logged yet
	}
	if err != nil {
		return c, err
	}
	for line := range bytes.Lines(data[:bytes.LastIndexByte(data, '\n')+1]) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		key, counted, err := parseAuditEvent(line)
		if err != nil {
			return c, err
		}
		if counted {
			c.ByVerbResource[key]++
		}
	}
	return c, nil
}

// parseAuditEvent returns the "verb resource[.group][/subresource]" key ("verb nonresource/PATH"
// for discovery) of one line of the log, and whether the line counts: a watch at
// ResponseStarted, any other request at ResponseComplete (a watch's ResponseComplete, when it
// ends, and a request that panicked are not counted again).
func parseAuditEvent(line []byte) (key string, counted bool, err error) {
	var e auditv1.Event
	if err := json.Unmarshal(line, &e); err != nil {
		return "", false, fmt.Errorf("reading the audit log: %w", err)
	}
	counted = e.Stage == auditv1.StageResponseComplete
	if e.Verb == "watch" {
		counted = e.Stage == auditv1.StageResponseStarted
	}
	if !counted {
		return "", false, nil
	}
	path, _, _ := strings.Cut(e.RequestURI, "?")
	key = "nonresource" + path
	if r := e.ObjectRef; r != nil && r.Resource != "" {
		key = r.Resource
		if r.APIGroup != "" {
			key += "." + r.APIGroup
		}
		if r.Subresource != "" {
			key += "/" + r.Subresource
		}
	}
	return e.Verb + " " + key, true, nil
}

// auditUserKubeconfig provisions auditUser on the cluster and writes its kubeconfig, which
// points at kube-apiserver itself, into the cluster's work directory.
func auditUserKubeconfig(cluster *controlplane.Cluster) (string, error) {
	user, err := cluster.AddUser(auditUser, "system:masters")
	if err != nil {
		return "", err
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("writing the kubeconfig of %s: %w", auditUser, err)
	}
	path := filepath.Join(cluster.WorkDir, auditUser+".kubeconfig")
	return path, os.WriteFile(path, data, 0o600)
}
