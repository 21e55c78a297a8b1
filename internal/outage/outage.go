// Package outage is how Frontier waits out a dependency (Kafka, HBase) that is down: a bounded exponential
// backoff with jitter for the retry loops, and a Tracker per dependency that turns many failing calls into one
// outage, logged once when it starts and once when it ends, timed for a metric, and reported to the readiness
// endpoint while it lasts.
//
// A restart of Kafka or HBase is an everyday event, not a reason to exit: the clients in bus/kafkabus and hbase
// retry every call whose error may clear up by itself, for as long as the caller's context allows, and report
// through a Tracker. Only what retrying cannot fix (a missing topic or table, a bad address) is returned.
//
// outage imports only the standard library; it sits at level 0 so that any package may use it.
package outage

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// Backoff yields exponentially growing waits from Min to Max, each with jitter (a random value in [d/2, d]), so
// that many clients retrying against a restarting server do not retry in lockstep. The zero value is not usable;
// Reset it or build it with NewBackoff. Not safe for concurrent use.
type Backoff struct {
	Min, Max time.Duration
	cur      time.Duration
}

// NewBackoff returns a Backoff from lo to hi (hi < lo is raised to lo).
func NewBackoff(lo, hi time.Duration) *Backoff {
	if lo <= 0 {
		lo = time.Millisecond
	}
	return &Backoff{Min: lo, Max: max(lo, hi)}
}

// Next returns the next wait.
func (b *Backoff) Next() time.Duration {
	if b.cur < b.Min {
		b.cur = b.Min
	} else {
		b.cur = min(2*b.cur, b.Max)
	}
	half := b.cur / 2
	return half + rand.N(half+1)
}

// Reset starts again from Min.
func (b *Backoff) Reset() { b.cur = 0 }

// Sleep waits d or until ctx ends; it reports whether the whole wait passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Tracker follows the availability of one dependency from the outcomes of the calls to it. The first failure
// after a success starts an outage (logged at Warn with the error); the first success after failures ends it
// (logged at Info with its duration, which is passed to OnRecover, e.g. to add it to a wait-time counter).
// Safe for concurrent use.
type Tracker struct {
	name string
	log  *slog.Logger
	// OnChange, if set before use, is called with true when an outage starts and false when it ends.
	OnChange func(down bool)
	// OnRecover, if set before use, is called with the length of each outage when it ends.
	OnRecover func(time.Duration)

	mu struct {
		sync.Mutex
		since   time.Time // start of the current outage; zero when the dependency is up
		lastErr error
		fails   int64
	}
}

// NewTracker returns a tracker of the dependency name ("Kafka at 127.0.0.1:9092"). log may be nil.
func NewTracker(name string, log *slog.Logger) *Tracker {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Tracker{name: name, log: log}
}

// Name is the dependency's name.
func (t *Tracker) Name() string { return t.name }

// Failed records a call that failed with a transient error; wait is how long the caller backs off next.
func (t *Tracker) Failed(err error, wait time.Duration) {
	t.mu.Lock()
	start := t.mu.since.IsZero()
	if start {
		t.mu.since = time.Now()
	}
	t.mu.lastErr = err
	t.mu.fails++
	t.mu.Unlock()
	if start {
		t.log.Warn("waiting for "+t.name, "err", err, "retry_in", wait.Round(time.Millisecond))
		if t.OnChange != nil {
			t.OnChange(true)
		}
	}
}

// Succeeded records a call that succeeded, which ends an outage if one was in progress.
func (t *Tracker) Succeeded() {
	t.mu.Lock()
	if t.mu.since.IsZero() {
		t.mu.Unlock()
		return
	}
	d, fails := time.Since(t.mu.since), t.mu.fails
	t.mu.since, t.mu.lastErr, t.mu.fails = time.Time{}, nil, 0
	t.mu.Unlock()
	t.log.Info(t.name+" reachable again", "waited", d.Round(time.Millisecond), "failed_calls", fails)
	if t.OnRecover != nil {
		t.OnRecover(d)
	}
	if t.OnChange != nil {
		t.OnChange(false)
	}
}

// Err returns nil while the dependency is up, and otherwise an error saying since when it is unreachable and
// why: what a readiness probe shows.
func (t *Tracker) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.since.IsZero() {
		return nil
	}
	return fmt.Errorf("waiting for %s for %s: %w", t.name, time.Since(t.mu.since).Round(time.Second), t.mu.lastErr)
}

// Down reports whether an outage is in progress, and since when.
func (t *Tracker) Down() (bool, time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.mu.since.IsZero(), t.mu.since
}
