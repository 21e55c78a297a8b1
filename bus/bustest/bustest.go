// Package bustest is the conformance suite of the bus interfaces. Every implementation (bus/membus, bus/kafkabus
// over kfake and over a real broker) runs the same Run, so that a worker tested on membus behaves the same on
// Kafka:
//
//	func TestConformance(t *testing.T) {
//		bustest.Run(t, func(t *testing.T, partitions map[bus.Stream]int) bus.Bus { … })
//	}
//
// The suite never asserts on timing: it waits for messages under generous deadlines (Timeout) and checks what
// arrives, in what order, on which partition. Group names are unique per test, so the suite can run against a
// long-lived broker.
//
// SendFetchCommit (bench.go) is the benchmark the in-process buses share.
//
// It imports bus and the standard library only, but for DeleteRecords (kafka.go), which asks a Kafka broker
// to delete records as retention would, and internal/cputime for SendFetchCommit; it is meant for _test.go
// files.
package bustest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/bus"
)

// Factory returns a fresh bus whose streams have the given partition counts (streams not named have one
// partition) and on which no group has committed. It registers the bus's Close with t.Cleanup.
type Factory func(t *testing.T, partitions map[bus.Stream]int) bus.Bus

// Timeout bounds each wait of the suite for messages that must arrive; a real broker may need seconds for a
// first fetch.
var Timeout = 30 * time.Second

var groupSeq atomic.Int64

// group returns a consumer group name unique to this process and test.
func group(t *testing.T, name string) string {
	return fmt.Sprintf("bustest-%s-%d-%d", name, time.Now().UnixNano(), groupSeq.Add(1))
}

// Run runs the conformance suite against the buses newBus returns.
func Run(t *testing.T, newBus Factory) {
	tests := []struct {
		name string
		fn   func(*testing.T, Factory)
	}{
		{"PartitionerPicksPartition", testPartitionerPicksPartition},
		{"NilPartitionerUsesMessagePartition", testNilPartitioner},
		{"OrderWithinPartition", testOrderWithinPartition},
		{"FetchBatching", testFetchBatching},
		{"RedeliveryWithoutCommit", testRedeliveryWithoutCommit},
		{"NoRedeliveryAfterCommit", testNoRedeliveryAfterCommit},
		{"PartitionOwnership", testPartitionOwnership},
		{"GroupsAreIndependent", testGroupsIndependent},
		{"Lag", testLag},
		{"ConcurrentSend", testConcurrentSend},
		{"FetchHonoursContext", testFetchHonoursContext},
		{"BadArguments", testBadArguments},
		{"Closed", testClosed},
		{"MalformedSkipped", testMalformedSkipped},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newBus) })
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), Timeout)
	t.Cleanup(cancel)
	return ctx
}

func producer(t *testing.T, b bus.Bus, s bus.Stream, p bus.Partitioner) bus.Producer {
	t.Helper()
	pr, err := b.Producer(ctxT(t), s, p)
	if err != nil {
		t.Fatalf("Producer(%s): %v", s, err)
	}
	t.Cleanup(func() { _ = pr.Close() })
	return pr
}

