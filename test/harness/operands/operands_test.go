package operands_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seed1b407122/database-operator/test/harness/operands"
)

// TestStartEtcd: three members start as one cluster, each listing the three at its client URL, and
// StartEtcd returns once one of them leads; a nil EtcdTLS is plain http.
func TestStartEtcd(t *testing.T) {
	clients := operands.StartEtcd(t, nil, "m0", "m1", "m2")
	if len(clients) != 3 {
		t.Fatalf("clients = %v, want 3", clients)
	}
	for _, client := range clients {
		if !strings.HasPrefix(client, "http://127.0.0.1:") {
			t.Fatalf("client URL %s, want http on 127.0.0.1", client)
		}
		resp, err := http.Post(client+"/v3/cluster/member/list", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Members []struct {
				Name string `json:"name"`
			} `json:"members"`
		}
		err = json.NewDecoder(resp.Body).Decode(&list)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || len(list.Members) != 3 {
			t.Fatalf("the member list of %s: %s, %+v, %v; want 3 members", client, resp.Status, list, err)
		}
	}
	if (*operands.EtcdTLS)(nil).ClientConfig() != nil {
		t.Fatal("a nil EtcdTLS has a TLS configuration")
	}
}

// TestPostgreSQLPrimaryAndReplica: a primary with a password refuses the wrong one and takes
// the right one, and its replica has the primary's rows and is read-only.
func TestPostgreSQLPrimaryAndReplica(t *testing.T) {
	h := operands.NewPostgreSQLHost(t)
	const password = "p@ss w'rd/1"
	primary := h.StartPrimary(t, operands.PostgreSQL{Password: password})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wrong := strings.Replace(primary.DSN, "w%27rd", "nope", 1)
	if wrong == primary.DSN {
		t.Fatalf("the DSN %s does not hold the password as expected", primary.DSN)
	}
	if conn, err := pgx.Connect(ctx, wrong); err == nil {
		_ = conn.Close(ctx)
		t.Fatal("the primary took a wrong password")
	}
	exec(ctx, t, primary.DSN, "CREATE TABLE t (v int); INSERT INTO t VALUES (1)")
	replica := h.StartReplica(t, primary)
	if replica.Address == primary.Address {
		t.Fatalf("the replica listens at the primary's address %s", replica.Address)
	}
	conn := connect(ctx, t, replica.DSN)
	var inRecovery bool
	var rows int
	if err := conn.QueryRow(ctx, "SELECT pg_is_in_recovery(), (SELECT count(*) FROM t)").Scan(&inRecovery, &rows); err != nil {
		t.Fatal(err)
	}
	if !inRecovery || rows != 1 {
		t.Fatalf("the replica: in recovery %t with %d rows, want a standby with 1", inRecovery, rows)
	}
}

// connect opens a session for the test's life.
func connect(ctx context.Context, t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// exec runs sql in a session of its own.
func exec(ctx context.Context, t *testing.T, dsn, sql string) {
	t.Helper()
	if _, err := connect(ctx, t, dsn).Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
}
