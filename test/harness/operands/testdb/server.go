package testdb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
)

// Serve answers the line protocol on ln with st until ctx is done, then closes the listener and
// every open connection and returns nil. Any other accept error is returned.
func Serve(ctx context.Context, ln net.Listener, st *Store) error {
	var (
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
		wg    sync.WaitGroup
	)
	stop := context.AfterFunc(ctx, func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for c := range conns {
			_ = c.Close()
		}
	})
	defer stop()
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		mu.Lock()
		conns[c] = struct{}{}
		mu.Unlock()
		wg.Go(func() {
			serveConn(c, st)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		})
	}
}

// serveConn answers one connection's requests in order until it closes.
func serveConn(c net.Conn, st *Store) {
	defer func() { _ = c.Close() }()
	r := bufio.NewReaderSize(c, 64<<10)
	w := bufio.NewWriter(c)
	for {
		line, err := readLine(r)
		if errors.Is(err, errLineTooLong) {
			_, _ = fmt.Fprintf(w, "ERR request longer than %d bytes\n", MaxLine)
			_ = w.Flush()
			return // the rest of that line cannot be told apart from the next request
		}
		if err != nil {
			return
		}
		if _, err := io.WriteString(w, Handle(st, line)+"\n"); err != nil {
			return
		}
		// Answer at once unless the client has already sent the next request (pipelining).
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its line ending, refusing lines over MaxLine.
func readLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		chunk, err := r.ReadSlice('\n')
		b = append(b, chunk...)
		if len(b) > MaxLine {
			return "", errLineTooLong
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return "", err
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
}

// Handle executes one request line against st and returns the answer line (no newline).
func Handle(st *Store, line string) string {
	cmd, rest, _ := strings.Cut(line, " ")
	switch strings.ToUpper(cmd) {
	case "PUT":
		key, value, _ := strings.Cut(rest, " ")
		if key == "" || value == "" {
			return "ERR usage: PUT <key> <value>"
		}
		if err := st.Put(key, value); err != nil {
			return "ERR " + oneLine(err)
		}
		return "OK"
	case "GET":
		if rest == "" || strings.Contains(rest, " ") {
			return "ERR usage: GET <key>"
		}
		if v, ok := st.Get(rest); ok {
			return "VALUE " + v
		}
		return "NOTFOUND"
	case "COUNT":
		return "COUNT " + strconv.Itoa(st.Count())
	case "PING":
		return "PONG"
	case "":
		return "ERR empty request"
	}
	return fmt.Sprintf("ERR unknown command %.20q (PUT, GET, COUNT, PING)", cmd)
}

// oneLine keeps an error message on the answer's single line.
func oneLine(err error) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(err.Error())
}
