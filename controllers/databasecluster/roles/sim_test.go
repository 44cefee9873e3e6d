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

package roles

import (
	"fmt"
	"math/rand"
	"strings"
	"time"
)

// This file is the simulator the safety property runs Plan in: a cluster's true state, the
// agents that observe it, the operator that calls Plan and carries out its action, and the
// faults. Every check of the property is here, beside the state it reads.

// process is the state of a member's database process.
type process int

const (
	running process = iota
	// killed: the process is gone; the kubelet restarts it at restartAt.
	killed
	// frozen: SIGSTOP. The agent times out, but the database still believes what it believed,
	// and a frozen primary accepts writes again the moment it is thawed.
	frozen
	// awaitingPrimary: a replica's start waits for a primary to follow, its server not started
	// yet (the PostgreSQL image's entrypoint, when another member is announced the primary: the
	// seeds whose policy fences by deletion are PostgreSQL's); its agent finds no server
	// (memberagent.ErrStopped).
	awaitingPrimary
)

// simMember is the true state of one member.
type simMember struct {
	name    string
	ordinal int
	// podExists is false between a deletion (or the loss of its node) and recreateAt.
	podExists  bool
	recreateAt time.Time
	// terminating: the pod is deleted but the kubelet has not stopped its containers yet
	// (until goneAt; an isolated node never does, goneAt zero): its process goes on as it was.
	terminating bool
	goneAt      time.Time
	// createdAt is when the pod was last created.
	createdAt time.Time
	proc      process
	restartAt time.Time
	// readyAt: a started process is not Ready before it.
	readyAt time.Time
	// sick: running and answering, but its readiness probe fails.
	sick bool
	// primary is what the database believes, kept on its volume across restarts.
	primary bool
	// demoted: a primary fenced (PostgreSQL read-only, kept across restarts): it takes no
	// writes and replays nothing until its pod is replaced and it is rewound into a replica.
	demoted  bool
	position uint64
	upToDate bool
	// agentTimeout: the agent's answer to the next observation times out.
	agentTimeout bool
	// unavailableSince is what the pod's conditions tell: when it was first seen not Ready or
	// unreachable.
	unavailableSince time.Time
	// downByOperator: its pod was deleted by the operator and is not up again yet.
	downByOperator bool
}

// running tells whether the database process runs (not killed, not frozen) in an existing pod.
func (m *simMember) running() bool { return m.podExists && m.proc == running }

// writer tells whether the member accepts writes, or will as soon as it is thawed.
func (m *simMember) writer() bool { return m.primary && m.podExists && m.proc != killed }

// up tells whether the member is running and Ready.
func (m *simMember) up(now time.Time) bool {
	return m.running() && !m.sick && !now.Before(m.readyAt)
}

// crash is where an operator restart stops the pass it interrupts.
type crash int

const (
	noCrash crash = iota
	// crashBeforePersist: the decision is lost.
	crashBeforePersist
	// crashBeforeAction: the progress is persisted, the action not carried out.
	crashBeforeAction
)

// stepRecord is what the failure report shows of one step.
type stepRecord struct {
	step     int
	at       time.Duration
	events   []string
	observed []Member
	decision *Decision
	applied  []string
}

// String is the step as the report prints it.
func (r stepRecord) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %d at +%s\n  events: %s\n  observed:", r.step, r.at, strings.Join(r.events, "; "))
	for _, m := range r.observed {
		fmt.Fprintf(&b, " [%s %s pos=%d%s]", m.Name, m.Role, m.Position, flags(m))
	}
	if d := r.decision; d != nil {
		fmt.Fprintf(&b, "\n  decision: %s %s->%s (%s) degraded=%q progress={primary=%s switchover=%v} done=%v",
			d.Action.Kind, d.Action.Member, d.Action.Target, d.Action.Reason, d.Degraded, d.Progress.CurrentPrimary,
			d.Progress.Switchover, d.Done)
	}
	fmt.Fprintf(&b, "\n  applied: %s", strings.Join(r.applied, "; "))
	return b.String()
}