func consumer(t *testing.T, b bus.Bus, s bus.Stream, g string, parts ...int) bus.Consumer {
	t.Helper()
	c, err := b.Consumer(ctxT(t), s, g, parts)
	if err != nil {
		t.Fatalf("Consumer(%s, %s, %v): %v", s, g, parts, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// all returns 0..n-1.
func all(n int) []int {
	ps := make([]int, n)
	for i := range ps {
		ps[i] = i
	}
	return ps
}

// fetchN fetches until it holds n messages (failing the test if more arrive in the last fetch than asked for
// is impossible: Fetch is given the remainder as max).
func fetchN(t *testing.T, c bus.Consumer, n int) []bus.Message {
	t.Helper()
	ctx := ctxT(t)
	var got []bus.Message
	for len(got) < n {
		ms, err := c.Fetch(ctx, n-len(got))
		if err != nil {
			t.Fatalf("Fetch after %d of %d messages: %v", len(got), n, err)
		}
		if len(ms) == 0 || len(ms) > n-len(got) {
			t.Fatalf("Fetch(max=%d) returned %d messages", n-len(got), len(ms))
		}
		got = append(got, ms...)
	}
	return got
}

func send(t *testing.T, p bus.Producer, msgs ...bus.Message) {
	t.Helper()
	if err := p.Send(ctxT(t), msgs...); err != nil {
		t.Fatalf("Send(%d messages): %v", len(msgs), err)
	}
}

func commit(t *testing.T, c bus.Consumer, msgs []bus.Message) {
	t.Helper()
	if err := c.Commit(ctxT(t), msgs); err != nil {
		t.Fatalf("Commit(%d messages): %v", len(msgs), err)
	}
}

// numbered returns n messages with key "k<i>" and value "<prefix><i>".
func numbered(prefix string, n int) []bus.Message {
	ms := make([]bus.Message, n)
	for i := range ms {
		ms[i] = bus.Message{Key: []byte("k" + strconv.Itoa(i)), Value: []byte(prefix + strconv.Itoa(i))}
	}
	return ms
}

// modKey is a partitioner with a known answer: the integer after the key's first byte, mod n.
func modKey(key []byte, n int) int {
	v, err := strconv.Atoi(string(key[1:]))
	if err != nil {
		return 0
	}
	return v % n
}

func testPartitionerPicksPartition(t *testing.T, newBus Factory) {
	const n = 3
	b := newBus(t, map[bus.Stream]int{bus.SpiderLog: n})
	if got := b.Partitions(bus.SpiderLog); got != n {
		t.Fatalf("Partitions(spider-log) = %d, want %d", got, n)
	}
	var calls atomic.Int64
	part := func(key []byte, pn int) int {
		calls.Add(1)
		if pn != n {
			t.Errorf("partitioner called with n = %d, want %d", pn, n)
		}
		return modKey(key, pn)
	}
	p := producer(t, b, bus.SpiderLog, part)
	msgs := numbered("v", 30)
	send(t, p, msgs...)
	if calls.Load() == 0 {
		t.Fatal("the producer never called its partitioner")
	}
	g := group(t, "part")
	for q := range n {
		c := consumer(t, b, bus.SpiderLog, g, q)
		got := fetchN(t, c, 10)
		for _, m := range got {
			if m.Partition != q {
				t.Errorf("consumer of partition %d got a message of partition %d", q, m.Partition)
			}
			if want := modKey(m.Key, n); want != q {
				t.Errorf("key %q is on partition %d, the partitioner picks %d", m.Key, q, want)
			}
		}
	}
}

func testNilPartitioner(t *testing.T, newBus Factory) {
	b := newBus(t, map[bus.Stream]int{bus.SpiderFeed: 2})
	p := producer(t, b, bus.SpiderFeed, nil)
	send(t, p, bus.Message{Key: []byte("a"), Value: []byte("to-1"), Partition: 1},
		bus.Message{Key: []byte("b"), Value: []byte("to-0"), Partition: 0})
	g := group(t, "nilpart")
	for q, want := range []string{"to-0", "to-1"} {
		got := fetchN(t, consumer(t, b, bus.SpiderFeed, g, q), 1)
		if string(got[0].Value) != want || got[0].Partition != q {
			t.Errorf("partition %d holds %q (partition field %d), want %q", q, got[0].Value, got[0].Partition, want)
		}
	}
	if err := p.Send(ctxT(t), bus.Message{Value: []byte("x"), Partition: 2}); err == nil {
		t.Error("Send to partition 2 of a 2-partition stream succeeded, want an error")
	}
}

func testOrderWithinPartition(t *testing.T, newBus Factory) {
	b := newBus(t, map[bus.Stream]int{bus.SpiderFeed: 2})
	p := producer(t, b, bus.SpiderFeed, func([]byte, int) int { return 1 })
	const sends, per = 10, 50
	for s := range sends {
		send(t, p, numbered(fmt.Sprintf("s%d-", s), per)...)
	}
	got := fetchN(t, consumer(t, b, bus.SpiderFeed, group(t, "order"), 1), sends*per)
	for i, m := range got {
		want := fmt.Sprintf("s%d-%d", i/per, i%per)
		if string(m.Value) != want {
			t.Fatalf("message %d is %q, want %q", i, m.Value, want)
		}
		if want := fmt.Sprintf("k%d", i%per); string(m.Key) != want {
			t.Fatalf("message %d has key %q, want %q", i, m.Key, want)
		}
		if i > 0 && m.Offset <= got[i-1].Offset {
			t.Fatalf("offsets not increasing: message %d at %d after %d", i, m.Offset, got[i-1].Offset)
		}
	}
}

func testFetchBatching(t *testing.T, newBus Factory) {
	b := newBus(t, map[bus.Stream]int{bus.SpiderLog: 1})
	p := producer(t, b, bus.SpiderLog, nil)
	const n = 100
	send(t, p, numbered("v", n)...)
	c := consumer(t, b, bus.SpiderLog, group(t, "batch"), 0)
	ctx := ctxT(t)
	var got []bus.Message
	biggest := 0
	for len(got) < n {
		ms, err := c.Fetch(ctx, 10)
		if err != nil {
			t.Fatalf("Fetch: %v", err)
		}
		if len(ms) == 0 || len(ms) > 10 {
			t.Fatalf("Fetch(max=10) returned %d messages", len(ms))
		}
		biggest = max(biggest, len(ms))
		got = append(got, ms...)
	}
	if len(got) != n {
		t.Fatalf("got %d messages, want %d", len(got), n)
	}
	if biggest < 2 {
		t.Errorf("every Fetch(max=10) of 100 waiting messages returned one message: no batching")
	}
}

func testRedeliveryWithoutCommit(t *testing.T, newBus Factory) {
	b := newBus(t, map[bus.Stream]int{bus.SpiderLog: 2})
	p := producer(t, b, bus.SpiderLog, modKey)
	send(t, p, numbered("v", 20)...)
	g := group(t, "redeliver")

	// A consumer processes everything and is killed before it commits.
	c1, err := b.Consumer(ctxT(t), bus.SpiderLog, g, all(2))
	if err != nil {
		t.Fatal(err)
	}
	first := fetchN(t, c1, 20)
	if err := c1.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Its successor gets all of it again, then commits half of each partition and dies.
	c2, err := b.Consumer(ctxT(t), bus.SpiderLog, g, all(2))
	if err != nil {
		t.Fatal(err)
	}
	again := fetchN(t, c2, 20)
	if !sameSet(first, again) {
		t.Fatalf("after an uncommitted restart got %v, want %v again", values(again), values(first))
	}
	var half []bus.Message
	seen := map[int]int{}
	for _, m := range again {
		if seen[m.Partition] < 5 {
			half = append(half, m)
		}
		seen[m.Partition]++
	}
	commit(t, c2, half)
	_ = c2.Close()
	// The third starts after the commit: it gets exactly the other half.
	third := fetchN(t, consumer(t, b, bus.SpiderLog, g, 0, 1), 10)
	var rest []bus.Message
	for _, m := range again {
		if !containsMsg(half, m) {
			rest = append(rest, m)
		}
	}
	if !sameSet(third, rest) {
		t.Fatalf("after committing %v got %v, want %v", values(half), values(third), values(rest))
	}
}

func testNoRedeliveryAfterCommit(t *testing.T, newBus Factory) {
	b := newBus(t, map[bus.Stream]int{bus.SpiderFeed: 1})
	p := producer(t, b, bus.SpiderFeed, nil)
	send(t, p, numbered("old", 10)...)
	g := group(t, "committed")
	c1, err := b.Consumer(ctxT(t), bus.SpiderFeed, g, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	got := fetchN(t, c1, 10)
	commit(t, c1, got)
	// Committing again, or an older message, never moves the offset back.
	commit(t, c1, got[:3])
	_ = c1.Close()
	send(t, p, bus.Message{Value: []byte("marker")})
	c2 := consumer(t, b, bus.SpiderFeed, g, 0)
	next := fetchN(t, c2, 1)
	if string(next[0].Value) != "marker" {
		t.Fatalf("after a commit of all 10 messages the next consumer got %q first, want the marker", next[0].Value)
	}
}

func testPartitionOwnership(t *testing.T, newBus Factory) {
	const n = 3
	b := newBus(t, map[bus.Stream]int{bus.SpiderFeed: n})
	p := producer(t, b, bus.SpiderFeed, modKey)
	send(t, p, numbered("v", 60)...)
	g := group(t, "own")
	// A spider owning partition 1 sees only partition 1, all of it.
	got := fetchN(t, consumer(t, b, bus.SpiderFeed, g, 1), 20)
	for _, m := range got {
		if m.Partition != 1 || modKey(m.Key, n) != 1 {
			t.Fatalf("consumer of partition 1 got key %q of partition %d", m.Key, m.Partition)
		}
	}
	// More messages to every partition: another spider of partition 1 still sees only partition 1.
	send(t, p, bus.Message{Key: []byte("k0"), Value: []byte("m0")}, bus.Message{Key: []byte("k2"), Value: []byte("m2")},
		bus.Message{Key: []byte("k1"), Value: []byte("m1")})
	c := consumer(t, b, bus.SpiderFeed, group(t, "own1"), 1)
	for _, m := range fetchN(t, c, 21) {
		if m.Partition != 1 {
			t.Fatalf("consumer of partition 1 got %q from partition %d", m.Value, m.Partition)
		}
	}
	// A DB worker owning every partition sees all 63.
	every := fetchN(t, consumer(t, b, bus.SpiderFeed, group(t, "ownall"), all(n)...), 63)
	per := map[int]int{}
	for _, m := range every {
		per[m.Partition]++
	}
	for q := range n {
		if per[q] != 21 {
			t.Errorf("consumer of every partition got %d messages of partition %d, want 21", per[q], q)
		}
	}
}

func testGroupsIndependent(t *testing.T, newBus Factory) {
	b := newBus(t, map[bus.Stream]int{bus.SpiderLog: 1})
	p := producer(t, b, bus.SpiderLog, nil)
	send(t, p, numbered("v", 5)...)
	ga, gb := group(t, "ga"), group(t, "gb")
	ca := consumer(t, b, bus.SpiderLog, ga, 0)
	commit(t, ca, fetchN(t, ca, 5))
	got := fetchN(t, consumer(t, b, bus.SpiderLog, gb, 0), 5)
	if string(got[0].Value) != "v0" {
		t.Fatalf("group %s starts at %q after another group committed, want v0", gb, got[0].Value)
	}
}

func testLag(t *testing.T, newBus Factory) {
	const n = 2
	b := newBus(t, map[bus.Stream]int{bus.SpiderFeed: n})
	p := producer(t, b, bus.SpiderFeed, modKey)
	send(t, p, numbered("v", 10)...) // 5 on each partition
	g := group(t, "lag")
	wantLag(t, b, g, map[int]int64{0: 5, 1: 5})
	c := consumer(t, b, bus.SpiderFeed, g, 1)
	got := fetchN(t, c, 5)
	wantLag(t, b, g, map[int]int64{0: 5, 1: 5}) // fetched is not committed
	commit(t, c, got[:2])
	wantLag(t, b, g, map[int]int64{0: 5, 1: 3})
	commit(t, c, got)
	wantLag(t, b, g, map[int]int64{0: 5, 1: 0})
	send(t, p, bus.Message{Key: []byte("k1")})
	wantLag(t, b, g, map[int]int64{0: 5, 1: 1})
}

func wantLag(t *testing.T, b bus.Bus, g string, want map[int]int64) {
	t.Helper()
	got, err := b.Lag(ctxT(t), bus.SpiderFeed, g)
	if err != nil {
		t.Fatalf("Lag: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("Lag = %v, want %v", got, want)
	}
	for p, w := range want {
		if got[p] != w {
			t.Fatalf("Lag = %v, want %v", got, want)
		}
	}
}

func testConcurrentSend(t *testing.T, newBus Factory) {
	b := newBus(t, map[bus.Stream]int{bus.ScoringLog: 2})
	p := producer(t, b, bus.ScoringLog, modKey)
	const senders, per = 4, 50
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for s := range senders {
		wg.Go(func() {
			for i := range per {
				m := bus.Message{Key: []byte("k" + strconv.Itoa(i)), Value: []byte(fmt.Sprintf("s%d-%d", s, i))}
				if err := p.Send(ctxT(t), m); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent Send: %v", err)
	}
	got := fetchN(t, consumer(t, b, bus.ScoringLog, group(t, "conc"), 0, 1), senders*per)
	seen := map[string]bool{}
	last := map[[2]int]int{} // per (sender, partition), the last i seen: each sender's order is kept
	for _, m := range got {
		if seen[string(m.Value)] {
			t.Fatalf("%q delivered twice", m.Value)
		}
		seen[string(m.Value)] = true
		var s, i int
		if _, err := fmt.Sscanf(string(m.Value), "s%d-%d", &s, &i); err != nil {
			t.Fatal(err)
		}
		k := [2]int{s, m.Partition}
		if prev, ok := last[k]; ok && i <= prev {
			t.Fatalf("sender %d: message %d arrived after %d on partition %d", s, i, prev, m.Partition)
		}
		last[k] = i
	}
	if len(seen) != senders*per {
		t.Fatalf("got %d distinct messages, want %d", len(seen), senders*per)
	}
}

func testFetchHonoursContext(t *testing.T, newBus Factory) {
	b := newBus(t, map[bus.Stream]int{bus.SpiderLog: 1})
	c := consumer(t, b, bus.SpiderLog, group(t, "ctx"), 0)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	ms, err := c.Fetch(ctx, 10)
	if !errors.Is(err, context.DeadlineExceeded) || len(ms) != 0 {
		t.Fatalf("Fetch on an empty stream = %d messages, %v; want none and context.DeadlineExceeded", len(ms), err)
	}
	// The consumer still works afterwards.
	send(t, producer(t, b, bus.SpiderLog, nil), bus.Message{Value: []byte("after")})
	if got := fetchN(t, c, 1); string(got[0].Value) != "after" {
		t.Fatalf("got %q, want after", got[0].Value)
	}
}

func testBadArguments(t *testing.T, newBus Factory) {
	b := newBus(t, map[bus.Stream]int{bus.SpiderFeed: 2})
	ctx := ctxT(t)
	for _, parts := range [][]int{nil, {2}, {-1}, {0, 0}} {
		if c, err := b.Consumer(ctx, bus.SpiderFeed, group(t, "bad"), parts); err == nil {
			_ = c.Close()
			t.Errorf("Consumer(partitions %v) succeeded, want an error", parts)
		}
	}
	if c, err := b.Consumer(ctx, bus.SpiderFeed, "", []int{0}); err == nil {
		_ = c.Close()
		t.Error("Consumer with an empty group succeeded, want an error")
	}
	if c, err := b.Consumer(ctx, "no-such-stream", group(t, "bad"), []int{0}); err == nil {
		_ = c.Close()
		t.Error("Consumer of an unknown stream succeeded, want an error")
	}
	if p, err := b.Producer(ctx, "no-such-stream", nil); err == nil {
		_ = p.Close()
		t.Error("Producer of an unknown stream succeeded, want an error")
	}
	c := consumer(t, b, bus.SpiderFeed, group(t, "bad"), 0)
	if _, err := c.Fetch(ctx, 0); err == nil {
		t.Error("Fetch(max=0) succeeded, want an error")
	}
	if err := c.Commit(ctx, []bus.Message{{Partition: 1, Offset: 0}}); err == nil {
		t.Error("Commit of a partition the consumer does not own succeeded, want an error")
	}
	if err := c.Commit(ctx, nil); err != nil {
		t.Errorf("Commit(nil) = %v, want nil", err)
	}
}

func testClosed(t *testing.T, newBus Factory) {
	b := newBus(t, map[bus.Stream]int{bus.SpiderLog: 1})
	ctx := ctxT(t)
	p, err := b.Producer(ctx, bus.SpiderLog, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.Consumer(ctx, bus.SpiderLog, group(t, "closed"), []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("producer Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("consumer Close: %v", err)
	}
	if err := p.Send(ctx, bus.Message{Value: []byte("x")}); !errors.Is(err, bus.ErrClosed) {
		t.Errorf("Send after Close = %v, want bus.ErrClosed", err)
	}
	if _, err := c.Fetch(ctx, 1); !errors.Is(err, bus.ErrClosed) {
		t.Errorf("Fetch after Close = %v, want bus.ErrClosed", err)
	}
	if err := c.Commit(ctx, []bus.Message{{Partition: 0, Offset: 0}}); !errors.Is(err, bus.ErrClosed) {
		t.Errorf("Commit after Close = %v, want bus.ErrClosed", err)
	}
	// Close twice is harmless.
	_ = p.Close()
	_ = c.Close()
}

func testMalformedSkipped(t *testing.T, newBus Factory) {
	b := newBus(t, map[bus.Stream]int{bus.SpiderLog: 1})
	p := producer(t, b, bus.SpiderLog, nil)
	send(t, p, bus.Message{Value: []byte("1")}, bus.Message{Value: []byte("not a number")}, bus.Message{Value: []byte("3")})
	g := group(t, "malformed")
	c := consumer(t, b, bus.SpiderLog, g, 0)
	msgs := fetchN(t, c, 3)
	if _, ok := c.(bus.MalformedReporter); !ok {
		t.Errorf("the consumer (%T) does not implement bus.MalformedReporter", c)
	}
	var bad []int64
	vals := bus.Decode(reporterFunc{c, func(m bus.Message, _ error) { bad = append(bad, m.Offset) }}, msgs,
		func(m bus.Message) (int, error) { return strconv.Atoi(string(m.Value)) })
	if len(vals) != 2 || vals[0] != 1 || vals[1] != 3 {
		t.Fatalf("Decode = %v, want [1 3]", vals)
	}
	if len(bad) != 1 || bad[0] != msgs[1].Offset {
		t.Fatalf("reported malformed offsets %v, want [%d]", bad, msgs[1].Offset)
	}
	// The consumer's own reporter accepts it without failing.
	bus.Decode(c, msgs, func(m bus.Message) (int, error) { return strconv.Atoi(string(m.Value)) })
	commit(t, c, msgs)
	wantLagOn(t, b, bus.SpiderLog, g, 0)
}

func wantLagOn(t *testing.T, b bus.Bus, s bus.Stream, g string, want int64) {
	t.Helper()
	lag, err := b.Lag(ctxT(t), s, g)
	if err != nil {
		t.Fatalf("Lag: %v", err)
	}
	for p, l := range lag {
		if l != want {
			t.Fatalf("Lag of partition %d = %d, want %d", p, l, want)
		}
	}
}

// reporterFunc wraps a consumer with a test's own Malformed.
type reporterFunc struct {
	bus.Consumer
	f func(bus.Message, error)
}

func (r reporterFunc) Malformed(m bus.Message, err error) { r.f(m, err) }

func values(ms []bus.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = fmt.Sprintf("%d@%d:%s", m.Partition, m.Offset, m.Value)
	}
	return out
}

func containsMsg(ms []bus.Message, m bus.Message) bool {
	for _, x := range ms {
		if x.Partition == m.Partition && x.Offset == m.Offset {
			return true
		}
	}
	return false
}

// sameSet reports whether a and b hold the same (partition, offset, value) triples.
func sameSet(a, b []bus.Message) bool {
	if len(a) != len(b) {
		return false
	}
	for _, m := range a {
		found := false
		for _, x := range b {
			if x.Partition == m.Partition && x.Offset == m.Offset && string(x.Value) == string(m.Value) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// ConsumeAndCommit is a group that has read and confirmed the first n messages of stream s: it opens a
// consumer of group on parts, fetches until it holds n messages, commits them and closes the consumer. It
// returns the messages and fails the test on any error. Tests that need a committed offset to start from (a
// retention or loss test) share it.
func ConsumeAndCommit(t testing.TB, ctx context.Context, b bus.Bus, s bus.Stream, group string, parts []int, n int) []bus.Message {
	t.Helper()
	c, err := b.Consumer(ctx, s, group, parts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got []bus.Message
	for len(got) < n {
		ms, err := c.Fetch(ctx, n-len(got))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ms...)
	}
	if err := c.Commit(ctx, got); err != nil {
		t.Fatal(err)
	}
	return got
}
