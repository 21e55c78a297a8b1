// Package statetest is the conformance suite every state.Store passes (memory, Pebble, HBase, and the Cache and
// BloomStore wrappers), and benchmarks that any implementation can reuse.
//
//	func TestConformance(t *testing.T) {
//		statetest.Run(t, func(t *testing.T) state.Store { return newEmptyStore(t) },
//			statetest.WithReopen(func(t *testing.T, s state.Store) state.Store { return closeAndReopen(t, s) }))
//	}
//
// newStore must return an empty store each call; close it with t.Cleanup.
//
// It imports only state, frontier and the standard library (testing).
package statetest

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"fmt"
	"sync"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/state"
)

// Option configures Run.
type Option func(*options)

type options struct {
	reopen func(t *testing.T, s state.Store) state.Store
}

// WithReopen gives the suite a way to restart the store: reopen closes s (flushing what it must) and returns a
// new handle on the same data. Without it the restart test is skipped.
func WithReopen(reopen func(t *testing.T, s state.Store) state.Store) Option {
	return func(o *options) { o.reopen = reopen }
}

// FP returns a deterministic 20-byte fingerprint of n (SHA-1, Frontera's default).
func FP(n int) frontier.Fingerprint {
	h := sha1.Sum(fmt.Appendf(nil, "http://example.com/%d", n))
	return h[:]
}

// Run runs the conformance suite.
func Run(t *testing.T, newStore func(t *testing.T) state.Store, opts ...Option) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	tests := []struct {
		name string
		f    func(t *testing.T, s state.Store)
	}{
		{"Missing", testMissing},
		{"RoundTrip", testRoundTrip},
		{"Overwrite", testOverwrite},
		{"DuplicateInBatch", testDuplicates},
		{"MixedLengths", testMixedLengths},
		{"LargeBatch", testLargeBatch},
		{"BadArguments", testBadArgs},
		{"ConcurrentWriters", testConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, newStore(t)) })
	}
	t.Run("Reopen", func(t *testing.T) {
		if o.reopen == nil {
			t.Skip("statetest: no reopen func given")
		}
		testReopen(t, newStore(t), o.reopen)
	})
}

func get(t *testing.T, s state.Store, fps []frontier.Fingerprint) ([]state.Entry, []bool) {
	t.Helper()
	out := make([]state.Entry, len(fps))
	found := make([]bool, len(fps))
	for i := range out { // garbage the store must overwrite
		out[i] = state.Entry{State: frontier.Error, RevisitAt: -1}
		found[i] = true
	}
	if err := s.Get(t.Context(), fps, out, found); err != nil {
		t.Fatalf("Get(%d fingerprints): %v", len(fps), err)
	}
	return out, found
}

func put(t *testing.T, s state.Store, fps []frontier.Fingerprint, es []state.Entry) {
	t.Helper()
	if err := s.Put(t.Context(), fps, es); err != nil {
		t.Fatalf("Put(%d fingerprints): %v", len(fps), err)
	}
}

func testMissing(t *testing.T, s state.Store) {
	out, found := get(t, s, []frontier.Fingerprint{FP(1), FP(2)})
	for i := range out {
		if found[i] || out[i] != (state.Entry{}) {
			t.Fatalf("missing fingerprint %d: found=%v entry=%+v, want not found and the zero entry", i, found[i], out[i])
		}
	}
	if err := s.Get(t.Context(), nil, nil, nil); err != nil {
		t.Fatalf("Get of nothing: %v", err)
	}
	if err := s.Put(t.Context(), nil, nil); err != nil {
		t.Fatalf("Put of nothing: %v", err)
	}
}

func testRoundTrip(t *testing.T, s state.Store) {
	fps := []frontier.Fingerprint{FP(1), FP(2), FP(3), FP(4), FP(5), FP(6)}
	es := []state.Entry{
		{State: frontier.NotCrawled},
		{State: frontier.Queued},
		{State: frontier.Crawled, RevisitAt: 1_700_000_000},
		{State: frontier.Error, RevisitAt: 1},
		{State: frontier.Crawled, RevisitAt: 1 << 40}, // past 2106: must not be truncated to 32 bits
		{State: frontier.Queued, RevisitAt: 4_294_967_295},
	}
	put(t, s, fps, es)
	query := append([]frontier.Fingerprint{FP(99)}, fps...)
	out, found := get(t, s, query)
	if found[0] || out[0] != (state.Entry{}) {
		t.Fatalf("unknown fingerprint: found=%v %+v", found[0], out[0])
	}
	for i := range fps {
		if !found[i+1] || out[i+1] != es[i] {
			t.Fatalf("fingerprint %d: found=%v %+v, want %+v", i, found[i+1], out[i+1], es[i])
		}
	}
}

func testOverwrite(t *testing.T, s state.Store) {
	fp := []frontier.Fingerprint{FP(1)}
	put(t, s, fp, []state.Entry{{State: frontier.Queued}})
	put(t, s, fp, []state.Entry{{State: frontier.Crawled, RevisitAt: 42}})
	out, found := get(t, s, fp)
	if !found[0] || out[0] != (state.Entry{State: frontier.Crawled, RevisitAt: 42}) {
		t.Fatalf("after overwrite: %v %+v", found[0], out[0])
	}
	put(t, s, fp, []state.Entry{{State: frontier.Queued}})
	if out, _ := get(t, s, fp); out[0] != (state.Entry{State: frontier.Queued}) {
		t.Fatalf("revisit time not cleared by an overwrite: %+v", out[0])
	}
}

