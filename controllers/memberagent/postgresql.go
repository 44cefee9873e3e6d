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
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgreSQL is the PostgreSQL engine. It connects to the local server for each call (the calls
// are few, and a connection kept open would not survive the server's restarts) as a superuser:
// ALTER SYSTEM, pg_promote and pg_terminate_backend need one.
type PostgreSQL struct {
	member string
	dsn    string
	// stepDownWait is how long Fence waits for the server to come back as a standby.
	stepDownWait time.Duration
}

var _ Engine = (*PostgreSQL)(nil)

// PromoteWaitSeconds is how long Promote waits for the server to leave recovery.
const PromoteWaitSeconds = 60

// terminateWaitMillis is how long Fence waits for each session it ends to be gone.
const terminateWaitMillis = 5000

// NewPostgreSQL returns the engine of the member named member whose server dsn reaches
// ("host=127.0.0.1 port=5432 user=postgres ...").
func NewPostgreSQL(member, dsn string) *PostgreSQL {
	return &PostgreSQL{member: member, dsn: dsn, stepDownWait: StepDownSeconds * time.Second}
}

// observeQuery reads the role, the fence and the position of the server. A replica's position
// is the greater of the WAL received (flushed by the WAL receiver) and replayed: a promotion
// replays all that was received before it opens for writes, so that is what the member would
// hold as the primary; the received position alone is NULL when the replica is not streaming
// (just restarted, or restoring from the archive). It is NULL if there is neither.
const observeQuery = `SELECT pg_is_in_recovery(),
	current_setting('default_transaction_read_only') = 'on',
	(CASE WHEN pg_is_in_recovery()
		THEN greatest(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())
		ELSE pg_current_wal_lsn() END)::text`

// Observe reports the server as the primary unless it is in recovery; it is writable as a
// primary without the fence (default_transaction_read_only).
func (p *PostgreSQL) Observe(ctx context.Context) (Observation, error) {
	conn, err := p.connect(ctx)
	if err != nil {
		return Observation{}, err
	}
	defer p.close(conn)
	var inRecovery, readOnly bool
	var lsn *string
	if err := conn.QueryRow(ctx, observeQuery).Scan(&inRecovery, &readOnly, &lsn); err != nil {
		return Observation{}, fmt.Errorf("observe PostgreSQL: %w", err)
	}
	obs := Observation{Member: p.member, Role: RolePrimary, Writable: !inRecovery && !readOnly, Fenced: readOnly}
	if inRecovery {
		obs.Role = RoleReplica
	}
	if lsn != nil {
		if obs.Position, err = ParseLSN(*lsn); err != nil {
			return Observation{}, err
		}
		obs.PositionText = *lsn
	}
	return obs, nil
}

// Promote makes the server the writable primary: a replica is promoted (pg_promote, waiting up
// to PromoteWaitSeconds), and then the fence is lifted, which a replica may carry from the
// primary it was copied from (postgresql.auto.conf is in the data directory). It promotes
// first so that ALTER SYSTEM runs on a primary; a fenced primary is simply unfenced.
func (p *PostgreSQL) Promote(ctx context.Context) error {
	conn, err := p.connect(ctx)
	if err != nil {
		return err
	}
	defer p.close(conn)
	inRecovery, err := isInRecovery(ctx, conn)
	if err != nil {
		return err
	}
	if inRecovery {
		var promoted bool
		if err := conn.QueryRow(ctx, "SELECT pg_promote(true, $1)", PromoteWaitSeconds).Scan(&promoted); err != nil {
			return fmt.Errorf("promote: %w", err)
		}
		if !promoted {
			return fmt.Errorf("the server did not leave recovery within %d seconds", PromoteWaitSeconds)
		}
	}
	if err := setAndReload(ctx, conn, "ALTER SYSTEM RESET default_transaction_read_only"); err != nil {
		return err
	}
	return checkpointTimeline(ctx, conn)
}

// checkpointTimeline makes the server's control file name the timeline it writes on: after a
// promotion PostgreSQL only requests a spread checkpoint (minutes), and until it completes
// pg_rewind, reading the new primary's control file, finds the old primary "on the same
// timeline" and rewinds nothing; the old primary then cannot follow ("requested timeline does
// not contain minimum recovery point"). A primary whose checkpoint names its timeline already
// is left alone.
func checkpointTimeline(ctx context.Context, conn *pgx.Conn) error {
	var current bool
	err := conn.QueryRow(ctx, `SELECT timeline_id = ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int
		FROM pg_control_checkpoint()`).Scan(&current)
	if err != nil {
		return fmt.Errorf("read the checkpoint's timeline: %w", err)
	}
	if current {
		return nil
	}
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		return fmt.Errorf("checkpoint the new timeline: %w", err)
	}
	return nil
}

