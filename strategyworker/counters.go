package strategyworker

import (
	"context"

	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/strategy"
)

// maxCachedCounters bounds the counter cache: past it, the cache is dropped after a flush and reloads from the
// store (≈ 100 bytes an entry, so about 100 MB at the bound).
const maxCachedCounters = 1 << 20

// counters caches a strategy's per-host and per-domain counters in front of the domain metadata store. Reads
// miss to the store once per (name, key); additions are kept as deltas and written with one Add per counter
// name at the end of each batch, after the scores were sent and the states flushed. The value cached is the
// store's answer to that Add, so additions by other workers (a registrable domain whose hosts several workers
// own) show up at the next write.
//
// The write is exact (metadata.AddOnce): it is tagged with the worker's spider-log partition (the source) and
// the last offset of the batch (the Seq), so a write retried through an HBase outage, or a batch replayed after
// a crash between the write and the commit, is not counted twice. (A crash between the states' flush and this
// write loses the batch's additions: the replay finds the URLs' new states and does not count them again; so a
// budget errs on the low side by at most one batch per crash.)
type counters struct {
	store  metadata.Domains
	max    int
	source string                      // the spider-log partition the batch came from; "" writes with Add (tests that call handle)
	seq    int64                       // the last offset of the batch being handled
	values map[string]map[string]int64 // name → key → value
	delta  map[string]map[string]int64 // name → key → unwritten delta
	n      int
	// domains remembers strategy.Domain of the hosts met (at most maxCachedDomains).
	domains map[string]string
	// seen and keys are prefetch's scratch, cleared and kept from batch to batch.
	seen map[string]bool
	keys []string
}

// maxCachedDomains bounds counters.domains (past it, it starts over).
const maxCachedDomains = 1 << 16

func newCounters(store metadata.Domains, max int) *counters {
	return &counters{store: store, max: max, values: map[string]map[string]int64{}, delta: map[string]map[string]int64{},
		domains: map[string]string{}}
}

// prefetch loads, for every counter name used so far, the hosts' values and their registrable domains' in one
// store read per name.
func (c *counters) prefetch(ctx context.Context, hosts []string) error {
	if len(c.values) == 0 || len(hosts) == 0 {
		return nil
	}
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	seen, keys := c.seen, c.keys[:0]
	defer func() { clear(seen); clear(keys); c.keys = keys[:0] }()
	last := ""
	for i, h := range hosts {
		if i > 0 && h == last || seen[h] {
			continue // a host met before (the batch lists one per URL, a page's links in a row): its domain is in keys already
		}
		last = h
		for _, k := range []string{h, c.domain(h)} {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	for name, vals := range c.values {
		if name == counterTemplatePages {
			continue // keyed by host and template, not by host: load reads it
		}
		var miss []string
		for _, k := range keys {
			if _, ok := vals[k]; !ok {
				miss = append(miss, k)
			}
		}
		if len(miss) == 0 {
			continue
		}
		got, err := c.store.Get(ctx, name, miss)
		if err != nil {
			return err
		}
		for i, k := range miss {
			vals[k] = got[i]
			c.n++
		}
	}
	return nil
}

// domain is strategy.Domain(host), remembered across batches (a worker's partition names the same hosts).
func (c *counters) domain(host string) string {
	if d, ok := c.domains[host]; ok {
		return d
	}
	if len(c.domains) >= maxCachedDomains {
		clear(c.domains)
	}
	d := strategy.Domain(host)
	c.domains[host] = d
	return d
}

// load reads, in one store call, the keys of counter name not cached yet.
func (c *counters) load(ctx context.Context, name string, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	vals := c.values[name]
	if vals == nil {
		vals = map[string]int64{}
		c.values[name] = vals
	}
	var miss []string
	for _, k := range keys {
		if _, ok := vals[k]; !ok {
			miss = append(miss, k)
		}
	}
	if len(miss) == 0 {
		return nil
	}
	got, err := c.store.Get(ctx, name, miss)
	if err != nil {
		return err
	}
	for i, k := range miss {
		vals[k] = got[i]
		c.n++
	}
	return nil
}

// get returns a counter, reading the store on a miss.
func (c *counters) get(ctx context.Context, name, key string) (int64, error) {
	vals := c.values[name]
	if vals == nil {
		vals = map[string]int64{}
		c.values[name] = vals
	}
	if v, ok := vals[key]; ok {
		return v, nil
	}
	got, err := c.store.Get(ctx, name, []string{key})
	if err != nil {
		return 0, err
	}
	vals[key] = got[0]
	c.n++
	return got[0], nil
}

// set records a new value and the delta that led to it.
func (c *counters) set(name, key string, v, delta int64) {
	c.values[name][key] = v
	d := c.delta[name]
	if d == nil {
		d = map[string]int64{}
		c.delta[name] = d
	}
	d[key] += delta
}

// flush writes the deltas and caches the store's values.
func (c *counters) flush(ctx context.Context) error {
	for name, d := range c.delta {
		if len(d) == 0 {
			continue
		}
		keys := make([]string, 0, len(d))
		deltas := make([]int64, 0, len(d))
		for k, v := range d {
			keys = append(keys, k)
			deltas = append(deltas, v)
		}
		var got []int64
		var err error
		if c.source == "" {
			got, err = c.store.Add(ctx, name, keys, deltas)
		} else {
			tallies := make([]metadata.Tally, len(keys))
			for i := range keys {
				tallies[i] = metadata.Tally{Domain: keys[i], Delta: deltas[i], Source: c.source, Seq: c.seq}
			}
			got, err = metadata.AddOnce(ctx, c.store, name, tallies)
		}
		if err != nil {
			return err
		}
		for i, k := range keys {
			c.values[name][k] = got[i]
		}
		clear(d) // kept for the next batch's deltas of name: no map grown again per batch
	}
	if c.n > c.max {
		for name := range c.values {
			c.values[name] = map[string]int64{} // keep the names: prefetch loads them
		}
		c.n = 0
	}
	return nil
}

// reset forgets every cached value and unwritten delta.
func (c *counters) reset() {
	c.values, c.delta, c.n = map[string]map[string]int64{}, map[string]map[string]int64{}, 0
}
