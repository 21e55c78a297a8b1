package standalone

import (
	"fmt"
	"runtime/debug"

	"github.com/frontiercrawl/frontier/dbworker"
	"github.com/frontiercrawl/frontier/pebblestore"
	"github.com/frontiercrawl/frontier/spider"
	"github.com/frontiercrawl/frontier/state"
)

// MemoryPlan is how a standalone process's memory is split (see the package doc, "Memory").
type MemoryPlan struct {
	Total       int64 // Config.MemoryLimit; 0: no limit
	PebbleCache int64 // Pebble's block cache, memtables reserved inside it
	MemTable    int64 // one memtable; 0: pebblestore's rule (an eighth of the cache)
	BodyBudget  int64 // response-body bytes in memory over all the spiders
	// GatewayCache is the block cache of the URLFrontier gateway's own Pebble store (standalone --urlfrontier;
	// MemoryWithGateway); 0: no gateway, or no limit (the gateway keeps its package default).
	GatewayCache int64
	GoLimit      int64 // the Go runtime's soft limit; 0: none
	// The bounded structures of the Go heap, sized from what GoLimit leaves beside the bodies (the heap's
	// own share, sizeHeap) so that they fit in it whatever the crawl's size; 0 (no limit): each package's
	// default.
	StateCache int64 // the strategy workers' state caches together (StateCacheConfig)
	PageCache  int64 // the DB worker's page cache (pebblestore.Config.PageCacheBytes)
	PageFilter int64 // the DB worker's page-key filter (pebblestore.Config.PageFilterBytes)
	StateBloom int64 // the cap of the states' Bloom filter (pebblestore.Config.BloomMaxBytes)
	LinksSeen  int64 // the DB worker's set of links recorded lately (LinksCache)
	SeenFilter int64 // the URLFrontier gateway's seen filter (urlfrontier.StoreConfig.SeenFilterBytes); 0: no gateway
}

// GCPercent is the collector's target (GOGC) that SetRuntime sets beside the soft limit. Under the limit the Go
// heap cannot outgrow GoLimit whatever GOGC says: the limit makes the collector run sooner once the heap
// nears it. GOGC only decides how often it runs while the live heap is well below: at the runtime's 100 it
// collects each time the heap doubles, at 200 when it triples, which on the fast timing web (BENCHMARKS.md,
// stop 43) cut the crawl's CPU by a tenth for 30–50 MiB more peak RSS (226–259 MiB there, the default 256 MiB
// limit's Go part being 192 MiB: the rest is Pebble's cache and what the runtime does not count).
const GCPercent = 200

// SetRuntime makes GoLimit the process's soft memory limit (runtime/debug.SetMemoryLimit, as GOMEMLIMIT) and
// GCPercent its collector target, as cmd/standalone does at start; Run never does, since a library must not
// change its host process. It does nothing without a limit (GoLimit 0: GOGC 200 is for a bounded heap only),
// nor when the environment sets GOMEMLIMIT or GOGC (the operator's word wins, for both: GOGC 200 goes with the
// plan's limit). It returns the variables that made it leave the runtime alone, for the caller to log.
func (p MemoryPlan) SetRuntime(getenv func(string) string) (set []string) {
	if p.GoLimit <= 0 {
		return nil
	}
	for _, v := range []string{"GOMEMLIMIT", "GOGC"} {
		if val := getenv(v); val != "" {
			set = append(set, v+"="+val)
		}
	}
	if len(set) > 0 {
		return set
	}
	debug.SetMemoryLimit(p.GoLimit)
	debug.SetGCPercent(GCPercent)
	return nil
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
	p.sizeHeap()
	return p
}

// The parts of the Go heap's own share (GoLimit − BodyBudget) its bounded structures get, 11/32 of it
// together: an eighth for the state caches (16 MiB of the default 256 MiB), a sixteenth each for the page
// cache, the states' Bloom filter (its first two layers, about 3 M URLs at 1%) and the DB worker's set of
// recorded links, and a thirty-second for the page filter. The rest is for what has no bound of its own: the
// batches and messages in flight (60–80 MB on a crawl of a million pages, at the default batch sizes),
// buffers, and the collector's headroom: a live heap close to the soft limit makes the collector run without
// pause (a 1 M-page crawl with the structures at twice these shares spent 46% of its CPU collecting).
const (
	stateCacheShare = 8
	pageCacheShare  = 16
	pageFilterShare = 32
	stateBloomShare = 16
	linksSeenShare  = 16
	seenFilterShare = 16 // with a gateway (MemoryWithGateway): 7 MiB of the default 256 MiB
)

