// Package queuetest is the conformance suite every queue.Queue passes (memory, Pebble, HBase), and benchmarks
// that any implementation can reuse.
//
// Use it from a _test.go file:
//
//	func TestConformance(t *testing.T) {
//		queuetest.Run(t, func(t *testing.T) queue.Queue { return newEmptyQueue(t) },
//			queuetest.WithReopen(func(t *testing.T, q queue.Queue) queue.Queue { return closeAndReopen(t, q) }))
//	}
//
// newQueue must return an empty queue each call (the suite runs many subtests, possibly one after another on
// the same server); close it with t.Cleanup. The suite assumes a score resolution of at least 100 buckets
// (scores 0.01 apart may tie, scores 0.05 apart must be ordered) and uses partitions 0 to 7.
//
// It imports only queue, frontier and the standard library (testing).
package queuetest

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/queue"
)

// Option configures Run.
type Option func(*options)

type options struct {
	reopen func(t *testing.T, q queue.Queue) queue.Queue
}

// WithReopen gives the suite a way to restart the store: reopen closes q and returns a new handle on the same
// data (a new process would see the same). Without it the restart tests are skipped.
func WithReopen(reopen func(t *testing.T, q queue.Queue) queue.Queue) Option {
	return func(o *options) { o.reopen = reopen }
}

// FP returns a deterministic 20-byte fingerprint for s (SHA-1, as Frontera's default).
func FP(s string) frontier.Fingerprint {
	h := sha1.Sum([]byte(s))
	return h[:]
}

// Item builds a due item of partition p, host and score, with a request naming its URL.
func Item(p int, host string, n int, score float64) queue.Item {
	url := fmt.Sprintf("http://%s/%d", host, n)
	return queue.Item{Partition: p, Host: host, Fingerprint: FP(url), Score: score, Request: []byte(url)}
}

// Run runs the conformance suite.
func Run(t *testing.T, newQueue func(t *testing.T) queue.Queue, opts ...Option) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	tests := []struct {
		name string
		f    func(t *testing.T, q queue.Queue)
	}{
		{"EmptyQueue", testEmpty},
		{"RoundTrip", testRoundTrip},
		{"ScheduleTwiceOneRow", testScheduleTwice},
		{"DuplicateInOneBatch", testDuplicateInBatch},
		{"RescheduleMovesPartition", testReschedulePartition},
		{"BestScoreFirst", testBestFirst},
		{"PartitionsIsolated", testPartitions},
		{"PerHostCapKeepsSkipped", testPerHostCap},
		{"MinHosts", testMinHosts},
		{"HostCap", testHostCap},
		{"NothingRemovedUntilAck", testNoRemoveUntilAck},
		{"AckWrongPartition", testAckWrongPartition},
		{"AckKeepsRescheduled", testAckKeepsRescheduled},
		{"NotBefore", testNotBefore},
		{"ScoreRangePerItem", testScoreRange},
		{"InvalidItems", testInvalidItems},
		{"ConcurrentWriters", testConcurrent},
		{"DrainAll", testDrain},
		{"ScheduleAfterAck", testScheduleAfterAck},
		{"ScheduleDuringNext", testScheduleDuringNext},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, newQueue(t)) })
	}
	t.Run("Reopen", func(t *testing.T) {
		if o.reopen == nil {
			t.Skip("queuetest: no reopen func given")
		}
		testReopen(t, newQueue(t), o.reopen)
	})
}

func schedule(t *testing.T, q queue.Queue, items ...queue.Item) {
	t.Helper()
	if err := q.Schedule(t.Context(), items); err != nil {
		t.Fatalf("Schedule: %v", err)
	}
}

func next(t *testing.T, q queue.Queue, p int, now int64, lim queue.Limits) []queue.Item {
	t.Helper()
	got, err := q.Next(t.Context(), p, now, lim)
	if err != nil {
		t.Fatalf("Next(%d, %d, %+v): %v", p, now, lim, err)
	}
	if lim.Max >= 0 && len(got) > lim.Max {
		t.Fatalf("Next(%d, %+v) returned %d items, over Max", p, lim, len(got))
	}
	seen := map[string]bool{}
	for _, it := range got {
		if seen[string(it.Fingerprint)] {
			t.Fatalf("Next returned fingerprint %x twice", []byte(it.Fingerprint))
		}
		seen[string(it.Fingerprint)] = true
		if it.Partition != p {
			t.Fatalf("Next(%d) returned an item of partition %d", p, it.Partition)
		}
	}
	return got
}

