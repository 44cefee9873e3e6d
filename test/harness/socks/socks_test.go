package socks_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"testing"

	"golang.org/x/net/proxy"

	"github.com/seed1b407122/database-operator/test/harness/socks"
)

// TestConnectsThroughItsResolver dials through the proxy with the SOCKS5 client OLM uses
// (golang.org/x/net/proxy, as GRPC_PROXY does): a name its resolver knows reaches the server
// behind it, one it does not know fails, and an address is dialled as it is.
func TestConnectsThroughItsResolver(t *testing.T) {
	echo := echoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	asked := make(chan string, 4)
	p, err := socks.Start(func(_ context.Context, host string) ([]string, error) {
		asked <- host
		if host == "catalog.olm.svc" {
			return []string{"127.0.0.1"}, nil
		}
		return nil, errors.New("no such host")
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	if p.URL() != "socks5://"+p.Addr {
		t.Errorf("URL() = %q", p.URL())
	}
	dialer, err := proxy.SOCKS5("tcp", p.Addr, nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"catalog.olm.svc:" + port, echo} {
		c, err := dialer.Dial("tcp", target)
		if err != nil {
			t.Fatalf("dial %s: %v", target, err)
		}
		if _, err := c.Write([]byte("ping\n")); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || line != "ping\n" {
			t.Fatalf("through %s: read %q, %v; want the echo", target, line, err)
		}
		_ = c.Close()
	}
	if got := <-asked; got != "catalog.olm.svc" {
		t.Errorf("resolver asked for %q", got)
	}
	if _, err := dialer.Dial("tcp", "other.olm.svc:"+port); err == nil {
		t.Error("a name the resolver does not know was dialled")
	}
}

// echoServer serves one line back per connection on 127.0.0.1.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				line, err := bufio.NewReader(c).ReadString('\n')
				if err == nil {
					_, _ = c.Write([]byte(line))
				}
			}()
		}
	}()
	return ln.Addr().String()
}
