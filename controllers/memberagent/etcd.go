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

package memberagent

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Etcd is the etcd engine. It speaks to its member through etcd's v3 JSON gateway (the gRPC
// API as POST requests with JSON bodies) over net/http, so that the agent needs no etcd client
// library. The gateway writes 64-bit integers as JSON strings, which the ",string" tags read.
type Etcd struct {
	endpoint string
	hc       *http.Client
}

var _ Engine = (*Etcd)(nil)

// NewEtcd returns the engine of the member whose client URL is endpoint ("https://127.0.0.1:2379").
// tlsConfig is for an https endpoint: the cluster's CA in RootCAs, a client pair if the member
// asks for one, and a ServerName naming the member's certificate since the agent dials the
// loopback address (the operator's serving certificates carry the loopback IPs too, so it may
// also stay empty). It is nil for plain http. Each call is bounded by its context alone.
func NewEtcd(endpoint string, tlsConfig *tls.Config) *Etcd {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsConfig
	return &Etcd{endpoint: strings.TrimSuffix(endpoint, "/"), hc: &http.Client{Transport: transport}}
}

// etcdStatus is the answer of /v3/maintenance/status.
type etcdStatus struct {
	Header struct {
		MemberID uint64 `json:"member_id,string"`
	} `json:"header"`
	Leader           uint64   `json:"leader,string"`
	RaftIndex        uint64   `json:"raftIndex,string"`
	RaftAppliedIndex uint64   `json:"raftAppliedIndex,string"`
	IsLearner        bool     `json:"isLearner"`
	Errors           []string `json:"errors"`
}

// etcdMember is one member of /v3/cluster/member/list.
type etcdMember struct {
	ID         uint64   `json:"ID,string"`
	Name       string   `json:"name"`
	PeerURLs   []string `json:"peerURLs"`
	ClientURLs []string `json:"clientURLs"`
	IsLearner  bool     `json:"isLearner"`
}

// etcdMembers is the answer of the member calls.
type etcdMembers struct {
	Members []etcdMember `json:"members"`
}

// etcdID is the body of the calls that name a member by its ID.
type etcdID struct {
	ID uint64 `json:"ID,string"`
}

// Observe reports this member as the leader (primary) or a follower (replica). Its position is
// the applied raft index (the raft index where the member has none to report); it is writable
// when the cluster has a leader and the member is not a learner, since a follower forwards writes
// to the leader. etcd is never Fenced: it fences itself by quorum.
func (e *Etcd) Observe(ctx context.Context) (Observation, error) {
	var status etcdStatus
	if err := e.call(ctx, "/v3/maintenance/status", struct{}{}, &status); err != nil {
		return Observation{}, err
	}
	members, err := e.members(ctx)
	if err != nil {
		return Observation{}, err
	}
	position := status.RaftAppliedIndex
	if position == 0 {
		position = status.RaftIndex
	}
	obs := Observation{
		Role:         RoleReplica,
		Position:     position,
		PositionText: strconv.FormatUint(position, 10),
		Writable:     status.Leader != 0 && !status.IsLearner,
	}
	if status.Leader != 0 && status.Leader == status.Header.MemberID {
		obs.Role = RolePrimary
	}
	for _, m := range members {
		if m.ID == status.Header.MemberID {
			obs.Member = m.Name
		}
		obs.Members = append(obs.Members, m.peer())
	}
	return obs, nil
}

// Promote succeeds when this member is the leader already. Otherwise it is unsupported here:
// etcd moves the leadership only when the leader is asked, so the operator calls
// TransferLeadership on the leader's agent instead.
func (e *Etcd) Promote(ctx context.Context) error {
	obs, err := e.Observe(ctx)
	if err != nil {
		return err
	}
	if obs.Role == RolePrimary {
		return nil
	}
	return fmt.Errorf("%w: etcd moves its leadership only when the leader is asked; transfer it from the leader's agent", ErrUnsupported)
}

// Fence is unsupported: etcd fences itself by quorum, a leader that loses its majority steps
// down and a member without a leader refuses writes.
func (e *Etcd) Fence(context.Context) error {
	return fmt.Errorf("%w: etcd fences itself by quorum", ErrUnsupported)
}

// TransferLeadership asks this member, which must be the leader, to hand the leadership to
// the voting member named to.
func (e *Etcd) TransferLeadership(ctx context.Context, to string) error {
	members, err := e.members(ctx)
	if err != nil {
		return err
	}
	target, ok := findMember(members, to)
	if !ok {
		return fmt.Errorf("etcd has no member named %q", to)
	}
	if target.IsLearner {
		return fmt.Errorf("etcd member %q is a learner, which cannot lead", to)
	}
	body := struct {
		TargetID uint64 `json:"targetID,string"`
	}{target.ID}
	return e.call(ctx, "/v3/maintenance/transfer-leadership", body, nil)
}