// flags are the booleans of an observed member, short.
func flags(m Member) string {
	s := ""
	for _, f := range []struct {
		on   bool
		name string
	}{{!m.Exists, " gone"}, {!m.Ready, " unready"}, {!m.Reachable, " unreachable"}, {m.Fenced, " fenced"}, {!m.UpToDate, " outdated"}} {
		if f.on {
			s += f.name
		}
	}
	return s
}

// historyLen is how many steps the failure report shows.
const historyLen = 20

// sim is a simulated cluster and its operator.
type sim struct {
	seed    int64
	rng     *rand.Rand
	plan    func(Input) Decision
	start   time.Time
	now     time.Time
	step    int
	members []*simMember
	policy  Policy
	// progress is what the operator persisted in the cluster's status: all that survives an
	// operator restart.
	progress Progress
	request  *Request
	faults   bool
	// eventChance is the chance, in percent, that a step draws an event (a step draws up to
	// two): from calm seeds, where updates finish, to stormy ones.
	eventChance int
	crash       crash
	// manualSplit: a person promoted a replica by hand, and there may be two writers until they
	// resolve it. The operator must still never promote nor delete meanwhile.
	manualSplit bool
	last        *Decision
	history     []stepRecord
	rec         *stepRecord
	// violation is the first broken invariant, "" while none is.
	violation string
	// seen counts the decisions by kind and reason, and what was carried out, for the log.
	seen map[string]int
	// quiet is how many steps it took to settle after the faults ended.
	quiet int
}

// newSim is a cluster of 1 to 5 members, member db-0 its primary, under a random policy.
func newSim(seed int64, plan func(Input) Decision) *sim {
	rng := rand.New(rand.NewSource(seed))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &sim{seed: seed, rng: rng, plan: plan, start: start, now: start, faults: true}
	for i := range 1 + rng.Intn(5) {
		s.members = append(s.members, &simMember{name: fmt.Sprintf("db-%d", i), ordinal: i, podExists: true,
			primary: i == 0, position: 100, upToDate: true})
	}
	s.progress.CurrentPrimary = "db-0"
	s.eventChance = 5 + rng.Intn(36)
	s.policy = Policy{Failover: rng.Intn(2) == 0, FailoverAfter: s.between(10, 60), FenceByDeletion: rng.Intn(2) == 0,
		SwitchoverTimeout: s.between(30, 120), UpdateMethod: []UpdateMethod{"", UpdateSwitchover, UpdateRestart}[rng.Intn(3)]}
	return s
}

// between is a random duration of lo to hi seconds.
func (s *sim) between(lo, hi int) time.Duration {
	return time.Duration(lo+s.rng.Intn(hi-lo+1)) * time.Second
}

// fail records the first violation.
func (s *sim) fail(format string, args ...any) {
	if s.violation == "" {
		s.violation = fmt.Sprintf(format, args...)
	}
}

// count counts what for the log of the property.
func (s *sim) count(what string) {
	if s.seen == nil {
		s.seen = map[string]int{}
	}
	s.seen[what]++
}

// note adds a line to the current step's record of what was carried out.
func (s *sim) note(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	s.rec.applied = append(s.rec.applied, line)
	s.count(strings.Fields(line)[0])
}

// runStep is one step: time passes, the cluster moves, faults happen, the operator passes.
func (s *sim) runStep() {
	s.step++
	s.now = s.now.Add(s.between(1, 10))
	s.rec = &stepRecord{step: s.step, at: s.now.Sub(s.start)}
	s.tick()
	if s.faults {
		s.randomEvents()
	}
	s.checkWriters("after the events")
	s.operatorPass()
	s.checkWriters("after the operator's action")
	s.checkDown()
	s.history = append(s.history, *s.rec)
	if len(s.history) > historyLen {
		s.history = s.history[1:]
	}
}

