//go:build linux

package realnode

import "testing"

func TestTaskPID(t *testing.T) {
	const list = `TASK                                                                PID      STATUS
0b1c                                                                4242     RUNNING
dead                                                                4243     STOPPED
`
	cases := []struct {
		name, id string
		want     int
		wantErr  string
	}{
		{name: "running", id: "0b1c", want: 4242},
		{name: "stopped", id: "dead", wantErr: "container dead is STOPPED"},
		{name: "unknown", id: "nope", wantErr: "container nope has no task in containerd"},
		{name: "the header is no task", id: "TASK", wantErr: "container TASK is STATUS"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := taskPID(list, c.id)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("taskPID(%q) error = %v, want %q", c.id, err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("taskPID(%q) = %d, %v; want %d", c.id, got, err, c.want)
			}
		})
	}
}

func TestTaskCount(t *testing.T) {
	for _, c := range []struct {
		list string
		want int
	}{
		{"", 0},
		{"TASK    PID    STATUS    \n", 0},
		{"TASK    PID    STATUS    \nabc     42     RUNNING\ndef     43     STOPPED\n", 2},
		{"TASK    PID    STATUS    \nabc     42     RUNNING", 1},
	} {
		if got := taskCount(c.list); got != c.want {
			t.Errorf("taskCount(%q) = %d, want %d", c.list, got, c.want)
		}
	}
}

func TestParseProcStatus(t *testing.T) {
	got := parseProcStatus("Name:\tmanager\nUid:\t65532\t65532\t65532\t65532\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n")
	want := map[string]string{
		"Name": "manager", "Uid": "65532 65532 65532 65532", "CapEff": "0000000000000000",
		"NoNewPrivs": "1", "Seccomp": "2",
	}
	if len(got) != len(want) {
		t.Fatalf("parseProcStatus = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}