// Fence makes the server a standby, which takes no writes at all, in two steps:
//
//  1. At once, it stops the server accepting writes from the sessions that follow the
//     defaults, without stopping it: default_transaction_read_only is set (ALTER SYSTEM, kept
//     over a restart) and the configuration reloaded, waiting until its own session has
//     reloaded, which the postmaster signals once it has itself; then every other client
//     session with an open transaction is ended (pg_terminate_backend, waiting for each to be
//     gone), since such a transaction may have begun read-write before the reload
//     (pg_stat_activity does not tell a read-only transaction from one that has not written
//     yet). Idle sessions take the new default at their next transaction; WAL senders are kept.
//     This is a default, not a lock: a client that asks for it (BEGIN READ WRITE, SET
//     default_transaction_read_only = off) can still write.
//  2. It asks the server to step down (the file demote.signal in the data directory, written by
//     the server itself: the agent runs in another container) and waits up to StepDownSeconds
//     for it to answer as a standby. The project's image (hack/postgres/entrypoint) stops the
//     server, which sends its last WAL to the replicas connected, and starts it again as a
//     standby: that excludes every write, and leaves no WAL on the old timeline that the new
//     primary lacks. An image that does not step down stays fenced read-only (step 1); Fence
//     then returns without error, and the operator rejoins it by replacing its pod once the
//     new primary is in place.
//
// A standby is fenced already: Fence changes nothing on it.
func (p *PostgreSQL) Fence(ctx context.Context) error {
	asked, err := p.askStepDown(ctx)
	if err != nil || !asked {
		return err
	}
	return p.awaitStandby(ctx)
}

// askStepDown is Fence's first step and its request to step down, on a session that ends before
// Fence waits (the server's shutdown waits for its sessions). A standby is not asked (false).
func (p *PostgreSQL) askStepDown(ctx context.Context) (bool, error) {
	conn, err := p.connect(ctx)
	if err != nil {
		return false, err
	}
	defer p.close(conn)
	inRecovery, err := isInRecovery(ctx, conn)
	if err != nil || inRecovery {
		return false, err
	}
	if err := fenceReadOnly(ctx, conn); err != nil {
		return false, err
	}
	if _, err := conn.Exec(ctx, requestStepDown); err != nil {
		return false, fmt.Errorf("ask the server to step down: %w", err)
	}
	return true, nil
}

// StepDownSeconds is how long Fence waits for the server to come back as a standby.
const StepDownSeconds = 15

// requestStepDown writes the empty file demote.signal into the data directory (COPY needs an
// absolute path, and takes it only as a literal).
const requestStepDown = `DO $$ BEGIN
	EXECUTE format('COPY (SELECT 1 WHERE false) TO %L', current_setting('data_directory') || '/demote.signal');
END $$`

