package strategyworker

import (
	"testing"

	"github.com/frontiercrawl/frontier/metadata"
)

// The counters of a batch are written once, however often the write is retried or the batch replayed: the
// write carries the worker's partition and the batch's last offset.
func TestCountersFlushOncePerBatch(t *testing.T) {
	store := metadata.NewMemoryDomains()
	ctx := t.Context()
	for _, batch := range []struct {
		seq   int64
		delta int64
	}{{10, 2}, {10, 2} /* replayed */, {25, 3}, {25, 3} /* replayed */, {26, 1}} {
		c := newCounters(store, maxCachedCounters) // a restarted worker: nothing cached
		c.source, c.seq = "sw-spider-log/0", batch.seq
		v, err := c.get(ctx, "host_scheduled", "a.com")
		if err != nil {
			t.Fatal(err)
		}
		c.set("host_scheduled", "a.com", v+batch.delta, batch.delta)
		if err := c.flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got, err := store.Get(ctx, "host_scheduled", []string{"a.com"})
	if err != nil || got[0] != 6 {
		t.Fatalf("counter after replays = %v, %v, want 6", got, err)
	}
}
