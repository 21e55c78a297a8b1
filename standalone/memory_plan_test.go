package standalone

import (
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier/pebblestore"
	"github.com/frontiercrawl/frontier/spider"
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
			want: MemoryPlan{Total: 256 * mib, PebbleCache: 64 * mib, MemTable: 16 * mib, BodyBudget: 64 * mib, GoLimit: 192 * mib}},
		{name: "no limit: the packages' defaults, no Go limit",
			want: MemoryPlan{PebbleCache: pebblestore.DefaultConfig().CacheBytes, BodyBudget: spider.DefaultBodyBudgetBytes}},
		{name: "no limit, explicit parts", cache: 32 * mib, budget: 8 * mib,
			want: MemoryPlan{PebbleCache: 32 * mib, BodyBudget: 8 * mib}},
		{name: "explicit cache: its memtable is pebblestore's rule", limit: 256 * mib, cache: 128 * mib,
			want: MemoryPlan{Total: 256 * mib, PebbleCache: 128 * mib, BodyBudget: 64 * mib, GoLimit: 128 * mib}},
		{name: "explicit memtable and budget", limit: 1024 * mib, mt: 8 * mib, budget: 100 * mib,
			want: MemoryPlan{Total: 1024 * mib, PebbleCache: 256 * mib, MemTable: 8 * mib, BodyBudget: 100 * mib, GoLimit: 768 * mib}},
		{name: "a large limit: the memtable stops at 32 MiB", limit: 4096 * mib,
			want: MemoryPlan{Total: 4096 * mib, PebbleCache: 1024 * mib, MemTable: 32 * mib, BodyBudget: 1024 * mib, GoLimit: 3072 * mib}},
		{name: "a small limit: the memtable at least 1 MiB", limit: 8 * mib,
			want: MemoryPlan{Total: 8 * mib, PebbleCache: 2 * mib, MemTable: 1 * mib, BodyBudget: 2 * mib, GoLimit: 6 * mib}},
		{name: "explicit parts leaving the Go heap nothing", limit: 256 * mib, cache: 200 * mib, budget: 64 * mib,
			want: MemoryPlan{Total: 256 * mib, PebbleCache: 200 * mib, BodyBudget: 64 * mib, GoLimit: 56 * mib},
			bad:  "leaves nothing for the Go heap"},
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
			want: MemoryPlan{Total: 256 * mib, PebbleCache: 64 * mib, MemTable: 16 * mib, BodyBudget: 64 * mib, GatewayCache: 16 * mib, GoLimit: 176 * mib}},
		{name: "no limit: the gateway keeps its package default",
			want: MemoryPlan{PebbleCache: pebblestore.DefaultConfig().CacheBytes, BodyBudget: spider.DefaultBodyBudgetBytes}},
		{name: "a small limit: at least 1 MiB", limit: 8 * mib,
			want: MemoryPlan{Total: 8 * mib, PebbleCache: 2 * mib, MemTable: 1 * mib, BodyBudget: 2 * mib, GatewayCache: 1 * mib, GoLimit: 5 * mib}},
		{name: "explicit parts that leave the Go heap nothing once the gateway has its share", limit: 256 * mib, cache: 128 * mib, budget: 112 * mib,
			want: MemoryPlan{Total: 256 * mib, PebbleCache: 128 * mib, BodyBudget: 112 * mib, GatewayCache: 16 * mib, GoLimit: 112 * mib},
			bad:  "URLFrontier gateway's cache"},
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
