package pebblestore

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/queue/queuetest"
	"github.com/frontiercrawl/frontier/state"
)

// TestAckTaken checks Ack's read-free path (takenRows) against every write that can come between a Next and
// the Ack of its items, before the Next's snapshot, while it scans, and after it: the rows left and the counts
// must be the reading path's.
func TestAckTaken(t *testing.T) {
	other := func(it queue.Item) queue.Item { it.Request = append([]byte("retry "), it.Request...); return it }
	for _, tc := range []struct {
		name   string
		during func(q *Queue, x queue.Item) // runs right after the Next's snapshot
		after  func(q *Queue, x queue.Item) // runs between the Next and the Ack
		stays  bool                         // x's fingerprint is still queued after the Ack
		fast   bool                         // x is in taken after the Next
	}{
		{name: "acknowledged", fast: true},
		{name: "acknowledged twice", fast: true, after: func(q *Queue, x queue.Item) { mustAck(t, q, x) }},
		{name: "scheduled again since, another request", fast: true, stays: true,
			after: func(q *Queue, x queue.Item) { mustSchedule(t, q, other(x)) }},
		{name: "scheduled again since, the same request", fast: true,
			after: func(q *Queue, x queue.Item) { mustSchedule(t, q, x) }},
		{name: "scheduled again since, another score", fast: true,
			after: func(q *Queue, x queue.Item) { x.Score = 0.05; mustSchedule(t, q, x) }},
		{name: "scheduled again since, delayed", fast: true, stays: true,
			after: func(q *Queue, x queue.Item) { x = other(x); x.NotBefore = 4_000_000_000; mustSchedule(t, q, x) }},
		{name: "delivered since", fast: true, after: func(q *Queue, x queue.Item) {
			if n, err := q.AckDelivered(t.Context(), []queue.Item{x}); err != nil || n != 1 {
				t.Fatalf("AckDelivered = %d, %v", n, err)
			}
		}},
		{name: "acknowledged while the Next scans", during: func(q *Queue, x queue.Item) { mustAck(t, q, x) }},
		{name: "scheduled again while the Next scans", stays: true,
			during: func(q *Queue, x queue.Item) { mustSchedule(t, q, other(x)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Dir, cfg.FS, cfg.Sync, cfg.CacheBytes, cfg.Bloom = "db", vfs.NewMem(), false, 8<<20, state.BloomConfig{}
			db, err := Open(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			q, ctx := db.Queue(), t.Context()
			var items []queue.Item
			for i := range 40 {
				items = append(items, queuetest.Item(0, fmt.Sprintf("h%d.example", i%4), i, float64(i%10)/10))
			}
			mustSchedule(t, q, items...)
			x := items[7]
			if tc.during != nil {
				q.afterSnapshot = func() { q.afterSnapshot = nil; tc.during(q, x) }
			}
			got, err := q.Next(ctx, 0, 1, queue.Limits{Max: 100})
			if err != nil || len(got) != len(items) {
				t.Fatalf("Next = %d items, %v; want %d", len(got), err, len(items))
			}
			q.mu.Lock()
			_, fast := q.taken[string(x.Fingerprint)]
			q.mu.Unlock()
			if fast != tc.fast {
				t.Errorf("after Next: x taken %v, want %v", fast, tc.fast)
			}
			if tc.after != nil {
				tc.after(q, x)
			}
			mustAck(t, q, got...)
			fps := make([]frontier.Fingerprint, len(items))
			for i := range items {
				fps[i] = items[i].Fingerprint
			}
			has, err := q.Has(ctx, fps)
			if err != nil {
				t.Fatal(err)
			}
			var rows int64
			for i := range items {
				if want := tc.stays && bytes.Equal(items[i].Fingerprint, x.Fingerprint); has[i] != want {
					t.Errorf("item %d queued %v, want %v", i, has[i], want)
				}
				if has[i] {
					rows++
				}
			}
			if n, err := q.Count(ctx, 0); err != nil || n != rows {
				t.Errorf("Count = %d, %v; want %d (the rows left)", n, err, rows)
			}
			q.mu.Lock()
			if len(q.taken) != 0 || len(q.watches) != 0 {
				t.Errorf("after the Ack: %d taken, %d watches; want none", len(q.taken), len(q.watches))
			}
			q.mu.Unlock()
		})
	}
}

// TestAppendReadyKey checks the key Ack derives against readyKey's.
func TestAppendReadyKey(t *testing.T) {
	for _, tc := range []struct {
		p    int
		b    uint16
		host string
		fp   []byte
	}{{0, 0, "", nil}, {3, 7, "a.example", []byte{1, 2, 3}}, {maxPartition, 65535, "x", make([]byte, 20)}} {
		if got, want := appendReadyKey([]byte("junk")[:0], tc.p, tc.b, tc.host, tc.fp), readyKey(tc.p, tc.b, tc.host, tc.fp); !bytes.Equal(got, want) {
			t.Errorf("appendReadyKey(%v) = %x, want %x", tc, got, want)
		}
	}
}

func mustSchedule(t *testing.T, q *Queue, items ...queue.Item) {
	t.Helper()
	if err := q.Schedule(t.Context(), items); err != nil {
		t.Fatal(err)
	}
}

func mustAck(t *testing.T, q *Queue, items ...queue.Item) {
	t.Helper()
	if err := q.Ack(t.Context(), items); err != nil {
		t.Fatal(err)
	}
}
