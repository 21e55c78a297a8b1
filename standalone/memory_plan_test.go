package standalone

import (
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier/dbworker"
	"github.com/frontiercrawl/frontier/pebblestore"
	"github.com/frontiercrawl/frontier/spider"
	"github.com/frontiercrawl/frontier/state"
)

// TestMemoryPlan: the split of standalone.memory_limit (the package doc, "Memory"): what a key sets is kept,
// the rest derived; the Go limit is the total minus Pebble's cache, which the Go runtime does not see.
func TestMemoryPlan(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name                     string
		limit, cache, mt, budget int64
		want                     MemoryPlan
		bad                      string
	}{
		{name: "cmd/standalone's default: 256 MiB", limit: 256 * mib,
			want: MemoryPlan{Total: 256 * mib, PebbleCache: 64 * mib, MemTable: 16 * mib, BodyBudget: 64 * mib, GoLimit: 192 * mib,
				StateCache: 16 * mib, PageCache: 8 * mib, PageFilter: 4 * mib, StateBloom: 8 * mib, LinksSeen: 8 * mib}},
		{name: "no limit: the packages' defaults, no Go limit",
			want: MemoryPlan{PebbleCache: pebblestore.DefaultConfig().CacheBytes, BodyBudget: spider.DefaultBodyBudgetBytes}},
		{name: "no limit, explicit parts", cache: 32 * mib, budget: 8 * mib,
			want: MemoryPlan{PebbleCache: 32 * mib, BodyBudget: 8 * mib}},
		{name: "explicit cache: its memtable is pebblestore's rule", limit: 256 * mib, cache: 128 * mib,
			want: MemoryPlan{Total: 256 * mib, PebbleCache: 128 * mib, BodyBudget: 64 * mib, GoLimit: 128 * mib,
				StateCache: 8 * mib, PageCache: 4 * mib, PageFilter: 2 * mib, StateBloom: 4 * mib, LinksSeen: 4 * mib}},
		{name: "explicit memtable and budget", limit: 1024 * mib, mt: 8 * mib, budget: 100 * mib,
			want: MemoryPlan{Total: 1024 * mib, PebbleCache: 256 * mib, MemTable: 8 * mib, BodyBudget: 100 * mib, GoLimit: 768 * mib,
				StateCache: 167 * mib / 2, PageCache: 167 * mib / 4, PageFilter: 167 * mib / 8, StateBloom: 167 * mib / 4, LinksSeen: 167 * mib / 4}},
		{name: "a large limit: the memtable stops at 32 MiB", limit: 4096 * mib,
			want: MemoryPlan{Total: 4096 * mib, PebbleCache: 1024 * mib, MemTable: 32 * mib, BodyBudget: 1024 * mib, GoLimit: 3072 * mib,
				StateCache: 256 * mib, PageCache: 128 * mib, PageFilter: 64 * mib, StateBloom: 128 * mib, LinksSeen: 128 * mib}},
		{name: "a small limit: the memtable at least 1 MiB", limit: 8 * mib,
			want: MemoryPlan{Total: 8 * mib, PebbleCache: 2 * mib, MemTable: 1 * mib, BodyBudget: 2 * mib, GoLimit: 6 * mib,
				StateCache: 1 * mib, PageCache: 1 * mib, PageFilter: 1 * mib, StateBloom: 1 * mib, LinksSeen: 1 * mib}},
		{name: "explicit parts leaving the Go heap nothing", limit: 256 * mib, cache: 200 * mib, budget: 64 * mib,
			want: MemoryPlan{Total: 256 * mib, PebbleCache: 200 * mib, BodyBudget: 64 * mib, GoLimit: 56 * mib,
				StateCache: 1 * mib, PageCache: 1 * mib, PageFilter: 1 * mib, StateBloom: 1 * mib, LinksSeen: 1 * mib},
			bad: "leaves nothing for the Go heap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.DataDir = t.TempDir()
			cfg.MemoryLimit, cfg.Pebble.CacheBytes, cfg.Pebble.MemTableBytes = tc.limit, tc.cache, tc.mt
			cfg.Spider.BodyBudgetBytes = tc.budget
			if got := cfg.Memory(); got != tc.want {
				t.Errorf("Memory() = %+v, want %+v", got, tc.want)
			}
			err := cfg.Validate()
			if tc.bad == "" && err != nil {
				t.Errorf("Validate: %v", err)
			}
			if tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)) {
				t.Errorf("Validate: %v, want an error with %q", err, tc.bad)
			}
		})
	}
}