// AddMember adds a member in the two steps etcd recommends, one per call: a member unknown to
// the cluster is added as a learner (a non-voting member, so that a member that has not started
// yet cannot cost the quorum), and a learner at peerURL is promoted to a voting member, which
// etcd refuses until it has caught up with the leader. The operator calls it until the member
// is seen voting; a voting member at peerURL is left as it is.
func (e *Etcd) AddMember(ctx context.Context, name, peerURL string) error {
	members, err := e.members(ctx)
	if err != nil {
		return err
	}
	if m, ok := findMember(members, name); ok && !hasPeerURL(m, peerURL) {
		return fmt.Errorf("etcd member %q has the peer URLs %v, not %s", name, m.PeerURLs, peerURL)
	}
	for _, m := range members {
		if !hasPeerURL(m, peerURL) {
			continue
		}
		if !m.IsLearner {
			return nil
		}
		return e.call(ctx, "/v3/cluster/member/promote", etcdID{m.ID}, nil)
	}
	body := struct {
		PeerURLs  []string `json:"peerURLs"`
		IsLearner bool     `json:"isLearner"`
	}{[]string{peerURL}, true}
	return e.call(ctx, "/v3/cluster/member/add", body, nil)
}

// RemoveMember removes the member name; a member that is not in the list is removed already.
func (e *Etcd) RemoveMember(ctx context.Context, name string) error {
	members, err := e.members(ctx)
	if err != nil {
		return err
	}
	m, ok := findMember(members, name)
	if !ok {
		return nil
	}
	return e.call(ctx, "/v3/cluster/member/remove", etcdID{m.ID}, nil)
}

// members is the cluster's member list.
func (e *Etcd) members(ctx context.Context) ([]etcdMember, error) {
	var list etcdMembers
	if err := e.call(ctx, "/v3/cluster/member/list", struct{}{}, &list); err != nil {
		return nil, err
	}
	return list.Members, nil
}

// call posts request to the gateway's path and decodes its answer into response (nil: ignored).
func (e *Etcd) call(ctx context.Context, path string, request, response any) error {
	body, err := json.Marshal(request)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.hc.Do(req)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return etcdError(path, resp.Status, answer)
	}
	if response == nil {
		return nil
	}
	if err := json.Unmarshal(answer, response); err != nil {
		return fmt.Errorf("etcd %s: the answer is not JSON of the expected shape: %w", path, err)
	}
	return nil
}

// etcdError is the error of a gateway answer other than 200: its message where it has one
// ({"code":9,"message":"etcdserver: ..."}), else its status and body.
func etcdError(path, status string, answer []byte) error {
	var rpc struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(answer, &rpc) == nil && rpc.Message != "" {
		return fmt.Errorf("etcd %s: %s", path, rpc.Message)
	}
	return fmt.Errorf("etcd %s answered %s: %s", path, status, strings.TrimSpace(string(answer)))
}

// findMember finds the member name in members: by its name, or, for a member that has not
// started yet (etcd learns a member's name from the member itself), by the first label of a
// peer URL's host, which is the pod's name in the operator's peer URLs
// (https://NAME-0.NAME-headless.NAMESPACE.svc:2380).
func findMember(members []etcdMember, name string) (etcdMember, bool) {
	if name == "" {
		return etcdMember{}, false
	}
	for _, m := range members {
		if m.Name == name || m.Name == "" && peerHostLabel(m) == name {
			return m, true
		}
	}
	return etcdMember{}, false
}

// peerHostLabel is the first DNS label of the host of m's first peer URL ("" if it has none).
func peerHostLabel(m etcdMember) string {
	return hostLabel(m.PeerURLs)
}

// hostLabel is the first DNS label of the host of the first of urls ("" if there is none).
func hostLabel(urls []string) string {
	if len(urls) == 0 {
		return ""
	}
	u, err := url.Parse(urls[0])
	if err != nil {
		return ""
	}
	label, _, _ := strings.Cut(u.Hostname(), ".")
	return label
}

// hasPeerURL tells whether m is reached at peerURL.
func hasPeerURL(m etcdMember, peerURL string) bool {
	return slices.Contains(m.PeerURLs, peerURL)
}

// peer is m as the engine-neutral Peer.
func (m etcdMember) peer() Peer {
	return Peer{
		Name:       m.Name,
		ID:         strconv.FormatUint(m.ID, 10),
		PeerURLs:   m.PeerURLs,
		ClientURLs: m.ClientURLs,
		Learner:    m.IsLearner,
	}
}
