// Package logtest keeps what a part logs while its test runs, for the test
// to read.
package logtest

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

// Buffer is a log's text, safe for the part writing it and the test
// reading it at once. Its zero value is empty and ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write adds p.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is all that was written.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Lines are its lines, none when nothing was written.
func (l *Buffer) Lines() []string {
	s := strings.TrimSpace(l.String())
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Logger is a text logger that writes into l.
func (l *Buffer) Logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }
