package configs

import (
	"testing"

	"github.com/frontiercrawl/frontier/standalone"
)

// TestStandaloneMemoryDefaults: cmd/standalone's defaults derive Pebble's cache and the spiders' one body
// budget from standalone.memory_limit, and the Go runtime's limit leaves Pebble's cache out.
func TestStandaloneMemoryDefaults(t *testing.T) {
	cfg, err := Load(Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := standalone.MemoryPlan{Total: 256 << 20, PebbleCache: 64 << 20, MemTable: 16 << 20, BodyBudget: 64 << 20, GoLimit: 192 << 20,
		StateCache: 16 << 20, PageCache: 8 << 20, PageFilter: 4 << 20, StateBloom: 8 << 20, LinksSeen: 8 << 20}
	if got := cfg.Standalone.Memory(); got != want {
		t.Errorf("standalone memory plan %+v, want %+v", got, want)
	}
	set, err := Load(Options{Sets: []string{"standalone.pebble.cache_bytes=134217728", "spider.body_budget_bytes=33554432"}})
	if err != nil {
		t.Fatal(err)
	}
	want = standalone.MemoryPlan{Total: 256 << 20, PebbleCache: 128 << 20, BodyBudget: 32 << 20, GoLimit: 128 << 20,
		StateCache: 12 << 20, PageCache: 6 << 20, PageFilter: 3 << 20, StateBloom: 6 << 20, LinksSeen: 6 << 20}
	if got := set.Standalone.Memory(); got != want {
		t.Errorf("with cache_bytes and body_budget_bytes set: %+v, want %+v", got, want)
	}
}