// tick is what happens without anyone's intent: the StatefulSet recreates deleted pods (at the
// update revision), the kubelet restarts killed processes, the primary takes writes and the
// replicas replay them.
func (s *sim) tick() {
	for _, m := range s.members {
		switch {
		case m.terminating && !m.goneAt.IsZero() && !s.now.Before(m.goneAt):
			m.terminating = false
			s.losePod(m, s.between(1, 10), " pod gone")
			s.rec.events = append(s.rec.events, m.name+" pod gone")
		case !m.podExists && !s.now.Before(m.recreateAt):
			m.podExists, m.upToDate, m.sick, m.demoted, m.createdAt = true, true, false, false, s.now
			s.startProcess(m)
			s.rec.events = append(s.rec.events, m.name+" pod recreated")
		case m.podExists && m.proc == killed && !s.now.Before(m.restartAt):
			s.startProcess(m)
			s.rec.events = append(s.rec.events, m.name+" process restarted")
		case m.podExists && m.proc == awaitingPrimary && (s.writerRuns() || m.name == s.announcedPrimary()):
			s.startProcess(m)
			s.rec.events = append(s.rec.events, m.name+" found its primary")
		}
	}
	s.replicate()
}

// startProcess starts m's database. The member's agent starts it as the primary only when it
// was the primary, the persisted progress names it the current primary and no switchover is in
// flight; otherwise as a replica. This is the contract Plan relies on for a member that comes
// back (see doc.go).
func (s *sim) startProcess(m *simMember) {
	m.proc = running
	m.readyAt = s.now.Add(s.between(3, 15))
	m.primary = m.primary && s.progress.Switchover == nil && s.progress.CurrentPrimary == m.name
	if s.policy.FenceByDeletion && !m.primary && m.name != s.announcedPrimary() && !s.writerRuns() {
		m.proc = awaitingPrimary
	}
}

// announcedPrimary is the member the operator tells the pods is the primary: the target of the
// switchover in flight, else the current primary. That member starts its server without waiting
// for another (as a standby until it is promoted, where it is one).
func (s *sim) announcedPrimary() string {
	if s.progress.Switchover != nil {
		return s.progress.Switchover.To
	}
	return s.progress.CurrentPrimary
}

// writerRuns tells whether a member takes writes now (a replica can follow it).
func (s *sim) writerRuns() bool {
	for _, m := range s.members {
		if m.writer() && m.running() {
			return true
		}
	}
	return false
}

// replicate moves the positions. With one writer, it takes writes while it runs; running
// replicas replay towards it, and one ahead of it (a history it does not share, left by an
// earlier primary) is rewound to it, even while it is frozen. With none (or with two, by a
// person's hand), running replicas replay towards the most advanced running member.
func (s *sim) replicate() {
	var writers []*simMember
	var source uint64
	for _, m := range s.members {
		if m.writer() {
			writers = append(writers, m)
		}
		if m.running() {
			source = max(source, m.position)
		}
	}
	if len(writers) == 1 {
		if w := writers[0]; w.running() {
			w.position += uint64(s.rng.Intn(6))
		}
		source = writers[0].position
	}
	streaming := len(writers) != 1 || writers[0].running()
	for _, m := range s.members {
		switch {
		case !m.running() || m.primary || m.demoted:
		case m.position < source && streaming:
			m.position += min(source-m.position, uint64(1+s.rng.Intn(8)))
		case m.position > source && len(writers) == 1:
			m.position = source
		}
	}
}

// checkWriters is the safety invariant itself: never two members that accept writes.
func (s *sim) checkWriters(when string) {
	var writers []string
	for _, m := range s.members {
		if m.writer() {
			writers = append(writers, m.name)
		}
	}
	if s.believers() < 2 {
		s.manualSplit = false
	}
	if len(writers) > 1 && !s.manualSplit {
		s.fail("two writers %s: %v", when, writers)
	}
}