// fenceReadOnly is Fence's first step on conn's server.
func fenceReadOnly(ctx context.Context, conn *pgx.Conn) error {
	if err := setAndReload(ctx, conn, "ALTER SYSTEM SET default_transaction_read_only = on"); err != nil {
		return err
	}
	var alive int
	err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE NOT pg_terminate_backend(pid, $1))
		FROM pg_stat_activity
		WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND xact_start IS NOT NULL`,
		terminateWaitMillis).Scan(&alive)
	if err != nil {
		return fmt.Errorf("end the sessions with open transactions: %w", err)
	}
	if alive > 0 {
		return fmt.Errorf("%d sessions with open transactions were still there %d ms after they were told to end", alive, terminateWaitMillis)
	}
	return nil
}

// awaitStandby waits up to stepDownWait for the server to answer in recovery. A server that
// answers as a primary at the end has not stepped down (its image does not): it is left fenced
// read-only. One that does not answer is an error: the operator asks again on its next pass.
func (p *PostgreSQL) awaitStandby(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, p.stepDownWait)
	defer cancel()
	var last error
	for {
		inRecovery, err := p.inRecovery(ctx)
		switch {
		case err == nil && inRecovery:
			return nil
		case err == nil:
			last = nil
		default:
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("the server did not come back as a standby within %s: %w", p.stepDownWait, last)
			}
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// inRecovery tells whether the server is a standby, on a session of its own.
func (p *PostgreSQL) inRecovery(ctx context.Context) (bool, error) {
	conn, err := p.connect(ctx)
	if err != nil {
		return false, err
	}
	defer p.close(conn)
	return isInRecovery(ctx, conn)
}

// isInRecovery tells whether conn's server is a standby.
func isInRecovery(ctx context.Context, conn *pgx.Conn) (bool, error) {
	var inRecovery bool
	if err := conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&inRecovery); err != nil {
		return false, fmt.Errorf("observe PostgreSQL: %w", err)
	}
	return inRecovery, nil
}

// TransferLeadership is unsupported: a PostgreSQL primary cannot hand its role over; the
// operator fences it and promotes the replica.
func (p *PostgreSQL) TransferLeadership(context.Context, string) error {
	return fmt.Errorf("%w: PostgreSQL cannot hand its role over; fence the primary and promote the replica", ErrUnsupported)
}

// AddMember is unsupported: a replica joins by streaming from the primary, which keeps no
// member list to change.
func (p *PostgreSQL) AddMember(context.Context, string, string) error {
	return fmt.Errorf("%w: PostgreSQL keeps no member list; a replica joins by streaming from the primary", ErrUnsupported)
}

// RemoveMember is unsupported, as AddMember is.
func (p *PostgreSQL) RemoveMember(context.Context, string) error {
	return fmt.Errorf("%w: PostgreSQL keeps no member list; a replica leaves by stopping", ErrUnsupported)
}

// setAndReload runs the ALTER SYSTEM statement alter, reloads the configuration and waits until
// conn's session has loaded it (pg_conf_load_time moves on): the postmaster signals the
// sessions only once it has reloaded itself, so from then on a new session sees the change.
// alter is run alone: ALTER SYSTEM cannot run in a transaction, which a query of several
// statements is.
func setAndReload(ctx context.Context, conn *pgx.Conn, alter string) error {
	var loaded time.Time
	if err := conn.QueryRow(ctx, "SELECT pg_conf_load_time()").Scan(&loaded); err != nil {
		return fmt.Errorf("read the configuration's load time: %w", err)
	}
	if _, err := conn.Exec(ctx, alter); err != nil {
		return fmt.Errorf("%s: %w", alter, err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("reload the configuration: %w", err)
	}
	for {
		var now time.Time
		if err := conn.QueryRow(ctx, "SELECT pg_conf_load_time()").Scan(&now); err != nil {
			return fmt.Errorf("read the configuration's load time: %w", err)
		}
		if now.After(loaded) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the configuration was not reloaded: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// connect opens a session to the server.
func (p *PostgreSQL) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, p.dsn)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return nil, fmt.Errorf("connect to PostgreSQL: %w: %w", ErrStopped, err)
	}
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	return conn, nil
}

// close ends the session, within a second whatever the call's context.
func (p *PostgreSQL) close(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = conn.Close(ctx)
}

// ParseLSN reads a PostgreSQL WAL position as the server writes it, two hexadecimal numbers of
// up to 32 bits ("16/B374D848"), into the 64-bit position it stands for (0x16B374D848).
func ParseLSN(text string) (uint64, error) {
	high, low, ok := strings.Cut(text, "/")
	if !ok {
		return 0, fmt.Errorf("LSN %q: no '/'", text)
	}
	h, err := parseHalf(high)
	if err != nil {
		return 0, fmt.Errorf("LSN %q: %w", text, err)
	}
	l, err := parseHalf(low)
	if err != nil {
		return 0, fmt.Errorf("LSN %q: %w", text, err)
	}
	return h<<32 | l, nil
}

// parseHalf reads one half of an LSN: 1 to 8 hexadecimal digits.
func parseHalf(text string) (uint64, error) {
	if text == "" || len(text) > 8 {
		return 0, errors.New("each half must have 1 to 8 hexadecimal digits")
	}
	return strconv.ParseUint(text, 16, 32)
}