func ack(t *testing.T, q queue.Queue, items []queue.Item) {
	t.Helper()
	if err := q.Ack(t.Context(), items); err != nil {
		t.Fatalf("Ack: %v", err)
	}
}

func count(t *testing.T, q queue.Queue, p int, want int64) {
	t.Helper()
	n, err := q.Count(t.Context(), p)
	if err != nil {
		t.Fatalf("Count(%d): %v", p, err)
	}
	if n != want {
		t.Fatalf("Count(%d) = %d, want %d", p, n, want)
	}
}

func urls(items []queue.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = string(it.Request)
	}
	return out
}

func hosts(items []queue.Item) map[string]int {
	m := map[string]int{}
	for _, it := range items {
		m[it.Host]++
	}
	return m
}

var all = queue.Limits{Max: 1 << 20}

func testEmpty(t *testing.T, q queue.Queue) {
	if got := next(t, q, 0, 0, queue.Limits{Max: 10}); len(got) != 0 {
		t.Fatalf("Next on empty queue = %v", urls(got))
	}
	count(t, q, 0, 0)
	ack(t, q, nil)
	ack(t, q, []queue.Item{Item(0, "a.example", 1, 0.5)}) // acking what is not there is no error
	schedule(t, q)
	if got := next(t, q, 0, 0, queue.Limits{Max: 0}); len(got) != 0 {
		t.Fatalf("Next with Max 0 = %v", urls(got))
	}
}

func testRoundTrip(t *testing.T, q queue.Queue) {
	in := queue.Item{Partition: 3, Host: "www.example.com", Fingerprint: FP("x"), Score: 0.375, NotBefore: 1000,
		Request: []byte{0x94, 0, 0xff, 'r'}}
	schedule(t, q, in)
	in.Fingerprint[0] ^= 0xff // the queue must have copied the caller's slices
	in.Fingerprint[0] ^= 0xff
	got := next(t, q, 3, 1000, queue.Limits{Max: 5})
	if len(got) != 1 {
		t.Fatalf("got %d items, want 1", len(got))
	}
	g := got[0]
	if g.Partition != 3 || g.Host != in.Host || !g.Fingerprint.Equal(in.Fingerprint) || g.Score != in.Score ||
		g.NotBefore != in.NotBefore || string(g.Request) != string(in.Request) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", g, in)
	}
	count(t, q, 3, 1)
	ack(t, q, got)
	count(t, q, 3, 0)
}

func testScheduleTwice(t *testing.T, q queue.Queue) {
	a := Item(0, "a.example", 1, 0.2)
	schedule(t, q, a)
	a2 := a
	a2.Score, a2.Request = 0.9, []byte("second")
	schedule(t, q, a2) // a replay or a re-score: one row, the later wins
	schedule(t, q, a2) // a pure replay
	count(t, q, 0, 1)
	got := next(t, q, 0, 0, all)
	if len(got) != 1 || got[0].Score != 0.9 || string(got[0].Request) != "second" {
		t.Fatalf("after scheduling twice got %+v, want one item with score 0.9", got)
	}
	ack(t, q, got)
	count(t, q, 0, 0)
	if got := next(t, q, 0, 0, all); len(got) != 0 {
		t.Fatalf("after ack, Next = %v (a stale duplicate row?)", urls(got))
	}
}

func testDuplicateInBatch(t *testing.T, q queue.Queue) {
	a := Item(0, "a.example", 1, 0.3)
	b := a
	b.Score, b.Request = 0.6, []byte("last")
	schedule(t, q, a, Item(0, "a.example", 2, 0.1), b)
	count(t, q, 0, 2)
	got := next(t, q, 0, 0, all)
	if len(got) != 2 || string(got[0].Request) != "last" || got[0].Score != 0.6 {
		t.Fatalf("got %v, want the last of the duplicates first", urls(got))
	}
}

func testReschedulePartition(t *testing.T, q queue.Queue) {
	a := Item(0, "a.example", 1, 0.5)
	schedule(t, q, a)
	a.Partition = 1
	schedule(t, q, a)
	count(t, q, 0, 0)
	count(t, q, 1, 1)
	if got := next(t, q, 0, 0, all); len(got) != 0 {
		t.Fatalf("partition 0 still returns %v after the URL moved", urls(got))
	}
	if got := next(t, q, 1, 0, all); len(got) != 1 {
		t.Fatalf("partition 1 returns %d items, want 1", len(got))
	}
}