// checkDown: never more than one member down by the operator's hand.
func (s *sim) checkDown() {
	var down []string
	for _, m := range s.members {
		if m.downByOperator && m.up(s.now) {
			m.downByOperator = false
		}
		if m.downByOperator {
			down = append(down, m.name)
		}
	}
	if len(down) > 1 {
		s.fail("members %v are all down by the operator's hand", down)
	}
}

// observe is what the agents and the pods tell the operator.
func (s *sim) observe() []Member {
	out := make([]Member, 0, len(s.members))
	for _, m := range s.members {
		reachable := m.running() && !m.agentTimeout
		stopped := m.podExists && m.proc == awaitingPrimary
		m.agentTimeout = false
		obs := Member{Name: m.name, Ordinal: m.ordinal, Exists: m.podExists && !m.terminating, Ready: m.up(s.now) && !m.terminating,
			Reachable: reachable, Role: RoleUnknown, UpToDate: m.upToDate, Fenced: s.fenced(m, reachable, stopped),
			Replacement: s.replacement(m)}
		if reachable {
			obs.Role, obs.Position = RoleReplica, m.position
			if m.primary {
				obs.Role = RolePrimary
			}
			obs.Demoted = m.demoted
		}
		if obs.Ready && obs.Reachable {
			m.unavailableSince = time.Time{}
		} else if m.unavailableSince.IsZero() {
			m.unavailableSince = s.now
		}
		obs.UnavailableSince = m.unavailableSince
		out = append(out, obs)
	}
	return out
}

// fenced is what the operator can tell of m: its pod is gone, its agent reports a replica, or
// its agent finds no server (stopped), its pod was created after the switchover in flight
// started (strictly: a pod created the moment it started may have started under the progress
// before) and it is not its target: it will start as a replica (a server that runs may have
// been promoted by a person). A terminating pod is not fenced: the one who deleted it may have
// been a person, and its database may be a primary the operator never saw (promoted by hand
// while its agent timed out).
func (s *sim) fenced(m *simMember, reachable, stopped bool) bool {
	switch {
	case !m.podExists, reachable && !m.primary:
		return true
	case m.terminating, reachable:
		return false
	default:
		return stopped && s.replacement(m)
	}
}

// replacement tells whether m's pod was created after the switchover in flight started and m is
// not its target.
func (s *sim) replacement(m *simMember) bool {
	sw := s.progress.Switchover
	return s.policy.FenceByDeletion && sw != nil && sw.To != m.name && m.createdAt.After(sw.Started)
}

// operatorPass is one pass of the operator: observe, Plan, persist the progress, act. An
// operator restart stops it before the progress is persisted or before the action.
func (s *sim) operatorPass() {
	in := Input{Members: s.observe(), Policy: s.policy, Progress: s.progress, Now: s.now, Request: s.request}
	d := s.plan(in)
	s.rec.observed, s.rec.decision, s.last = in.Members, &d, &d
	s.count(string(d.Action.Kind) + "/" + d.Action.Reason)
	if d.Done != nil {
		s.count("done " + string(d.Done.Reason))
	}
	s.checkDone(d)
	c := s.crash
	s.crash = noCrash
	if c == crashBeforePersist {
		s.note("operator restarted before persisting")
		return
	}
	s.progress = d.Progress
	s.consumeRequest(d)
	if c == crashBeforeAction {
		s.note("operator restarted before acting")
		return
	}
	s.apply(d.Action, in.Members)
}

// consumeRequest clears the request once a decision accepted, completed or refused it.
func (s *sim) consumeRequest(d Decision) {
	accepted := d.Progress.Switchover != nil && d.Progress.Switchover.Reason == SwitchRequested
	done := d.Done != nil && d.Done.Reason == SwitchRequested
	if s.request != nil && (accepted || done || d.Degraded == DegradedSwitchoverTargetNotHealthy) {
		s.request = nil
	}
}

