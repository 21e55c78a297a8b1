package pebblestore_test

import (
	"log/slog"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/metadata/metadatatest"
	"github.com/frontiercrawl/frontier/pebblestore"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/queue/queuetest"
	"github.com/frontiercrawl/frontier/state"
	"github.com/frontiercrawl/frontier/state/statetest"
)

// harness opens stores on an in-memory file system and reopens them on the same one.
type harness struct {
	mu   sync.Mutex
	cfgs map[any]pebblestore.Config
	dbs  map[any]*pebblestore.DB
}

func newHarness() *harness {
	return &harness{cfgs: map[any]pebblestore.Config{}, dbs: map[any]*pebblestore.DB{}}
}

func testConfig(t testing.TB, bloom bool) pebblestore.Config {
	cfg := pebblestore.DefaultConfig()
	cfg.Dir = "db"
	cfg.FS = vfs.NewMem()
	cfg.Sync = false
	cfg.CacheBytes = 8 << 20
	cfg.Bloom = state.BloomConfig{}
	if bloom {
		cfg.Bloom = state.BloomConfig{Expected: 100_000, FPRate: 0.01}
	}
	return cfg
}

func (h *harness) open(t *testing.T, cfg pebblestore.Config, pick func(*pebblestore.DB) any) any {
	t.Helper()
	db, err := pebblestore.Open(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	s := pick(db)
	h.mu.Lock()
	h.cfgs[s], h.dbs[s] = cfg, db
	h.mu.Unlock()
	return s
}

func (h *harness) reopen(t *testing.T, s any, pick func(*pebblestore.DB) any) any {
	t.Helper()
	h.mu.Lock()
	cfg, db := h.cfgs[s], h.dbs[s]
	h.mu.Unlock()
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return h.open(t, cfg, pick)
}

func TestQueueConformance(t *testing.T) {
	h := newHarness()
	pick := func(db *pebblestore.DB) any { return db.Queue() }
	queuetest.Run(t,
		func(t *testing.T) queue.Queue { return h.open(t, testConfig(t, false), pick).(queue.Queue) },
		queuetest.WithReopen(func(t *testing.T, q queue.Queue) queue.Queue { return h.reopen(t, q, pick).(queue.Queue) }))
}

func TestStatesConformance(t *testing.T) {
	for _, bloom := range []bool{false, true} {
		name := map[bool]string{false: "Plain", true: "Bloom"}[bloom]
		t.Run(name, func(t *testing.T) {
			h := newHarness()
			pick := func(db *pebblestore.DB) any { return db.States() }
			statetest.Run(t,
				func(t *testing.T) state.Store { return h.open(t, testConfig(t, bloom), pick).(state.Store) },
				statetest.WithReopen(func(t *testing.T, s state.Store) state.Store { return h.reopen(t, s, pick).(state.Store) }))
		})
	}
}

func TestMetadataConformance(t *testing.T) {
	h := newHarness()
	pages := func(db *pebblestore.DB) any { return db.Pages() }
	metadatatest.Run(t,
		func(t *testing.T) metadata.Store { return h.open(t, testConfig(t, false), pages).(metadata.Store) },
		func(t *testing.T, s metadata.Store) metadata.Store { return h.reopen(t, s, pages).(metadata.Store) })
	domains := func(db *pebblestore.DB) any { return db.Domains() }
	metadatatest.RunDomains(t,
		func(t *testing.T) metadata.Domains {
			return h.open(t, testConfig(t, false), domains).(metadata.Domains)
		},
		func(t *testing.T, d metadata.Domains) metadata.Domains {
			return h.reopen(t, d, domains).(metadata.Domains)
		})
}

func TestStatesCount(t *testing.T) {
	db, err := pebblestore.Open(testConfig(t, false), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	var fps []frontier.Fingerprint
	var es []state.Entry
	for i, st := range []frontier.State{frontier.Crawled, frontier.Crawled, frontier.Queued, frontier.Error} {
		fps = append(fps, frontier.Fingerprint{byte(i), 1, 2, 3})
		es = append(es, state.Entry{State: st})
	}
	if err := db.RawStates().Put(ctx, fps, es); err != nil {
		t.Fatal(err)
	}
	got, err := db.RawStates().Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got[frontier.Crawled] != 2 || got[frontier.Queued] != 1 || got[frontier.Error] != 1 || len(got) != 3 {
		t.Fatalf("Count = %v, want 2 crawled, 1 queued, 1 error", got)
	}
}

func TestQueueAckDelivered(t *testing.T) {
	db, err := pebblestore.Open(testConfig(t, false), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	q := db.Queue()
	item := func(i int, req string) queue.Item {
		return queue.Item{Partition: 1, Host: "h.test", Fingerprint: frontier.Fingerprint{byte(i), 9}, Score: 0.5, Request: []byte(req)}
	}
	if err := q.Schedule(ctx, []queue.Item{item(1, "a"), item(2, "b"), item(3, "c")}); err != nil {
		t.Fatal(err)
	}
	// Item 1 is delivered as scheduled; item 2 was scheduled again since (other bytes); item 3 is on another
	// partition in the feed's view; item 4 was never queued.
	other := item(3, "c")
	other.Partition = 0
	n, err := q.AckDelivered(ctx, []queue.Item{item(1, "a"), item(2, "old b"), other, item(4, "d")})
	if err != nil || n != 1 {
		t.Fatalf("AckDelivered = %d, %v; want 1 row removed", n, err)
	}
	if c, _ := q.Count(ctx, 1); c != 2 {
		t.Fatalf("Count after AckDelivered = %d, want 2", c)
	}
	got, err := q.Next(ctx, 1, 0, queue.Limits{Max: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0].Request) == "a" || string(got[1].Request) == "a" {
		t.Fatalf("Next after AckDelivered = %d items (%+v), want b and c", len(got), got)
	}
}
