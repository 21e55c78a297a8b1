package frontiertest

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
)

// Logger returns a logger that writes each record, as slog's text format, to tb.Log, at level Debug and up.
// Records logged after the test ended (by a goroutine that outlived it) are dropped instead of panicking.
func Logger(tb testing.TB) *slog.Logger {
	return slog.New(NewLogHandler(tb, slog.LevelDebug))
}

// NewLogHandler returns a slog.Handler that writes records of at least level to tb.Log. It is safe for
// concurrent use.
func NewLogHandler(tb testing.TB, level slog.Leveler) slog.Handler {
	w := &tbWriter{tb: tb}
	tb.Cleanup(func() { w.done.Store(true) })
	return slog.NewTextHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: dropTime})
}

// dropTime removes the time attribute: t.Log output is already ordered and the time adds only noise.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

type tbWriter struct {
	tb   testing.TB
	mu   sync.Mutex
	done atomic.Bool
}

func (w *tbWriter) Write(p []byte) (int, error) {
	if w.done.Load() {
		return len(p), nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tb.Helper()
	w.tb.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// DiscardLogger returns a logger that drops everything.
func DiscardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// SyncBuffer is a bytes.Buffer safe for concurrent use: a log written by several goroutines (a store's
// background work, a crawl's roles) and read by the test.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// LogNow logs with tb.Log and writes the same line to stderr at once, after the test's name: a test's log is
// printed only when it ends, and a test that then waits for something that will not come may be killed first
// (by its timeout, or a SIGQUIT), its log unprinted.
func LogNow(tb testing.TB, format string, args ...any) {
	tb.Helper()
	line := fmt.Sprintf(format, args...)
	fmt.Fprintf(os.Stderr, "%s: %s\n", tb.Name(), line)
	tb.Log(line)
}

// ErrorNow is LogNow for a failure: it reports with tb.Error.
func ErrorNow(tb testing.TB, format string, args ...any) {
	tb.Helper()
	line := fmt.Sprintf(format, args...)
	fmt.Fprintf(os.Stderr, "%s: %s\n", tb.Name(), line)
	tb.Error(line)
}
