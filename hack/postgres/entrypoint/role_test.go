package main

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestReadAnnouncement: the files of the announcement directory, as the downward API writes
// them (a missing annotation is an empty file).
func TestReadAnnouncement(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    map[string]string
		want     announcement
		complete bool
		err      string
	}{
		{name: "nothing yet"},
		{name: "an empty role", files: map[string]string{"role": "", "primary-host": "db-rw.ns.svc"}},
		{name: "primary", files: map[string]string{"role": "primary\n"}, want: announcement{role: rolePrimary}, complete: true},
		{name: "a primary ignores the primary's host", files: map[string]string{"role": "primary", "primary-host": "elsewhere"},
			want: announcement{role: rolePrimary}, complete: true},
		{name: "replica without its primary yet", files: map[string]string{"role": "replica", "primary-host": " \n"}},
		{name: "replica, default port", files: map[string]string{"role": "replica", "primary-host": "db-rw.ns.svc"},
			want: announcement{role: roleReplica, host: "db-rw.ns.svc", port: 5432}, complete: true},
		{name: "replica, empty port", files: map[string]string{"role": "replica", "primary-host": "db-rw.ns.svc", "primary-port": ""},
			want: announcement{role: roleReplica, host: "db-rw.ns.svc", port: 5432}, complete: true},
		{name: "replica, its port", files: map[string]string{"role": " replica ", "primary-host": "10.0.0.7\n", "primary-port": "6432\n"},
			want: announcement{role: roleReplica, host: "10.0.0.7", port: 6432}, complete: true},
		{name: "unknown role", files: map[string]string{"role": "leader"}, err: `unknown role "leader"`},
		{name: "a port that is no number", files: map[string]string{"role": "replica", "primary-host": "h", "primary-port": "http"},
			err: `"http" is no port`},
		{name: "a port out of range", files: map[string]string{"role": "replica", "primary-host": "h", "primary-port": "65536"},
			err: `"65536" is no port`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, complete, err := readAnnouncement(dir)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil || complete != tc.complete || got != tc.want {
				t.Fatalf("readAnnouncement = %+v, %t, %v; want %+v, %t", got, complete, err, tc.want, tc.complete)
			}
		})
	}
}

// TestNewSource: verify-full against the CA when it is mounted, prefer otherwise.
func TestNewSource(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.crt")
	a := announcement{role: roleReplica, host: "db-rw.ns.svc", port: 5432}
	without, err := newSource(a, "admin", ca)
	if err != nil || without != (source{host: "db-rw.ns.svc", port: 5432, user: "admin", sslmode: "prefer"}) {
		t.Fatalf("without a CA: %+v, %v", without, err)
	}
	if err := os.WriteFile(ca, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	with, err := newSource(a, "admin", ca)
	if err != nil || with != (source{host: "db-rw.ns.svc", port: 5432, user: "admin", sslmode: "verify-full", sslrootcert: ca}) {
		t.Fatalf("with a CA: %+v, %v", with, err)
	}
}

// TestConninfo: the connection strings of pg_basebackup, pg_rewind and primary_conninfo, quoted
// as libpq quotes them, with no password in them.
func TestConninfo(t *testing.T) {
	tls := source{host: "db-rw.ns.svc", port: 5432, user: "admin", sslmode: "verify-full", sslrootcert: "/etc/database/tls/ca.crt"}
	for _, tc := range []struct {
		name     string
		src      source
		passfile string
		extra    []string
		want     string
	}{
		{name: "TLS verified", src: tls, passfile: "/tmp/pgpass-replication",
			want: "host='db-rw.ns.svc' port=5432 user=admin passfile='/tmp/pgpass-replication' sslmode='verify-full' sslrootcert='/etc/database/tls/ca.crt'"},
		{name: "pg_rewind's database", src: tls, passfile: "/tmp/pgpass-1", extra: []string{"dbname", "postgres"},
			want: "host='db-rw.ns.svc' port=5432 user=admin passfile='/tmp/pgpass-1' sslmode='verify-full' sslrootcert='/etc/database/tls/ca.crt' dbname=postgres"},
		{name: "no CA", src: source{host: "127.0.0.1", port: 6432, user: "postgres", sslmode: "prefer"}, passfile: "/tmp/p",
			want: "host=127.0.0.1 port=6432 user=postgres passfile='/tmp/p' sslmode=prefer"},
		{name: "a user name that needs quotes", src: source{host: "h", port: 1, user: `o'neil \ co`, sslmode: "prefer"}, passfile: "p",
			want: `host=h port=1 user='o\'neil \\ co' passfile=p sslmode=prefer`},
		{name: "an empty value", src: source{host: "h", port: 1, user: "", sslmode: "prefer"}, passfile: "p",
			want: `host=h port=1 user='' passfile=p sslmode=prefer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.src.conninfo(tc.passfile, tc.extra...); got != tc.want {
				t.Fatalf("conninfo =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestCommandLines: pg_basebackup, pg_rewind and pg_isready as the entrypoint runs them.
func TestCommandLines(t *testing.T) {
	src := source{host: "db-rw.ns.svc", port: 5432, user: "admin", sslmode: "prefer"}
	conninfo := src.conninfo("/tmp/pgpass-1")
	for _, tc := range []struct {
		name      string
		got, want []string
	}{
		{name: "pg_basebackup", got: basebackupArgs("/var/lib/database/pgdata.init", conninfo),
			want: []string{"--pgdata=/var/lib/database/pgdata.init", "--dbname=" + conninfo, "--wal-method=stream",
				"--write-recovery-conf", "--checkpoint=fast", "--no-password"}},
		{name: "pg_rewind", got: rewindArgs("/var/lib/database/pgdata", conninfo, ""),
			want: []string{"--target-pgdata=/var/lib/database/pgdata", "--source-server=" + conninfo, "--progress"}},
		{name: "pg_rewind with the server's configuration file", got: rewindArgs("/var/lib/database/pgdata", conninfo, "/etc/database/config/postgresql.conf"),
			want: []string{"--target-pgdata=/var/lib/database/pgdata", "--source-server=" + conninfo, "--progress",
				"--config-file=/etc/database/config/postgresql.conf"}},
		{name: "pg_isready", got: readyArgs(src), want: []string{"--host=db-rw.ns.svc", "--port=5432", "--timeout=5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !reflect.DeepEqual(tc.got, tc.want) {
				t.Fatalf("arguments\n%q\nwant\n%q", tc.got, tc.want)
			}
			if strings.Contains(strings.Join(tc.got, " "), "password=") {
				t.Fatalf("a password in the arguments: %q", tc.got)
			}
		})
	}
}

// TestPassfileLine: every host, port and database; ':' and '\' escaped as libpq reads them.
func TestPassfileLine(t *testing.T) {
	for user, want := range map[string]string{
		"admin":  "*:*:*:admin:p\\:w\\\\d\n",
		"a:b\\c": "*:*:*:a\\:b\\\\c:p\\:w\\\\d\n",
	} {
		if got := passfileLine(user, `p:w\d`); got != want {
			t.Errorf("passfileLine(%q) = %q, want %q", user, got, want)
		}
	}
}

// TestWithPrimaryConninfo: postgresql.auto.conf keeps its other lines; primary_conninfo is set
// once, quoted as ALTER SYSTEM quotes it, and left alone when it is already so.
func TestWithPrimaryConninfo(t *testing.T) {
	const header = "# Do not edit this file manually!\n# It will be overwritten by the ALTER SYSTEM command.\n"
	const conninfo = "host=db-rw port=5432 user=admin passfile='/tmp/pgpass-replication' sslmode=prefer"
	const want = "primary_conninfo = 'host=db-rw port=5432 user=admin passfile=''/tmp/pgpass-replication'' sslmode=prefer'\n"
	for _, tc := range []struct {
		name, content, want string
		changed             bool
	}{
		{name: "no file", content: "", want: want, changed: true},
		{name: "no setting", content: header + "work_mem = '8MB'\n", want: header + "work_mem = '8MB'\n" + want, changed: true},
		{name: "no final newline", content: header + "work_mem = '8MB'", want: header + "work_mem = '8MB'\n" + want, changed: true},
		{name: "already so", content: header + want + "work_mem = '8MB'\n", want: header + want + "work_mem = '8MB'\n"},
		{name: "another host (pg_basebackup -R's, or the old primary's)",
			content: header + "primary_conninfo = 'user=admin passfile=''/tmp/pgpass-123'' host=old port=5432'\nwork_mem = '8MB'\n",
			want:    header + "work_mem = '8MB'\n" + want, changed: true},
		{name: "twice", content: header + want + "  primary_conninfo='x'\n", want: header + want, changed: true},
		{name: "a setting whose name starts alike", content: "primary_conninfo_x = 1\n", want: "primary_conninfo_x = 1\n" + want, changed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := withPrimaryConninfo(tc.content, conninfo)
			if got != tc.want || changed != tc.changed {
				t.Fatalf("withPrimaryConninfo =\n%s(changed %t)\nwant\n%s(changed %t)", got, changed, tc.want, tc.changed)
			}
		})
	}
	t.Run("quotes and backslashes", func(t *testing.T) {
		got, _ := withPrimaryConninfo("", `user='o\'neil'`)
		if want := `primary_conninfo = 'user=''o\\''neil'''` + "\n"; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

// TestSetPrimaryConninfo: the file is replaced with mode 0600, and left alone when it holds the
// setting already.
func TestSetPrimaryConninfo(t *testing.T) {
	pgdata := t.TempDir()
	path := filepath.Join(pgdata, autoConf)
	if err := os.WriteFile(path, []byte("work_mem = '8MB'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, wantChanged := range []bool{true, false} {
		changed, err := setPrimaryConninfo(pgdata, "host=h")
		if err != nil || changed != wantChanged {
			t.Fatalf("call %d: changed %t, %v; want %t", i+1, changed, err, wantChanged)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "work_mem = '8MB'\nprimary_conninfo = 'host=h'\n" {
		t.Fatalf("%s: %q, %v", path, data, err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v, %v; want mode 0600", path, info.Mode(), err)
	}
	entries, _ := os.ReadDir(pgdata)
	if len(entries) != 1 {
		t.Fatalf("%s holds %d files, want only %s", pgdata, len(entries), autoConf)
	}
}

// TestServerArgs: synchronous_standby_names is added to the server's command line only when
// the operator sets it; the default command is postgres.
func TestServerArgs(t *testing.T) {
	given := []string{"postgres", "-c", "config_file=/etc/database/config/postgresql.conf"}
	for _, tc := range []struct {
		args        []string
		synchronous string
		want        []string
	}{
		{nil, "", []string{"postgres"}},
		{given, "", given},
		{given, "ANY 1 (*)", append(slices.Clone(given), "-c", "synchronous_standby_names=ANY 1 (*)")},
		{nil, "ANY 2 (*)", []string{"postgres", "-c", "synchronous_standby_names=ANY 2 (*)"}},
	} {
		if got := serverArgs(tc.args, tc.synchronous); !slices.Equal(got, tc.want) {
			t.Errorf("serverArgs(%q, %q) = %q, want %q", tc.args, tc.synchronous, got, tc.want)
		}
	}
	if len(given) != 3 {
		t.Errorf("serverArgs changed its argument: %q", given)
	}
}

// TestRemoveStaleLock: a postmaster.pid left by a killed server is removed before anything
// starts; none there is no error.
func TestRemoveStaleLock(t *testing.T) {
	pgdata := t.TempDir()
	lock := filepath.Join(pgdata, "postmaster.pid")
	if err := os.WriteFile(lock, []byte("14\n/var/lib/database/pgdata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := removeStaleLock(pgdata); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("postmaster.pid is still there: %v", err)
	}
	if err := removeStaleLock(pgdata); err != nil {
		t.Fatalf("without a lock: %v", err)
	}
}

// TestConfigFile: the configuration file of the server's args, in each spelling.
func TestConfigFile(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"postgres", "-c", "config_file=/etc/database/config/postgresql.conf"}, "/etc/database/config/postgresql.conf"},
		{[]string{"postgres", "-cconfig_file=/a.conf"}, "/a.conf"},
		{[]string{"postgres", "--config_file=/b.conf"}, "/b.conf"},
		{[]string{"postgres", "--config-file=/c.conf"}, "/c.conf"},
		{[]string{"postgres", "-c", "max_connections=50"}, ""},
		{[]string{"postgres"}, ""},
		{nil, ""},
	} {
		if got := configFile(tc.args); got != tc.want {
			t.Errorf("configFile(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
