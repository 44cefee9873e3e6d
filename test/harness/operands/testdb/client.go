package testdb

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds a dial and each request of a Client.
const DefaultTimeout = 5 * time.Second

// ServerError is an "ERR <text>" answer.
type ServerError struct {
	// Text is what followed "ERR ".
	Text string
}

func (e *ServerError) Error() string { return "testdb: " + e.Text }

// Client speaks the line protocol over one TCP connection. Requests are serialised; it is safe
// for concurrent use.
type Client struct {
	// Timeout bounds each request (write and answer); DefaultTimeout unless changed.
	Timeout time.Duration

	mu   sync.Mutex
	conn net.Conn
	r    *bufio.Reader
}

// Dial connects to a testdb server at addr (host:port) within DefaultTimeout.
func Dial(addr string) (*Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	return DialContext(ctx, addr)
}

// DialContext connects to a testdb server at addr (host:port).
func DialContext(ctx context.Context, addr string) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &Client{Timeout: DefaultTimeout, conn: conn, r: bufio.NewReader(conn)}, nil
}

// Put stores value under key; it returns once the server has fsync'ed it.
func (c *Client) Put(key, value string) error {
	if err := validate(key, value); err != nil {
		return err
	}
	answer, err := c.do("PUT " + key + " " + value)
	if err != nil {
		return err
	}
	if answer != "OK" {
		return fmt.Errorf("testdb: unexpected answer %.60q to PUT", answer)
	}
	return nil
}

// Get returns the value of key, and false when the server does not have it.
func (c *Client) Get(key string) (string, bool, error) {
	if key == "" || strings.ContainsAny(key, " \t\r\n") {
		return "", false, fmt.Errorf("testdb: invalid key %.40q", key)
	}
	answer, err := c.do("GET " + key)
	if err != nil {
		return "", false, err
	}
	if answer == "NOTFOUND" {
		return "", false, nil
	}
	v, ok := strings.CutPrefix(answer, "VALUE ")
	if !ok {
		return "", false, fmt.Errorf("testdb: unexpected answer %.60q to GET", answer)
	}
	return v, true, nil
}

// Count returns the number of keys the server holds.
func (c *Client) Count() (int, error) {
	answer, err := c.do("COUNT")
	if err != nil {
		return 0, err
	}
	n, ok := strings.CutPrefix(answer, "COUNT ")
	if !ok {
		return 0, fmt.Errorf("testdb: unexpected answer %.60q to COUNT", answer)
	}
	return strconv.Atoi(n)
}

// Ping checks that the server answers.
func (c *Client) Ping() error {
	answer, err := c.do("PING")
	if err != nil {
		return err
	}
	if answer != "PONG" {
		return fmt.Errorf("testdb: unexpected answer %.60q to PING", answer)
	}
	return nil
}

// Close closes the connection.
func (c *Client) Close() error {
	return c.conn.Close()
}

// do sends one request line and returns the answer line; "ERR ..." becomes a *ServerError.
func (c *Client) do(request string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.conn.SetDeadline(time.Now().Add(c.Timeout)); err != nil {
		return "", err
	}
	if _, err := c.conn.Write([]byte(request + "\n")); err != nil {
		return "", err
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("testdb: reading the answer: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if text, ok := strings.CutPrefix(line, "ERR "); ok {
		return "", &ServerError{Text: text}
	}
	return line, nil
}
