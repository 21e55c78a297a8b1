package frontiertest

import (
	"bytes"
	"log/slog"
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
