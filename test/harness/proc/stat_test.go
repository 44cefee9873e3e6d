package proc

import "testing"

func TestParseStat(t *testing.T) {
	// A comm with a space and a parenthesis, as the kernel writes it; utime 250, stime 130.
	line := "4242 (kube (api) x) S 17 4242 4242 0 -1 4194560 5000 0 0 0 250 130 0 0 20 0 12 0 100 0 0"
	got, err := ParseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{Name: "kube (api) x", PPID: 17, CPUSeconds: 3.8}
	if got != want {
		t.Fatalf("ParseStat = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "1 (x S 2", "1 (x) S 2 3"} {
		if _, err := ParseStat(bad); err == nil {
			t.Errorf("ParseStat(%q) did not fail", bad)
		}
	}
}