// checkDone: a switchover or failover is reported done only when exactly one member is the
// primary in the true state, and it is the target.
func (s *sim) checkDone(d Decision) {
	if d.Done == nil {
		return
	}
	var writers []string
	for _, m := range s.members {
		if m.writer() {
			writers = append(writers, m.name)
		}
	}
	if len(writers) != 1 || writers[0] != d.Done.To {
		s.fail("switchover to %s reported done while the writers are %v", d.Done.To, writers)
	}
}

// member is the simulated member named name.
func (s *sim) member(name string) *simMember {
	for _, m := range s.members {
		if m.name == name {
			return m
		}
	}
	return nil
}

// apply carries out the action, through the agents, on the true state.
func (s *sim) apply(a Action, observed []Member) {
	m := s.member(a.Member)
	switch a.Kind {
	case ActionDeletePod:
		if a.Reason == ReasonFencingByDeletion {
			s.fenceByDeletion(m, observed)
			break
		}
		s.deletePod(m, observed)
	case ActionPromote:
		if m.running() {
			s.promote(m, observed)
		}
	case ActionFence:
		if m.running() {
			m.demoted = m.demoted || m.primary
			m.primary = false
			s.note("fenced %s", m.name)
		}
	case ActionSwitchover:
		s.switchover(m, s.member(a.Target), observed)
	}
}

// deletePod deletes m's pod for an update, after checking that no other member is down and
// that the primary is deleted only when no healthy replica could take over.
func (s *sim) deletePod(m *simMember, observed []Member) {
	for _, o := range s.members {
		if o != m && !o.up(s.now) {
			s.fail("deleted %s while %s is down", m.name, o.name)
		}
	}
	if m.writer() && s.policy.UpdateMethod != UpdateRestart {
		for _, o := range observed {
			if o.Name != m.name && healthyReplica(o) {
				s.fail("deleted the primary %s while the healthy replica %s could take over", m.name, o.Name)
			}
		}
	}
	s.beginDeletion(m)
	m.downByOperator = true
	s.note("deleted pod %s", m.name)
}

// fenceByDeletion deletes the pod of m, the unavailable primary of a failover, after checking
// that the policy allows it and that the operator saw m neither Ready nor reachable.
func (s *sim) fenceByDeletion(m *simMember, observed []Member) {
	o, _ := find(observed, m.name)
	if !s.policy.FenceByDeletion || !s.policy.Failover || o.Ready || o.Reachable || s.replacement(m) {
		s.fail("fenced %s by deleting its pod (policy %+v, observed %+v)", m.name, s.policy, o)
	}
	s.beginDeletion(m) // it was down already: the deletion takes no member down
	s.note("deleted pod %s to fence it", m.name)
}

// beginDeletion marks m's pod terminating: the kubelet stops its containers within 30 s, or,
// one time in five (an isolated node), not before the faults end.
func (s *sim) beginDeletion(m *simMember) {
	if !m.podExists || m.terminating {
		return
	}
	m.terminating, m.goneAt = true, s.now.Add(s.between(0, 30))
	if s.faults && s.rng.Intn(5) == 0 {
		m.goneAt = time.Time{}
	}
}

// switchover carries out one repetition of a switchover: demote from if it is still the
// primary, then promote to once it has replayed everything from wrote. Either half may be
// interrupted; the next repetition resumes.
func (s *sim) switchover(from, to *simMember, observed []Member) {
	if !to.running() {
		return
	}
	if from.writer() {
		if !from.running() {
			s.note("failed to demote %s", from.name)
			return
		}
		from.primary, from.demoted = false, true
		s.note("demoted %s", from.name)
		if s.rng.Intn(3) == 0 {
			s.note("switchover interrupted")
			return
		}
	}
	if from != to && (!from.running() || to.position < from.position) {
		s.note("waiting for %s to catch up with %s", to.name, from.name)
		return
	}
	s.promote(to, observed)
}