func TestMemoryWithGateway(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name                 string
		limit, cache, budget int64
		want                 MemoryPlan
		bad                  string
	}{
		{name: "cmd/standalone's default: the gateway's 16 MiB come out of the Go heap's share", limit: 256 * mib,
			want: MemoryPlan{Total: 256 * mib, PebbleCache: 64 * mib, MemTable: 16 * mib, BodyBudget: 64 * mib, GatewayCache: 16 * mib, GoLimit: 176 * mib,
				StateCache: 14 * mib, PageCache: 7 * mib, PageFilter: 7 * mib / 2, StateBloom: 7 * mib, LinksSeen: 7 * mib, SeenFilter: 7 * mib}},
		{name: "no limit: the gateway keeps its package default",
			want: MemoryPlan{PebbleCache: pebblestore.DefaultConfig().CacheBytes, BodyBudget: spider.DefaultBodyBudgetBytes}},
		{name: "a small limit: at least 1 MiB", limit: 8 * mib,
			want: MemoryPlan{Total: 8 * mib, PebbleCache: 2 * mib, MemTable: 1 * mib, BodyBudget: 2 * mib, GatewayCache: 1 * mib, GoLimit: 5 * mib,
				StateCache: 1 * mib, PageCache: 1 * mib, PageFilter: 1 * mib, StateBloom: 1 * mib, LinksSeen: 1 * mib, SeenFilter: 1 * mib}},
		{name: "explicit parts that leave the Go heap nothing once the gateway has its share", limit: 256 * mib, cache: 128 * mib, budget: 112 * mib,
			want: MemoryPlan{Total: 256 * mib, PebbleCache: 128 * mib, BodyBudget: 112 * mib, GatewayCache: 16 * mib, GoLimit: 112 * mib,
				StateCache: 1 * mib, PageCache: 1 * mib, PageFilter: 1 * mib, StateBloom: 1 * mib, LinksSeen: 1 * mib, SeenFilter: 1 * mib},
			bad: "URLFrontier gateway's cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.DataDir = t.TempDir()
			cfg.MemoryLimit, cfg.Pebble.CacheBytes, cfg.Spider.BodyBudgetBytes = tc.limit, tc.cache, tc.budget
			got := cfg.MemoryWithGateway()
			if got != tc.want {
				t.Errorf("MemoryWithGateway() = %+v, want %+v", got, tc.want)
			}
			if got.Total > 0 && got.PebbleCache+got.GatewayCache+got.GoLimit != got.Total {
				t.Errorf("caches + Go limit = %d, want the limit %d", got.PebbleCache+got.GatewayCache+got.GoLimit, got.Total)
			}
			err := got.Check()
			if tc.bad == "" && err != nil {
				t.Errorf("Check: %v", err)
			}
			if tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)) {
				t.Errorf("Check: %v, want an error with %q", err, tc.bad)
			}
		})
	}
}

// TestStateCacheConfig: each strategy worker's state cache is lowered to its share of the plan's StateCache,
// never raised, and keeps a FlushEvery below its MaxEntries; without a limit the configuration stands.
func TestStateCacheConfig(t *testing.T) {
	const mib = 1 << 20
	def := state.DefaultCacheConfig() // 3 million entries, flush every 15,000
	for _, tc := range []struct {
		name    string
		plan    MemoryPlan
		c       state.CacheConfig
		workers int
		want    state.CacheConfig
	}{
		{name: "no limit", plan: MemoryPlan{}, c: def, workers: 1, want: def},
		{name: "256 MiB: 32 MiB for one worker", plan: MemoryPlan{StateCache: 32 * mib}, c: def, workers: 1,
			want: state.CacheConfig{MaxEntries: 1_579_032, FlushEvery: 15_000}},
		{name: "shared by two workers", plan: MemoryPlan{StateCache: 32 * mib}, c: def, workers: 2,
			want: state.CacheConfig{MaxEntries: 789_516, FlushEvery: 15_000}},
		{name: "a configured bound below the share stands", plan: MemoryPlan{StateCache: 32 * mib},
			c: state.CacheConfig{MaxEntries: 1000, FlushEvery: 100}, workers: 1, want: state.CacheConfig{MaxEntries: 1000, FlushEvery: 100}},
		{name: "a share below the write log: FlushEvery halves", plan: MemoryPlan{StateCache: 17 * 1000}, c: def, workers: 1,
			want: state.CacheConfig{MaxEntries: 800, FlushEvery: 400}},
		{name: "a share for less than two entries: two", plan: MemoryPlan{StateCache: 1}, c: def, workers: 4,
			want: state.CacheConfig{MaxEntries: 2, FlushEvery: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.plan.StateCacheConfig(tc.c, tc.workers)
			if got != tc.want {
				t.Errorf("StateCacheConfig = %+v, want %+v", got, tc.want)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("StateCacheConfig = %+v: %v", got, err)
			}
		})
	}
}

// TestLinksCache: the DB worker's links cache is lowered to what the plan's LinksSeen holds, never raised,
// and left alone without a limit.
func TestLinksCache(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name    string
		plan    MemoryPlan
		n, want int
	}{
		{"the default 500,000 in 8 MiB", MemoryPlan{LinksSeen: 8 * mib}, 500_000, dbworker.LinksCacheIn(8 * mib)},
		{"a smaller setting stays", MemoryPlan{LinksSeen: 8 * mib}, 1000, 1000},
		{"0 (no set) stays 0", MemoryPlan{LinksSeen: 8 * mib}, 0, 0},
		{"no limit", MemoryPlan{}, 500_000, 500_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.plan.LinksCache(tc.n); got != tc.want {
				t.Errorf("LinksCache(%d) = %d, want %d", tc.n, got, tc.want)
			}
		})
	}
	if n := dbworker.LinksCacheIn(8 * mib); n < 100_000 || n > 110_000 {
		t.Errorf("LinksCacheIn(8 MiB) = %d, want about 105,000 (80 bytes a fingerprint)", n)
	}
}
