// Package testdb is the small key/value database of the real-node tests: the store and the TCP
// server that test/harness/operands/images/testdb runs inside database-operator.test/testdb:v1, and the
// client the tests use to write data into a pod and read it back after the pod was replaced.
//
// The wire protocol is one request per line and one answer per line:
//
//	PUT <key> <value>   -> OK
//	GET <key>           -> VALUE <value> | NOTFOUND
//	COUNT               -> COUNT <n>
//	PING                -> PONG
//	anything wrong      -> ERR <text>
//
// Keys have no blanks; a value is the rest of the line (it may hold blanks, never a newline).
// The store is a single member: durability, not replication, is what the tests check. Every PUT
// is appended to <data-dir>/kv.log and fsync'ed before OK is sent, and the log is replayed at
// start, so data written through one pod is there for the next pod on the same volume.
package testdb

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// LogFile is the name of the append-only log inside the data directory.
const LogFile = "kv.log"

// MaxLine is the longest request or log record accepted, newline included.
const MaxLine = 1 << 20

// Store is an in-memory map backed by an append-only log. It is safe for concurrent use.
type Store struct {
	mu   sync.Mutex
	data map[string]string
	log  *os.File
}

// LoadInfo says what Open found in the log.
type LoadInfo struct {
	// Path of the log file.
	Path string
	// Records is the number of complete records replayed.
	Records int
	// Keys is the number of distinct keys loaded.
	Keys int
	// TornBytes is the size of an incomplete last record (a write cut short by a crash), which
	// Open truncated away; 0 when the log ended cleanly.
	TornBytes int64
}

// Open creates dir if needed, replays dir/kv.log and opens it for appending. An incomplete last
// line (no newline: the process died in the middle of a write) is dropped and cut from the file,
// so that the next record starts on a line of its own; any other malformed line is an error.
func Open(dir string) (*Store, LoadInfo, error) {
	info := LoadInfo{Path: filepath.Join(dir, LogFile)}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, info, fmt.Errorf("data directory: %w", err)
	}
	f, err := os.OpenFile(info.Path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, info, err
	}
	s := &Store{data: map[string]string{}, log: f}
	good, err := s.replay(f, &info)
	if err != nil {
		_ = f.Close()
		return nil, info, fmt.Errorf("%s: %w", info.Path, err)
	}
	if info.TornBytes > 0 {
		if err := f.Truncate(good); err != nil {
			_ = f.Close()
			return nil, info, fmt.Errorf("%s: drop torn tail: %w", info.Path, err)
		}
		if err := f.Sync(); err != nil {
			_ = f.Close()
			return nil, info, err
		}
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		_ = f.Close()
		return nil, info, err
	}
	info.Keys = len(s.data)
	return s, info, nil
}

// replay applies every complete record of r and returns the offset after the last one.
func (s *Store) replay(r io.Reader, info *LoadInfo) (int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var good int64
	for {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			info.TornBytes = int64(len(line))
			return good, nil
		}
		if err != nil {
			return good, err
		}
		key, value, perr := parsePut(string(bytes.TrimSuffix(line, []byte("\n"))))
		if perr != nil {
			return good, fmt.Errorf("record %d at offset %d: %w", info.Records+1, good, perr)
		}
		s.data[key] = value
		good += int64(len(line))
		info.Records++
	}
}

// Put records key=value in the log, fsyncs it, then makes it visible.
func (s *Store) Put(key, value string) error {
	if err := validate(key, value); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := io.WriteString(s.log, "PUT "+key+" "+value+"\n"); err != nil {
		return err
	}
	if err := s.log.Sync(); err != nil {
		return err
	}
	s.data[key] = value
	return nil
}

// Get returns the value of key and whether it exists.
func (s *Store) Get(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data[key]
	return v, ok
}

// Count returns the number of keys.
func (s *Store) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.data)
}

// Close closes the log.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.Close()
}

// parsePut reads a "PUT <key> <value>" line (a request or a log record).
func parsePut(line string) (key, value string, err error) {
	rest, ok := strings.CutPrefix(line, "PUT ")
	if !ok {
		return "", "", fmt.Errorf("not a PUT record: %.40q", line)
	}
	key, value, _ = strings.Cut(rest, " ")
	return key, value, validate(key, value)
}

// validate refuses what the line protocol cannot carry.
func validate(key, value string) error {
	switch {
	case key == "":
		return errors.New("empty key")
	case strings.ContainsAny(key, " \t\r\n"):
		return fmt.Errorf("key %.40q has blanks", key)
	case value == "":
		return errors.New("empty value")
	case strings.ContainsAny(value, "\r\n"):
		return errors.New("value has a line break")
	case len(key)+len(value)+6 > MaxLine:
		return fmt.Errorf("record longer than %d bytes", MaxLine)
	}
	return nil
}