func testDuplicates(t *testing.T, s state.Store) {
	fps := []frontier.Fingerprint{FP(1), FP(2), FP(1)}
	put(t, s, fps, []state.Entry{{State: frontier.Queued}, {State: frontier.Queued}, {State: frontier.Crawled}})
	out, found := get(t, s, []frontier.Fingerprint{FP(1), FP(1), FP(2)})
	if !found[0] || !found[1] || out[0].State != frontier.Crawled || out[1].State != frontier.Crawled {
		t.Fatalf("duplicate fingerprint in one Put: %v %+v, want the last (CRAWLED)", found, out)
	}
}

func testMixedLengths(t *testing.T, s state.Store) {
	long := FP(7)
	m := md5.Sum([]byte("x"))
	short := frontier.Fingerprint(m[:])
	prefix := long[:16] // a 16-byte key that is a prefix of a 20-byte one
	put(t, s, []frontier.Fingerprint{long, short}, []state.Entry{{State: frontier.Crawled}, {State: frontier.Error}})
	out, found := get(t, s, []frontier.Fingerprint{long, short, prefix})
	if !found[0] || !found[1] || found[2] || out[0].State != frontier.Crawled || out[1].State != frontier.Error {
		t.Fatalf("mixed lengths: found %v entries %+v", found, out)
	}
}

func testLargeBatch(t *testing.T, s state.Store) {
	const n = 20_000
	fps := make([]frontier.Fingerprint, n)
	es := make([]state.Entry, n)
	for i := range fps {
		fps[i] = FP(i)
		es[i] = state.Entry{State: frontier.State(i % 4), RevisitAt: int64(i)}
	}
	put(t, s, fps[:n/2], es[:n/2])
	out, found := get(t, s, fps)
	for i := range fps {
		if want := i < n/2; found[i] != want || (want && out[i] != es[i]) || (!want && out[i] != (state.Entry{})) {
			t.Fatalf("fingerprint %d of %d: found=%v %+v", i, n, found[i], out[i])
		}
	}
}

func testBadArgs(t *testing.T, s state.Store) {
	ctx := t.Context()
	fps := []frontier.Fingerprint{FP(1), FP(2)}
	if err := s.Get(ctx, fps, make([]state.Entry, 1), make([]bool, 2)); err == nil {
		t.Error("Get with a short out slice: no error")
	}
	if err := s.Get(ctx, fps, make([]state.Entry, 2), make([]bool, 1)); err == nil {
		t.Error("Get with a short found slice: no error")
	}
	if err := s.Put(ctx, fps, make([]state.Entry, 1)); err == nil {
		t.Error("Put with fewer entries than fingerprints: no error")
	}
	if err := s.Put(ctx, []frontier.Fingerprint{{}}, make([]state.Entry, 1)); err == nil {
		t.Error("Put of an empty fingerprint: no error")
	}
	if err := s.Put(ctx, fps[:1], []state.Entry{{State: 9}}); err == nil {
		t.Error("Put of state 9: no error")
	}
}

func testConcurrent(t *testing.T, s state.Store) {
	const writers, per = 8, 500
	var wg sync.WaitGroup
	errs := make(chan error, writers*2)
	for w := range writers {
		wg.Go(func() {
			fps := make([]frontier.Fingerprint, per)
			es := make([]state.Entry, per)
			for i := range fps {
				fps[i] = FP(w*per + i)
				es[i] = state.Entry{State: frontier.Crawled, RevisitAt: int64(w)}
			}
			for lo := 0; lo < per; lo += 100 {
				if err := s.Put(context.Background(), fps[lo:lo+100], es[lo:lo+100]); err != nil {
					errs <- err
					return
				}
				out, found := make([]state.Entry, 100), make([]bool, 100)
				if err := s.Get(context.Background(), fps[lo:lo+100], out, found); err != nil {
					errs <- err
					return
				}
				for i := range out {
					if !found[i] || out[i] != es[lo+i] {
						errs <- fmt.Errorf("writer %d reads back %v %+v", w, found[i], out[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	fps := make([]frontier.Fingerprint, writers*per)
	for i := range fps {
		fps[i] = FP(i)
	}
	out, found := get(t, s, fps)
	for i := range fps {
		if !found[i] || out[i].RevisitAt != int64(i/per) {
			t.Fatalf("fingerprint %d after concurrent writers: %v %+v", i, found[i], out[i])
		}
	}
}

func testReopen(t *testing.T, s state.Store, reopen func(*testing.T, state.Store) state.Store) {
	const n = 1000
	fps := make([]frontier.Fingerprint, n)
	es := make([]state.Entry, n)
	for i := range fps {
		fps[i] = FP(i)
		es[i] = state.Entry{State: frontier.State(1 + i%3), RevisitAt: int64(i * 1000)}
	}
	put(t, s, fps[:n/2], es[:n/2])
	s = reopen(t, s)
	put(t, s, fps[n/2:], es[n/2:])
	s = reopen(t, s)
	query := append(fps, FP(n), FP(n+1))
	out, found := get(t, s, query)
	for i := range query {
		if want := i < n; found[i] != want || (want && out[i] != es[i]) {
			t.Fatalf("fingerprint %d after reopen: found=%v %+v", i, found[i], out[i])
		}
	}
}