func testBestFirst(t *testing.T, q queue.Queue) {
	var items []queue.Item
	for i := range 20 { // one host each, scores 0.00, 0.05, ... 0.95 in a scrambled order
		n := (i * 7) % 20
		items = append(items, Item(0, fmt.Sprintf("h%02d.example", n), n, float64(n)*0.05))
	}
	schedule(t, q, items...)
	got := next(t, q, 0, 0, queue.Limits{Max: 5})
	want := []string{"http://h19.example/19", "http://h18.example/18", "http://h17.example/17", "http://h16.example/16", "http://h15.example/15"}
	if !slices.Equal(urls(got), want) {
		t.Fatalf("Next = %v, want best first %v", urls(got), want)
	}
	schedule(t, q, Item(0, "top.example", 0, 1), Item(0, "zero.example", 0, 0))
	got = next(t, q, 0, 0, queue.Limits{Max: 1})
	if len(got) != 1 || got[0].Host != "top.example" {
		t.Fatalf("score 1 is not first: %v", urls(got))
	}
	got = next(t, q, 0, 0, all)
	if len(got) != 22 {
		t.Fatalf("Next(all) = %d items, want 22", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score > got[i-1].Score+0.01 {
			t.Fatalf("item %d (score %v) after item %d (score %v): not best first", i, got[i].Score, i-1, got[i-1].Score)
		}
	}
}

func testPartitions(t *testing.T, q queue.Queue) {
	for p := range 8 {
		for n := range p + 1 {
			schedule(t, q, Item(p, fmt.Sprintf("p%d.example", p), n, 0.5))
		}
	}
	for p := range 8 {
		count(t, q, p, int64(p+1))
		if got := next(t, q, p, 0, all); len(got) != p+1 {
			t.Fatalf("partition %d: %d items, want %d", p, len(got), p+1)
		}
	}
}

func testPerHostCap(t *testing.T, q queue.Queue) {
	for n := range 10 {
		schedule(t, q, Item(0, "a.example", n, 0.9-float64(n)*0.01), Item(0, "b.example", n, 0.5-float64(n)*0.01))
	}
	lim := queue.Limits{Max: 8, PerHost: 3}
	got := next(t, q, 0, 0, lim)
	h := hosts(got)
	if len(got) != 6 || h["a.example"] != 3 || h["b.example"] != 3 {
		t.Fatalf("Next(%+v) = %v, want 3 of each host", lim, urls(got))
	}
	count(t, q, 0, 20) // Next removed nothing, not even the rows the cap skipped (Frontera #393)
	ack(t, q, got)
	count(t, q, 0, 14)
	seen := map[string]bool{}
	for _, u := range urls(got) {
		seen[u] = true
	}
	for round := 0; ; round++ {
		got = next(t, q, 0, 0, lim)
		if len(got) == 0 {
			break
		}
		for host, n := range hosts(got) {
			if n > 3 {
				t.Fatalf("round %d: host %s has %d items, cap 3", round, host, n)
			}
		}
		for _, u := range urls(got) {
			if seen[u] {
				t.Fatalf("round %d: %s returned again after its ack", round, u)
			}
			seen[u] = true
		}
		ack(t, q, got)
	}
	if len(seen) != 20 {
		t.Fatalf("drained %d distinct URLs under the cap, want all 20", len(seen))
	}
	count(t, q, 0, 0)
}

func testMinHosts(t *testing.T, q queue.Queue) {
	for n := range 10 {
		schedule(t, q, Item(0, "a.example", n, 0.95-float64(n)*0.01))
	}
	schedule(t, q, Item(0, "b.example", 0, 0.3), Item(0, "c.example", 0, 0.2), Item(0, "d.example", 0, 0.1))

	got := next(t, q, 0, 0, queue.Limits{Max: 4})
	if h := hosts(got); len(got) != 4 || h["a.example"] != 4 {
		t.Fatalf("MinHosts 0: %v, want the 4 best, all of a.example", urls(got))
	}
	got = next(t, q, 0, 0, queue.Limits{Max: 4, MinHosts: 3})
	if h := hosts(got); len(got) != 4 || len(h) < 3 {
		t.Fatalf("MinHosts 3: %v, want 4 items over at least 3 hosts", urls(got))
	}
	if got[0].Request == nil || string(got[0].Request) != "http://a.example/0" {
		t.Fatalf("MinHosts 3: first item %v, want the best item http://a.example/0", urls(got))
	}
	got = next(t, q, 0, 0, queue.Limits{Max: 4, MinHosts: 10})
	if h := hosts(got); len(got) != 4 || len(h) != 4 {
		t.Fatalf("MinHosts 10 with 4 hosts: %v, want one item of each host", urls(got))
	}
	got = next(t, q, 0, 0, queue.Limits{Max: 20, MinHosts: 10})
	if len(got) != 13 {
		t.Fatalf("MinHosts above the hosts available: %d items, want all 13", len(got))
	}
	count(t, q, 0, 13)
}

func testNoRemoveUntilAck(t *testing.T, q queue.Queue) {
	for n := range 10 {
		schedule(t, q, Item(0, fmt.Sprintf("h%d.example", n%3), n, float64(n)/10))
	}
	lim := queue.Limits{Max: 4}
	a := next(t, q, 0, 0, lim)
	b := next(t, q, 0, 0, lim)
	if !slices.Equal(urls(a), urls(b)) {
		t.Fatalf("two Next calls without Ack differ: %v vs %v", urls(a), urls(b))
	}
	count(t, q, 0, 10)
	ack(t, q, a[:2])
	count(t, q, 0, 8)
	c := next(t, q, 0, 0, all)
	for _, u := range urls(c) {
		if u == string(a[0].Request) || u == string(a[1].Request) {
			t.Fatalf("acked %s still returned", u)
		}
	}
	if len(c) != 8 {
		t.Fatalf("after acking 2 of 10, Next(all) = %d items", len(c))
	}
	ack(t, q, a[:2]) // a replayed ack
	count(t, q, 0, 8)
}

func testAckWrongPartition(t *testing.T, q queue.Queue) {
	a := Item(2, "a.example", 1, 0.5)
	schedule(t, q, a)
	wrong := a
	wrong.Partition = 1
	ack(t, q, []queue.Item{wrong})
	count(t, q, 2, 1)
}

// testAckKeepsRescheduled: a row scheduled again with another request while its first request was on its way
// (a retry the strategy worker scheduled before the DB worker acknowledged the batch) survives the Ack of the
// item taken; an Ack of the current request removes it.
func testAckKeepsRescheduled(t *testing.T, q queue.Queue) {
	a := Item(0, "a.example", 1, 0.5)
	schedule(t, q, a, Item(0, "a.example", 2, 0.5))
	got := next(t, q, 0, 0, all)
	if len(got) != 2 {
		t.Fatalf("Next: %d items, want 2", len(got))
	}
	retry := a
	retry.Request = append([]byte(nil), "retry of "+string(a.Request)...)
	schedule(t, q, retry)
	ack(t, q, got)
	count(t, q, 0, 1)
	left := next(t, q, 0, 0, all)
	if len(left) != 1 || string(left[0].Request) != string(retry.Request) {
		t.Fatalf("after the Ack: %v, want the retry only", urls(left))
	}
	ack(t, q, left)
	count(t, q, 0, 0)
}

func testNotBefore(t *testing.T, q queue.Queue) {
	const now = 1_700_000_000
	later := Item(0, "a.example", 1, 1)
	later.NotBefore = now + 100
	due := Item(0, "a.example", 2, 0.1)
	due.NotBefore = now - 5
	schedule(t, q, later, due, Item(0, "b.example", 3, 0.2))
	count(t, q, 0, 3)
	got := next(t, q, 0, now, all)
	if len(got) != 2 || slices.Contains(urls(got), string(later.Request)) {
		t.Fatalf("at now: %v, want the 2 due items only", urls(got))
	}
	if got := next(t, q, 0, now+99, all); len(got) != 2 {
		t.Fatalf("1 s before due: %v", urls(got))
	}
	got = next(t, q, 0, now+100, queue.Limits{Max: 1})
	if len(got) != 1 || string(got[0].Request) != string(later.Request) {
		t.Fatalf("when due: %v, want %s first (best score)", urls(got), later.Request)
	}
	// Re-scheduling moves the due time both ways.
	later.NotBefore = 0
	schedule(t, q, later)
	if got := next(t, q, 0, now, queue.Limits{Max: 1}); len(got) != 1 || string(got[0].Request) != string(later.Request) {
		t.Fatalf("re-scheduled as due now: %v", urls(got))
	}
	later.NotBefore = now + 1000
	schedule(t, q, later)
	if got := next(t, q, 0, now+999, all); slices.Contains(urls(got), string(later.Request)) {
		t.Fatalf("re-scheduled for later but still returned: %v", urls(got))
	}
	count(t, q, 0, 3)
}

func testScoreRange(t *testing.T, q queue.Queue) {
	items := []queue.Item{
		Item(0, "a.example", 0, 0.5),
		Item(0, "a.example", 1, -0.1),
		Item(0, "a.example", 2, 1.5),
		Item(0, "a.example", 3, math.NaN()),
		Item(0, "a.example", 4, 0),
		Item(0, "a.example", 5, 1),
		Item(0, "a.example", 6, math.Inf(1)),
	}
	err := q.Schedule(t.Context(), items)
	var se *queue.ScheduleError
	if !errors.As(err, &se) {
		t.Fatalf("Schedule with bad scores: %v, want a *queue.ScheduleError", err)
	}
	var idx []int
	for _, e := range se.Items {
		idx = append(idx, e.Index)
		if !errors.Is(e.Err, queue.ErrScoreRange) {
			t.Errorf("item %d: %v, want ErrScoreRange", e.Index, e.Err)
		}
	}
	if !slices.Equal(idx, []int{1, 2, 3, 6}) {
		t.Fatalf("rejected items %v, want [1 2 3 6]", idx)
	}
	count(t, q, 0, 3)
	got := next(t, q, 0, 0, all)
	if want := []string{"http://a.example/5", "http://a.example/0", "http://a.example/4"}; !slices.Equal(urls(got), want) {
		t.Fatalf("stored %v, want %v", urls(got), want)
	}
}

func testInvalidItems(t *testing.T, q queue.Queue) {
	noFP := Item(0, "a.example", 1, 0.5)
	noFP.Fingerprint = nil
	negP := Item(-1, "a.example", 2, 0.5)
	err := q.Schedule(t.Context(), []queue.Item{noFP, Item(0, "a.example", 3, 0.5), negP})
	var se *queue.ScheduleError
	if !errors.As(err, &se) || len(se.Items) != 2 || se.Items[0].Index != 0 || se.Items[1].Index != 2 {
		t.Fatalf("Schedule with no fingerprint and a negative partition: %v, want items 0 and 2 rejected", err)
	}
	count(t, q, 0, 1)
}

func testConcurrent(t *testing.T, q queue.Queue) {
	const writers, per = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			var items []queue.Item
			for n := range per {
				// Half the URLs are shared by all writers, half are the writer's own.
				id := n
				if n%2 == 1 {
					id = 1000*(w+1) + n
				}
				items = append(items, Item(0, fmt.Sprintf("h%d.example", n%13), id, float64(w)/writers))
				if len(items) == 25 {
					if err := q.Schedule(context.Background(), items); err != nil {
						errs <- err
						return
					}
					items = items[:0]
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := per/2 + writers*per/2
	count(t, q, 0, int64(want))
	if got := next(t, q, 0, 0, all); len(got) != want {
		t.Fatalf("Next(all) after concurrent writers: %d items, want %d", len(got), want)
	}
}

func testDrain(t *testing.T, q queue.Queue) {
	const n = 300
	var items []queue.Item
	for i := range n {
		items = append(items, Item(1, fmt.Sprintf("h%d.example", i%17), i, float64(i%100)/100))
	}
	schedule(t, q, items...)
	seen := map[string]bool{}
	for round := 0; round < n; round++ {
		got := next(t, q, 1, 0, queue.Limits{Max: 32, PerHost: 4, MinHosts: 8})
		if len(got) == 0 {
			break
		}
		if h := hosts(got); len(h) < min(8, len(got)) {
			t.Fatalf("round %d: %d hosts in %d items", round, len(h), len(got))
		}
		for _, u := range urls(got) {
			if seen[u] {
				t.Fatalf("%s returned twice", u)
			}
			seen[u] = true
		}
		ack(t, q, got)
	}
	if len(seen) != n {
		t.Fatalf("drained %d URLs, want %d", len(seen), n)
	}
	count(t, q, 1, 0)
}

func testReopen(t *testing.T, q queue.Queue, reopen func(*testing.T, queue.Queue) queue.Queue) {
	var items []queue.Item
	for i := range 100 {
		it := Item(0, fmt.Sprintf("h%d.example", i%7), i, float64(i)/100)
		if i%10 == 0 {
			it.NotBefore = 2_000_000_000
		}
		items = append(items, it)
	}
	schedule(t, q, items...)
	dispatched := next(t, q, 0, 0, queue.Limits{Max: 20})
	ack(t, q, dispatched[:10]) // 10 delivered and acknowledged, 10 dispatched but not acknowledged
	q = reopen(t, q)
	count(t, q, 0, 90)
	got := next(t, q, 0, 0, all)
	if len(got) != 80 {
		t.Fatalf("after reopen: %d due items, want 80", len(got))
	}
	acked := map[string]bool{}
	for _, u := range urls(dispatched[:10]) {
		acked[u] = true
	}
	for _, u := range urls(got) {
		if acked[u] {
			t.Fatalf("acknowledged %s came back after reopen", u)
		}
	}
	for _, u := range urls(dispatched[10:]) {
		if !slices.Contains(urls(got), u) {
			t.Fatalf("dispatched but unacknowledged %s lost in the restart", u)
		}
	}
	if got := next(t, q, 0, 2_000_000_000, all); len(got) != 90 {
		t.Fatalf("after reopen at the due time: %d items, want 90", len(got))
	}
	// The index survived too: re-scheduling replaces (and brings back the 10 acknowledged URLs).
	schedule(t, q, items...)
	count(t, q, 0, 100)
}

func testScheduleAfterAck(t *testing.T, q queue.Queue) {
	for round := range 3 {
		var items []queue.Item
		for i := range 50 {
			items = append(items, Item(0, fmt.Sprintf("h%d.example", i%5), round*100+i, 0.5+float64(i%2)*0.4))
		}
		schedule(t, q, items...)
		got := next(t, q, 0, 0, all)
		if len(got) != 50 {
			t.Fatalf("round %d: %d items, want 50", round, len(got))
		}
		ack(t, q, got)
		count(t, q, 0, 0)
		if got := next(t, q, 0, 0, all); len(got) != 0 {
			t.Fatalf("round %d: %d items after acking all", round, len(got))
		}
		// Rows that sort before and after everything acknowledged come back.
		schedule(t, q, Item(0, "a.example", 1000+round, 1), Item(0, "z.example", 1000+round, 0))
		got = next(t, q, 0, 0, all)
		if len(got) != 2 {
			t.Fatalf("round %d: after drain and schedule: %v", round, urls(got))
		}
		ack(t, q, got)
	}
}

func testScheduleDuringNext(t *testing.T, q queue.Queue) {
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() { // a consumer draining the partition
		for {
			select {
			case <-stop:
				return
			default:
			}
			got, err := q.Next(ctx, 0, 0, queue.Limits{Max: 16})
			if err != nil {
				t.Error(err)
				return
			}
			if err := q.Ack(ctx, got); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for i := range 400 {
		if err := q.Schedule(ctx, []queue.Item{Item(0, fmt.Sprintf("h%d.example", i%9), i, float64(i%97)/97)}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	// Whatever the consumer did not take must still be found: no row hidden behind a stale scan start.
	n, err := q.Count(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := next(t, q, 0, 0, all); int64(len(got)) != n {
		t.Fatalf("Count says %d rows, Next finds %d", n, len(got))
	}
}

// testHostCap: Limits.HostCap gives each host its own cap (0 leaves it out) in place of PerHost, and the rows it
// skipped stay queued.
func testHostCap(t *testing.T, q queue.Queue) {
	for n := range 10 {
		schedule(t, q, Item(0, "a.example", n, 0.9-float64(n)*0.01), Item(0, "b.example", n, 0.5-float64(n)*0.01),
			Item(0, "c.example", n, 0.7-float64(n)*0.01))
	}
	caps := map[string]int{"a.example": 7, "b.example": 2, "c.example": 0}
	asked := map[string]int{}
	lim := queue.Limits{Max: 100, PerHost: 1, HostCap: func(h string) int { asked[h]++; return caps[h] }}
	got := next(t, q, 0, 0, lim)
	h := hosts(got)
	if len(got) != 9 || h["a.example"] != 7 || h["b.example"] != 2 || h["c.example"] != 0 {
		t.Fatalf("Next with caps %v = %v, want 7 of a, 2 of b, none of c", caps, urls(got))
	}
	for host, n := range asked {
		if n > 1 {
			t.Errorf("HostCap(%s) asked %d times in one Next, want once", host, n)
		}
	}
	count(t, q, 0, 30)
	ack(t, q, got)
	count(t, q, 0, 21)
	caps = map[string]int{"a.example": 100, "b.example": 100, "c.example": 100}
	if got := next(t, q, 0, 0, lim); len(got) != 21 {
		t.Fatalf("Next with room for all = %d items, want the 21 left", len(got))
	}
}
