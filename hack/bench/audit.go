package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/seed1b407122/database-operator/test/harness/controlplane"
)

// Counting the operator's requests with kube-apiserver's audit log: the manager talks to
// kube-apiserver directly, over TLS and HTTP/2 as it does in a cluster, as a user of its own
// (auditUser, in system:masters like the admin), and an audit policy logs that user's requests
// only, at the Metadata level (no bodies). The benchmark reads the new lines of the log at each
// snapshot. So the counts are of what the manager really sends on its real path, and cost the
// benchmark process no CPU per request. (A counting proxy in the benchmark process did this
// before 2026-11-28: it put the manager on plain HTTP/1.1, which client-go treats differently,
// and cost CPU in the case it measured; results of that time say settings.count "proxy" or
// nothing.)

// How the operator's requests are counted (-count).
const (
	countAudit = "audit"
	countNone  = "none"
)

// auditUser is the manager's user name when requests are counted from the audit log.
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

// auditArgs writes the audit policy into dir and returns the kube-apiserver flags that log
// to dir/audit.log, and that path. The default mode (blocking) writes an event before the
// response, so a snapshot taken after a request completed counts it.
func auditArgs(dir string) ([]string, string, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return nil, "", err
	}
	log := filepath.Join(dir, "audit.log")
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + log, "--audit-log-format=json",
		"--audit-log-maxsize=0", "--audit-log-maxbackup=0"}, log, nil
}

// auditCounter reads an audit log from where it stopped and counts the requests in it, by verb
// and resource as classify names them (counts.go) and by response code.
type auditCounter struct {
	path string

	mu      sync.Mutex // guards offset and partial
	offset  int64
	partial []byte // an incomplete last line, read again with the rest of it
	tally   requestTally
}

func newAuditCounter(path string) *auditCounter { return &auditCounter{path: path} }

// snapshot reads the lines written since the last call and returns a copy of the counters.
func (a *auditCounter) snapshot() (requestCounts, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	err := a.readNew()
	return a.tally.snapshot(), err
}

func (a *auditCounter) readNew() error {
	f, err := os.Open(a.path)
	if os.IsNotExist(err) {
		return nil // nothing logged yet
	}
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(a.offset, io.SeekStart); err != nil {
		return err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	a.offset += int64(len(data))
	data = append(a.partial, data...)
	end := bytes.LastIndexByte(data, '\n') + 1
	a.partial = append([]byte(nil), data[end:]...)
	sc := bufio.NewScanner(bytes.NewReader(data[:end]))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		key, code, counted, err := parseAuditEvent(sc.Bytes())
		if err != nil {
			return err
		}
		if counted {
			a.tally.add(key, code)
		}
	}
	return sc.Err()
}

// auditEvent holds the fields of an audit.k8s.io/v1 Event the counter reads.
type auditEvent struct {
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	ObjectRef  *struct {
		Resource    string `json:"resource"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// parseAuditEvent returns the "verb resource" key and the response code of one line of the
// log, and whether the line counts: a watch at ResponseStarted, any other request at
// ResponseComplete (a watch's ResponseComplete, when it ends, and a request that panicked are
// not counted again).
func parseAuditEvent(line []byte) (key, code string, counted bool, err error) {
	var e auditEvent
	if err := json.Unmarshal(line, &e); err != nil {
		return "", "", false, fmt.Errorf("reading the audit log: %w", err)
	}
	switch {
	case e.Verb == verbWatch && e.Stage == "ResponseStarted":
	case e.Verb != verbWatch && e.Stage == "ResponseComplete":
	default:
		return "", "", false, nil
	}
	if e.ResponseStatus != nil {
		code = strconv.Itoa(e.ResponseStatus.Code)
	}
	return e.Verb + " " + auditResource(e), code, true, nil
}

// auditResource names the resource of an event as classify does: "resource[.group][/sub]";
// a request without one (discovery, /metrics) is named by classify from its path.
func auditResource(e auditEvent) string {
	if e.ObjectRef == nil || e.ObjectRef.Resource == "" {
		u, err := url.ParseRequestURI(e.RequestURI)
		if err != nil {
			return "nonresource" + e.RequestURI
		}
		_, resource := classify(&http.Request{Method: http.MethodGet, URL: u})
		return resource
	}
	r := e.ObjectRef.Resource
	if e.ObjectRef.APIGroup != "" {
		r += "." + e.ObjectRef.APIGroup
	}
	if e.ObjectRef.Subresource != "" {
		r += "/" + e.ObjectRef.Subresource
	}
	return r
}

// auditUserKubeconfig provisions auditUser (in system:masters, the admin's group) on the
// cluster and writes its kubeconfig, which points at kube-apiserver itself, into the cluster's
// work directory.
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
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", err
	}
	return path, nil
}
