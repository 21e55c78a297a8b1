package standalone

import (
	"fmt"

	"github.com/frontiercrawl/frontier/pebblestore"
	"github.com/frontiercrawl/frontier/spider"
)

// MemoryPlan is how a standalone process's memory is split (see the package doc, "Memory").
type MemoryPlan struct {
	Total       int64 // Config.MemoryLimit; 0: no limit
	PebbleCache int64 // Pebble's block cache, memtables reserved inside it
	MemTable    int64 // one memtable; 0: pebblestore's rule (an eighth of the cache)
	BodyBudget  int64 // response-body bytes in memory over all the spiders
	GoLimit     int64 // the Go runtime's soft limit; 0: none
}

// memtableMax is the largest memtable the plan derives (pebblestore's own derivation stops there too).
const memtableMax = 32 << 20

// Memory returns the process's memory split: the parts the configuration sets explicitly, the others derived
// from MemoryLimit.
func (c Config) Memory() MemoryPlan {
	p := MemoryPlan{Total: c.MemoryLimit, PebbleCache: c.Pebble.CacheBytes, MemTable: c.Pebble.MemTableBytes,
		BodyBudget: c.Spider.BodyBudgetBytes}
	if p.PebbleCache == 0 {
		if p.Total > 0 {
			p.PebbleCache = p.Total / 4
			if p.MemTable == 0 {
				p.MemTable = min(max(p.PebbleCache/4, 1<<20), memtableMax)
			}
		} else {
			p.PebbleCache = pebblestore.DefaultConfig().CacheBytes
		}
	}
	if p.BodyBudget == 0 {
		p.BodyBudget = spider.DefaultBodyBudgetBytes
		if p.Total > 0 {
			p.BodyBudget = p.Total / 4
		}
	}
	if p.Total > 0 {
		p.GoLimit = p.Total - p.PebbleCache
	}
	return p
}

// check reports a split that leaves the Go heap nothing: explicit parts that add up to the whole limit.
func (p MemoryPlan) check() error {
	if p.Total > 0 && p.PebbleCache+p.BodyBudget >= p.Total {
		return fmt.Errorf("memory_limit = %d leaves nothing for the Go heap beside pebble.cache_bytes %d and spider.body_budget_bytes %d: raise it or lower them",
			p.Total, p.PebbleCache, p.BodyBudget)
	}
	return nil
}
