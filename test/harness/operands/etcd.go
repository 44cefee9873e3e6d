package operands

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed1b407122/database-operator/test/harness/proc"
)

// EtcdTLS is how an etcd's members serve their clients over https: with the pair CertPEM and
// KeyPEM, which CAPEM signed for ServerName (the peers stay on http).
type EtcdTLS struct {
	CAPEM, CertPEM, KeyPEM []byte
	// ServerName is a DNS name of the serving certificate, verified by ClientConfig since the
	// members are dialled at 127.0.0.1.
	ServerName string
}

// ClientConfig is a client's TLS configuration for the members: it trusts CAPEM alone and
// verifies ServerName. It is nil for a nil EtcdTLS (plain http).
func (e *EtcdTLS) ClientConfig() *tls.Config {
	if e == nil {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.CAPEM)
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, ServerName: e.ServerName}
}

// StartEtcd runs an etcd of one member per name on 127.0.0.1 for the test's life (the binary etcd
// of envtest's assets, in KUBEBUILDER_ASSETS) and returns the members' client URLs, in the order
// of names, once a member leads. With tlsConfig the members serve their clients over https. The
// processes are killed and their data removed when the test ends; a failed test prints their
// logs. It skips the test without the assets.
func StartEtcd(t testing.TB, tlsConfig *EtcdTLS, names ...string) []string {
	t.Helper()
	if len(names) == 0 {
		t.Fatal("StartEtcd: no member named")
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Skip("KUBEBUILDER_ASSETS is unset: export it to the envtest assets (bin/k8s/...) to run etcd")
	}
	dir := t.TempDir()
	scheme, tlsFlags := "http", []string(nil)
	if tlsConfig != nil {
		scheme, tlsFlags = "https", etcdTLSFlags(t, dir, tlsConfig)
	}
	ports, err := proc.FreePorts("127.0.0.1", 2*len(names))
	if err != nil {
		t.Fatal(err)
	}
	var clients, peers, initial []string
	for i, name := range names {
		clients = append(clients, scheme+"://127.0.0.1:"+strconv.Itoa(ports[2*i]))
		peers = append(peers, "http://127.0.0.1:"+strconv.Itoa(ports[2*i+1]))
		initial = append(initial, name+"="+peers[i])
	}
	var members []*proc.Process
	for i, name := range names {
		args := []string{"--name=" + name, "--data-dir=" + filepath.Join(dir, name),
			"--listen-client-urls=" + clients[i], "--advertise-client-urls=" + clients[i],
			"--listen-peer-urls=" + peers[i], "--initial-advertise-peer-urls=" + peers[i],
			"--initial-cluster=" + strings.Join(initial, ","), "--unsafe-no-fsync"}
		// Killed: its data goes with the test, and a member stopping gracefully would first hand
		// its leadership on.
		members = append(members, start(t, "etcd "+name, filepath.Join(assets, "etcd"), append(args, tlsFlags...),
			filepath.Join(dir, name+".log"), syscall.SIGKILL, proc.Options{}))
	}
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig.ClientConfig()}}
	t.Cleanup(hc.CloseIdleConnections)
	waitReady(t, "etcd's leader", members, func(ctx context.Context) error { return etcdLeads(ctx, hc, clients) })
	return clients
}

// etcdTLSFlags writes the serving pair of tlsConfig into dir and returns the flags that serve
// the clients with it.
func etcdTLSFlags(t testing.TB, dir string, tlsConfig *EtcdTLS) []string {
	t.Helper()
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(cert, tlsConfig.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, tlsConfig.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--cert-file=" + cert, "--key-file=" + key}
}

// etcdLeads is nil once one of the members at clients reports itself the leader.
func etcdLeads(ctx context.Context, hc *http.Client, clients []string) error {
	var err error
	for _, client := range clients {
		var leads bool
		if leads, err = etcdIsLeader(ctx, hc, client); leads {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("no member leads: %w", err)
	}
	return errors.New("no member leads")
}

// etcdIsLeader tells whether the member at client is the leader, by its status (the gateway's
// /v3/maintenance/status: its own ID and its leader's).
func etcdIsLeader(ctx context.Context, hc *http.Client, client string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, client+"/v3/maintenance/status",
		bytes.NewReader([]byte("{}")))
	if err != nil {
		return false, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return false, err
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("%s: %s: %s", client, resp.Status, body)
	}
	var status struct {
		Header struct {
			MemberID uint64 `json:"member_id,string"`
		} `json:"header"`
		Leader uint64 `json:"leader,string"`
	}
	if err := json.Unmarshal(body, &status); err != nil {
		return false, fmt.Errorf("%s: the status is not JSON of the expected shape: %w", client, err)
	}
	return status.Leader != 0 && status.Leader == status.Header.MemberID, nil
}
