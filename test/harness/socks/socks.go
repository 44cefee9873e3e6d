// Package socks is a SOCKS5 proxy (RFC 1928: CONNECT, no authentication) on 127.0.0.1 that
// resolves host names with a resolver of its own. OLM's catalog operator dials its catalog
// sources' registry pods at <service>.<namespace>.svc:50051 through GRPC_PROXY when it runs
// outside the cluster (the Hypershift way); on the real node it runs on the host, where only the
// cluster's DNS knows those names.
package socks

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Resolve returns the addresses of host.
type Resolve func(ctx context.Context, host string) ([]string, error)

// Proxy is a running SOCKS5 proxy. Close it when done.
type Proxy struct {
	// Addr is 127.0.0.1:port.
	Addr    string
	ln      net.Listener
	resolve Resolve
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
}

const (
	version5        = 5
	methodNoAuth    = 0
	methodNone      = 0xff
	cmdConnect      = 1
	atypIPv4        = 1
	atypDomain      = 3
	atypIPv6        = 4
	repSucceeded    = 0
	repFailure      = 1
	repHostUnreach  = 4
	repCmdNotSupp   = 7
	handshakeWithin = 10 * time.Second
	dialWithin      = 10 * time.Second
)

// Start listens on 127.0.0.1 (any free port) and serves until Close.
func Start(resolve Resolve) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("socks proxy: %w", err)
	}
	p := &Proxy{Addr: ln.Addr().String(), ln: ln, resolve: resolve, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// URL is the proxy as GRPC_PROXY takes it.
func (p *Proxy) URL() string { return "socks5://" + p.Addr }

// Close stops listening, closes every open connection and waits for their goroutines.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.handle(c)
		}()
	}
}

// track records c as open (false once Close has begun: the caller closes c).
func (p *Proxy) track(c net.Conn, open bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if open {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
}

func (p *Proxy) handle(client net.Conn) {
	p.track(client, true)
	defer p.track(client, false)
	defer func() { _ = client.Close() }()
	_ = client.SetDeadline(time.Now().Add(handshakeWithin))
	host, port, err := handshake(client)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), dialWithin)
	upstream, rep := p.dial(ctx, host, port)
	cancel()
	if err := reply(client, rep); err != nil || upstream == nil {
		if upstream != nil {
			_ = upstream.Close()
		}
		return
	}
	p.track(upstream, true)
	defer p.track(upstream, false)
	defer func() { _ = upstream.Close() }()
	_ = client.SetDeadline(time.Time{})
	pipe(client, upstream)
}

// dial resolves host (unless it is an address) and connects to the first address that answers.
func (p *Proxy) dial(ctx context.Context, host, port string) (net.Conn, byte) {
	addrs := []string{host}
	if net.ParseIP(host) == nil {
		var err error
		if addrs, err = p.resolve(ctx, host); err != nil || len(addrs) == 0 {
			return nil, repHostUnreach
		}
	}
	var d net.Dialer
	for _, a := range addrs {
		if c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(a, port)); err == nil {
			return c, repSucceeded
		}
	}
	return nil, repHostUnreach
}

// handshake reads the greeting and the request and returns where to connect; it answers a
// greeting without "no authentication" and a request other than CONNECT itself.
func handshake(c net.Conn) (host, port string, err error) {
	var head [2]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		return "", "", err
	}
	methods := make([]byte, head[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return "", "", err
	}
	if head[0] != version5 || !slices.Contains(methods, methodNoAuth) {
		_, _ = c.Write([]byte{version5, methodNone})
		return "", "", errors.New("socks: no acceptable method")
	}
	if _, err := c.Write([]byte{version5, methodNoAuth}); err != nil {
		return "", "", err
	}
	var req [4]byte
	if _, err := io.ReadFull(c, req[:]); err != nil {
		return "", "", err
	}
	if req[0] != version5 || req[1] != cmdConnect {
		_ = reply(c, repCmdNotSupp)
		return "", "", errors.New("socks: only CONNECT")
	}
	if host, err = readHost(c, req[3]); err != nil {
		_ = reply(c, repFailure)
		return "", "", err
	}
	var pb [2]byte
	if _, err := io.ReadFull(c, pb[:]); err != nil {
		return "", "", err
	}
	return host, strconv.Itoa(int(binary.BigEndian.Uint16(pb[:]))), nil
}

func readHost(c net.Conn, atyp byte) (string, error) {
	switch atyp {
	case atypIPv4, atypIPv6:
		ip := make([]byte, map[byte]int{atypIPv4: 4, atypIPv6: 16}[atyp])
		if _, err := io.ReadFull(c, ip); err != nil {
			return "", err
		}
		return net.IP(ip).String(), nil
	case atypDomain:
		var n [1]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return "", err
		}
		name := make([]byte, n[0])
		if _, err := io.ReadFull(c, name); err != nil {
			return "", err
		}
		return string(name), nil
	}
	return "", fmt.Errorf("socks: address type %d", atyp)
}

// reply sends a reply with rep and an unspecified bound address.
func reply(c net.Conn, rep byte) error {
	_, err := c.Write([]byte{version5, rep, 0, atypIPv4, 0, 0, 0, 0, 0, 0})
	return err
}

// pipe copies both ways until either side ends.
func pipe(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	_ = a.Close()
	_ = b.Close()
	<-done
}