// promote makes m the primary, after checking that no other member may still write and that no
// healthy replica the operator saw is further along.
func (s *sim) promote(m *simMember, observed []Member) {
	for _, o := range s.members {
		if o != m && o.writer() {
			s.fail("promoted %s while %s may still write", m.name, o.name)
		}
	}
	for _, o := range observed {
		if o.Name != m.name && healthyReplica(o) && o.Position > m.position {
			s.fail("promoted %s at %d behind the healthy replica %s at %d", m.name, m.position, o.Name, o.Position)
		}
	}
	s.note("promoted %s", m.name)
	s.newHistory(m)
}

// newHistory makes m a primary. The promotion starts a new history at m's position: whatever
// another member holds beyond it is on the old one, to be rewound, and is no longer comparable
// (an agent reports the position on the current history: PostgreSQL's timeline, etcd's term).
func (s *sim) newHistory(m *simMember) {
	m.primary = true
	for _, o := range s.members {
		o.position = min(o.position, m.position)
	}
}

// event is one fault or change from outside the operator; it returns what it did, or "" when it
// did not apply to the member drawn.
type event func(s *sim, m *simMember) string

// events are the faults and changes, each with its weight in the draw.
var events = []struct {
	weight int
	do     event
}{
	{3, func(s *sim, m *simMember) string {
		if !m.podExists || m.proc == killed {
			return ""
		}
		m.proc, m.restartAt = killed, s.now.Add(s.between(5, 90))
		return m.name + " killed"
	}},
	{3, func(s *sim, m *simMember) string {
		if !m.running() {
			return ""
		}
		m.proc = frozen
		return m.name + " frozen"
	}},
	{4, func(_ *sim, m *simMember) string {
		if !m.podExists || m.proc != frozen {
			return ""
		}
		m.proc = running
		return m.name + " thawed"
	}},
	{2, func(s *sim, m *simMember) string {
		if !m.podExists || m.proc == killed {
			return ""
		}
		m.proc, m.restartAt = killed, s.now
		return m.name + " restarting"
	}},
	{2, func(s *sim, m *simMember) string {
		if !m.podExists || m.terminating {
			return ""
		}
		s.beginDeletion(m)
		return m.name + " pod deleted by someone else"
	}},
	{1, func(s *sim, m *simMember) string { return s.losePod(m, s.between(30, 120), " node gone") }},
	{4, func(_ *sim, m *simMember) string {
		m.agentTimeout = true
		return m.name + " agent timeout"
	}},
	{2, func(_ *sim, m *simMember) string {
		if !m.running() || m.sick {
			return ""
		}
		m.sick = true
		return m.name + " readiness failing"
	}},
	{3, func(_ *sim, m *simMember) string {
		if !m.sick {
			return ""
		}
		m.sick = false
		return m.name + " readiness back"
	}},
	{2, func(s *sim, _ *simMember) string {
		for _, o := range s.members {
			o.upToDate = false
		}
		return "spec changed"
	}},
	{2, func(s *sim, m *simMember) string {
		to := ""
		if s.rng.Intn(2) == 0 {
			to = m.name
		}
		s.request = &Request{To: to}
		return fmt.Sprintf("switchover to %q requested", to)
	}},
	{1, func(s *sim, _ *simMember) string {
		switch s.rng.Intn(3) {
		case 0:
			s.policy.Failover = !s.policy.Failover
		case 1:
			s.policy.UpdateMethod = []UpdateMethod{UpdateSwitchover, UpdateRestart}[s.rng.Intn(2)]
		default:
			s.policy.FailoverAfter = s.between(0, 60)
		}
		return fmt.Sprintf("policy now %+v", s.policy)
	}},
	{1, func(s *sim, m *simMember) string {
		if !m.running() || m.primary {
			return ""
		}
		s.newHistory(m)
		s.manualSplit = true
		return m.name + " promoted by hand"
	}},
	{3, func(s *sim, _ *simMember) string { return s.resolveByHand() }},
	{2, func(s *sim, _ *simMember) string {
		s.crash = []crash{crashBeforePersist, crashBeforeAction}[s.rng.Intn(2)]
		return "operator restart"
	}},
}

