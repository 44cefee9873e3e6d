package proc

import (
	"net"
	"strconv"
	"testing"
)

func TestFreePortsDifferAndAreFree(t *testing.T) {
	ports, err := FreePorts("127.0.0.1", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 5 {
		t.Fatalf("FreePorts(5) = %v, want 5 ports", ports)
	}
	seen := map[int]bool{}
	for _, port := range ports {
		if seen[port] {
			t.Fatalf("FreePorts(5) = %v: port %d twice", ports, port)
		}
		seen[port] = true
		// Released on return: a child can bind it.
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("port %d of FreePorts is not free: %v", port, err)
		}
		_ = l.Close()
	}
}

func TestFreePortOnAnAddressNotOfThisHost(t *testing.T) {
	// 192.0.2.0/24 is TEST-NET-1: no interface of this machine has it.
	if port, err := FreePort("192.0.2.1"); err == nil {
		t.Fatalf("FreePort(192.0.2.1) = %d, nil; want an error", port)
	}
}

func TestClosed(t *testing.T) {
	done := make(chan struct{})
	if Closed(done) {
		t.Fatal("Closed = true for an open channel")
	}
	close(done)
	if !Closed(done) {
		t.Fatal("Closed = false for a closed channel")
	}
}