// sizeHeap derives StateCache, PageCache, PageFilter, StateBloom and LinksSeen from GoLimit and BodyBudget (at
// least 1 MiB each; nothing without a limit).
func (p *MemoryPlan) sizeHeap() {
	p.StateCache, p.PageCache, p.PageFilter, p.StateBloom, p.LinksSeen = 0, 0, 0, 0, 0
	if p.GoLimit <= 0 {
		return
	}
	heap := p.heapShare()
	p.StateCache = max(heap/stateCacheShare, 1<<20)
	p.PageCache = max(heap/pageCacheShare, 1<<20)
	p.PageFilter = max(heap/pageFilterShare, 1<<20)
	p.StateBloom = max(heap/stateBloomShare, 1<<20)
	p.LinksSeen = max(heap/linksSeenShare, 1<<20)
}

// LinksCache returns n (db_worker.links_cache) lowered, if it must be, to what LinksSeen holds
// (dbworker.LinksCacheIn). Without a limit it returns n; 0 (no set) stays 0.
func (p MemoryPlan) LinksCache(n int) int {
	if p.LinksSeen <= 0 {
		return n
	}
	return min(n, max(dbworker.LinksCacheIn(p.LinksSeen), 2))
}

// heapShare is the Go heap's own share: what the Go limit leaves beside the bodies.
func (p MemoryPlan) heapShare() int64 { return p.GoLimit - p.BodyBudget }

// StateCacheConfig returns c for each of workers strategy workers, its MaxEntries lowered, if it must be, to
// the worker's share of StateCache (state.CacheEntriesIn), and FlushEvery to half of that. Without a limit
// it returns c.
func (p MemoryPlan) StateCacheConfig(c state.CacheConfig, workers int) state.CacheConfig {
	if p.StateCache <= 0 {
		return c
	}
	n := max(state.CacheEntriesIn(p.StateCache/int64(max(workers, 1))), 2)
	if n < c.MaxEntries {
		c.MaxEntries = n
		c.FlushEvery = max(min(c.FlushEvery, n/2), 1)
	}
	return c
}

// gatewayShare is the part of MemoryLimit a URLFrontier gateway's own store gets for its block cache (and the
// memtables reserved in it): a sixteenth, 16 MiB of the default 256 MiB.
const gatewayShare = 16

// MemoryWithGateway is Memory for a standalone that also serves the URLFrontier API from a gateway with a Pebble
// store of its own (standalone --urlfrontier): that store's cache is a sixteenth of the limit (at least 1 MiB),
// taken from the Go heap's share, so the whole process stays within MemoryLimit, and the Go heap's structures
// are sized from what is left, the store's seen filter among them (an eighth). Without a limit it is Memory.
func (c Config) MemoryWithGateway() MemoryPlan {
	p := c.Memory()
	if p.Total > 0 {
		p.GatewayCache = max(p.Total/gatewayShare, 1<<20)
		p.GoLimit -= p.GatewayCache
		p.sizeHeap()
		p.SeenFilter = max(p.heapShare()/seenFilterShare, 1<<20)
	}
	return p
}

// Check reports a split that leaves the Go heap nothing: explicit parts that add up to the whole limit.
func (p MemoryPlan) Check() error {
	if p.Total > 0 && p.PebbleCache+p.BodyBudget+p.GatewayCache >= p.Total {
		gw := ""
		if p.GatewayCache > 0 {
			gw = fmt.Sprintf(" and the URLFrontier gateway's cache %d (a sixteenth of the limit)", p.GatewayCache)
		}
		return fmt.Errorf("memory_limit = %d leaves nothing for the Go heap beside pebble.cache_bytes %d and spider.body_budget_bytes %d%s: raise it or lower them",
			p.Total, p.PebbleCache, p.BodyBudget, gw)
	}
	return nil
}