// eventWeights is the sum of the events' weights.
var eventWeights = func() int {
	sum := 0
	for _, e := range events {
		sum += e.weight
	}
	return sum
}()

// believers counts the members whose database believes it is the primary, up or not.
func (s *sim) believers() int {
	n := 0
	for _, m := range s.members {
		if m.primary {
			n++
		}
	}
	return n
}

// resolveByHand is a person ending a split brain they made: of the members that believe they
// are the primary, up or not, the one further behind is demoted.
func (s *sim) resolveByHand() string {
	var writers []*simMember
	for _, m := range s.members {
		if m.primary {
			writers = append(writers, m)
		}
	}
	if len(writers) < 2 {
		return ""
	}
	behind := writers[0]
	for _, w := range writers[1:] {
		if w.position < behind.position {
			behind = w
		}
	}
	behind.primary = false
	return behind.name + " demoted by hand"
}

// losePod deletes m's pod (its process dies with it); the StatefulSet recreates it after delay.
func (s *sim) losePod(m *simMember, delay time.Duration, what string) string {
	if !m.podExists {
		return ""
	}
	m.podExists, m.terminating, m.proc, m.recreateAt = false, false, killed, s.now.Add(delay)
	return m.name + what
}

// randomEvents draws the step's faults and changes.
func (s *sim) randomEvents() {
	for range 2 {
		if s.rng.Intn(100) >= s.eventChance {
			continue
		}
		n := s.rng.Intn(eventWeights)
		for _, e := range events {
			if n -= e.weight; n < 0 {
				if what := e.do(s, s.members[s.rng.Intn(len(s.members))]); what != "" {
					s.rec.events = append(s.rec.events, what)
				}
				break
			}
		}
	}
}

// heal ends the faults: no more events, frozen processes thawed, failing readiness back, and
// failover on (with failover off, a primary fenced earlier waits for a person). The spec changes
// once more, so that settling means an update finished.
func (s *sim) heal() {
	s.faults = false
	for _, m := range s.members {
		if m.proc == frozen {
			m.proc = running
		}
		m.sick, m.upToDate = false, false
		if m.terminating && m.goneAt.IsZero() {
			m.goneAt = s.now
		}
	}
	s.policy.Failover = true
	for s.resolveByHand() != "" {
	}
	s.rec = &stepRecord{step: s.step, at: s.now.Sub(s.start), events: []string{"faults end, spec changed"}}
	s.history = append(s.history, *s.rec)
}

// settled tells whether the cluster is where it should end without faults: every member up and
// up to date, one writer, no switchover in flight, and the operator waiting with nothing
// degraded.
func (s *sim) settled() bool {
	writers := 0
	for _, m := range s.members {
		if !m.up(s.now) || !m.upToDate {
			return false
		}
		if m.writer() {
			writers++
		}
	}
	return writers == 1 && s.progress.Switchover == nil && s.request == nil && s.last != nil &&
		s.last.Action.Kind == ActionWait && s.last.Degraded == ""
}

// report is the failure report: the seed and the last steps.
func (s *sim) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d (replay: go test ./controllers/databasecluster/roles/ -run TestSafetyProperty -roles.seed=%d)\n"+
		"violation at step %d: %s\npolicy: %+v\nlast steps:\n", s.seed, s.seed, s.step, s.violation, s.policy)
	for _, r := range s.history {
		b.WriteString(r.String())
		b.WriteString("\n")
	}
	return b.String()
}

// run runs faulty steps, then quiet steps until the cluster settles, and returns the first
// violation ("" when none).
func (s *sim) run(faulty, quiet int) string {
	for s.step < faulty && s.violation == "" {
		s.runStep()
	}
	if s.violation != "" {
		return s.violation
	}
	s.heal()
	for range quiet {
		s.runStep()
		s.quiet++
		if s.violation != "" || s.settled() {
			break
		}
	}
	if s.violation == "" && !s.settled() {
		s.fail("liveness: not settled %d steps after the faults ended", quiet)
	}
	return s.violation
}
