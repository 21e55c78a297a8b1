package pebblestore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/queue/queuetest"
	"github.com/frontiercrawl/frontier/state"
)

// TestGroupsDifferential drives the Pebble queue and the memory queue with the same random schedules (new
// rows, rows scheduled again with another score or a due time), Next calls with random per-host caps and
// MinHosts, acknowledgements of part of each batch, rows written while a Next scans, and reopenings, and
// wants the same batches from both: the host groups (groupDir) that Next goes by must never hide a row.
func TestGroupsDifferential(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { groupsDifferential(t, seed) })
	}
}

func groupsDifferential(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	fs := vfs.NewMem()
	cfg := DefaultConfig()
	cfg.Dir, cfg.FS, cfg.Sync, cfg.CacheBytes, cfg.Bloom = "db", fs, false, 8<<20, state.BloomConfig{}
	db, err := Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	q, mem, ctx := db.Queue(), queue.NewMemory(), t.Context()
	scores := []float64{0.9, 0.5, 0.2}
	hosts := 3 + int(seed)*4
	item := func() queue.Item {
		n := rng.IntN(hosts * 12)
		it := queuetest.Item(0, fmt.Sprintf("h%d.example", n%hosts), n, scores[rng.IntN(len(scores))])
		if rng.IntN(8) == 0 {
			it.NotBefore = now0 + int64(rng.IntN(6))
		}
		return it
	}
	now := int64(now0)
	for round := range 300 {
		var items []queue.Item
		for range rng.IntN(12) {
			items = append(items, item())
		}
		if err := errorsJoin(q.Schedule(ctx, items), mem.Schedule(ctx, items)); err != nil {
			t.Fatal(err)
		}
		caps := make(map[string]int)
		for h := range hosts {
			caps[fmt.Sprintf("h%d.example", h)] = []int{0, 0, 0, 1, 2, 5}[rng.IntN(6)]
		}
		lim := queue.Limits{Max: 1 + rng.IntN(20), MinHosts: rng.IntN(4)}
		if rng.IntN(4) > 0 {
			lim.HostCap = func(h string) int { return caps[h] }
		} else {
			lim.PerHost = rng.IntN(3)
		}
		var racing []queue.Item
		if rng.IntN(5) == 0 {
			racing = []queue.Item{item()}
			q.afterSnapshot = func() { q.afterSnapshot = nil; mustSchedule(t, q, racing...) }
		}
		got, err := q.Next(ctx, 0, now, lim)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := mem.Next(ctx, 0, now, lim)
		if racing != nil {
			if err := mem.Schedule(ctx, racing); err != nil {
				t.Fatal(err)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: Next = %d items, memory %d", round, len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i].Fingerprint, want[i].Fingerprint) || !bytes.Equal(got[i].Request, want[i].Request) {
				t.Fatalf("round %d: item %d = %s %s, memory %s %s", round, i, got[i].Host, got[i].Request, want[i].Host, want[i].Request)
			}
		}
		var ack []queue.Item
		for _, it := range got {
			if rng.IntN(3) > 0 {
				ack = append(ack, it)
			}
		}
		if err := errorsJoin(q.Ack(ctx, ack), mem.Ack(ctx, ack)); err != nil {
			t.Fatal(err)
		}
		if rng.IntN(3) == 0 {
			now++
		}
		if rng.IntN(40) == 0 {
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if db, err = Open(cfg, nil); err != nil {
				t.Fatal(err)
			}
			q = db.Queue()
		}
	}
	// The groups listed cover every row left; the emptied ones went.
	all, err := q.Next(ctx, 0, now+100, queue.Limits{Max: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	wantAll, _ := mem.Next(ctx, 0, now+100, queue.Limits{Max: 1 << 20})
	if len(all) != len(wantAll) {
		t.Fatalf("at the end: %d rows, memory %d", len(all), len(wantAll))
	}
	q.mu.Lock()
	listed := len(q.dir(0).take())
	q.mu.Unlock()
	seen := make(map[string]bool)
	for _, it := range all {
		seen[fmt.Sprint(bucket(it.Score, q.buckets), it.Host)] = true
	}
	if listed != len(seen) {
		t.Errorf("at the end: %d groups listed, %d hold rows", listed, len(seen))
	}
}

const now0 = 1_000

func errorsJoin(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestGroupsOff checks that a partition without a group list (past maxGroups) is scanned as before.
func TestGroupsOff(t *testing.T) {
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
		items = append(items, queuetest.Item(0, fmt.Sprintf("h%d.example", i%8), i, 0.5))
	}
	mustSchedule(t, q, items...)
	q.mu.Lock()
	q.dir(0).turnOff()
	q.mu.Unlock()
	mustSchedule(t, q, queuetest.Item(0, "late.example", 1, 0.5))
	got, err := q.Next(ctx, 0, 1, queue.Limits{Max: 100, HostCap: func(h string) int {
		if h == "h3.example" || h == "late.example" {
			return 2
		}
		return 0
	}})
	if err != nil || len(got) != 3 {
		t.Fatalf("Next = %d items, %v; want 3", len(got), err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if d := q.dir(0); !d.off || d.take() != nil {
		t.Errorf("the list came back: %+v", d)
	}
}

// TestGroupsBackOn checks that a partition without a group list gets one again once it holds no rows.
func TestGroupsBackOn(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Dir, cfg.FS, cfg.Sync, cfg.CacheBytes, cfg.Bloom = "db", vfs.NewMem(), false, 8<<20, state.BloomConfig{}
	db, err := Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q, ctx := db.Queue(), t.Context()
	mustSchedule(t, q, queuetest.Item(0, "a.example", 1, 0.5), queuetest.Item(0, "b.example", 2, 0.5))
	q.mu.Lock()
	q.dir(0).turnOff()
	q.mu.Unlock()
	got, err := q.Next(ctx, 0, 1, queue.Limits{Max: 10})
	if err != nil || len(got) != 2 {
		t.Fatalf("Next = %d items, %v; want 2", len(got), err)
	}
	mustAck(t, q, got[0])
	q.mu.Lock()
	off := q.dir(0).off
	q.mu.Unlock()
	if !off {
		t.Fatal("the list came back while a row is left")
	}
	mustAck(t, q, got[1])
	mustSchedule(t, q, queuetest.Item(0, "c.example", 3, 0.5), queuetest.Item(0, "d.example", 4, 0.5))
	got, err = q.Next(ctx, 0, 1, queue.Limits{Max: 10, HostCap: func(h string) int {
		if h == "d.example" {
			return 1
		}
		return 0
	}})
	if err != nil || len(got) != 1 || got[0].Host != "d.example" {
		t.Fatalf("Next = %v, %v; want d.example's row", got, err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if d := q.dir(0); d.off || len(d.take()) != 2 {
		t.Errorf("list after the partition emptied: off %v, %d groups; want 2", d.off, len(d.take()))
	}
}
