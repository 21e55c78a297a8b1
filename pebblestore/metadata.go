package pebblestore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/internal/keyfilter"
	"github.com/frontiercrawl/frontier/metadata"
)

// Pages is the metadata.Store on the m keys. Safe for concurrent use; it lives as long as its DB.
type Pages struct {
	d  *DB
	mu sync.Mutex // Put reads, merges and writes
	// filter holds, under mu, every page key stored (loaded at the first Put): Put reads only the keys it may
	// hold. filterCap and filterMax size it (0: pageFilterFirstCap, and Config.PageFilterBytes or pageFilterMaxBytes).
	filter               *keyfilter.Filter
	filterCap, filterMax int
	// cache holds, under mu, the stored records of the pages Put wrote or read lately: Put merges into a
	// cached record without reading it (the links role records the same links again and again).
	cache pageCache
}

var _ metadata.Store = (*Pages)(nil)

func (p *Pages) get(fp []byte) (metadata.Page, bool, error) {
	v, closer, err := p.d.db.Get(prefixed(pfxPage, fp))
	if errors.Is(err, pebble.ErrNotFound) {
		return metadata.Page{}, false, nil
	}
	if err != nil {
		return metadata.Page{}, false, fmt.Errorf("pebblestore: page get %x: %w", fp, err)
	}
	defer closer.Close()
	pg, err := decodePage(fp, v)
	return pg, err == nil, err
}

// Get implements metadata.Store.
func (p *Pages) Get(ctx context.Context, fp frontier.Fingerprint) (metadata.Page, bool, error) {
	if err := ctx.Err(); err != nil {
		return metadata.Page{}, false, err
	}
	return p.get(fp)
}

// Put implements metadata.Store: it merges each page into the stored record (metadata.Merge) in one batch.
//
// The links role calls it with hundreds of pages a batch, most of them links never recorded, each read only to
// merge: so the pages are sorted by fingerprint and looked up with one iterator walking forward (Pebble keeps
// its position in every level between nearby keys, where a Get builds a new iterator for every key), and a
// record the merge leaves as it was (a link recorded before) is not written again, which spares the memtable
// and the compactions its copy. The merge works on the stored record's bytes (appendMergedPage: the record
// metadata.Merge of the decoded record would give, byte for byte) without decoding it into a Page. A page
// whose key the page filter does not hold (pagefilter.go: every page key stored) is not read at all: it is
// certainly not stored, and merges into an empty record; nor is a page whose record Put wrote or read lately
// (pageCache). Why Put reads rather than writing Pebble merge
// operands: the package doc, "Page records".
func (p *Pages) Put(ctx context.Context, pages []metadata.Page) error {
	if err := metadata.CheckPages(pages); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(pages) == 0 {
		return nil
	}
	idx := make([]int, len(pages))
	for i := range idx {
		idx[i] = i
	}
	// Stable: the pages of one fingerprint merge in the order given.
	slices.SortStableFunc(idx, func(a, b int) int { return bytes.Compare(pages[a].Fingerprint, pages[b].Fingerprint) })
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.filter == nil {
		f, err := loadPageFilter(p.d.db, cmp.Or(p.filterCap, pageFilterFirstCap), cmp.Or(p.filterMax, pageFilterMaxBytes))
		if err != nil {
			return fmt.Errorf("pebblestore: page put: load the page filter: %w", err)
		}
		p.filter = f
	}
	// Which pages may be stored (the first of each fingerprint's run says for the run): only those are read.
	key := make([]byte, 0, 33)
	maybe := make([]bool, len(idx))
	cached := make([][]byte, len(idx)) // the cache's record for the first page of a run, if it has one
	reads := 0
	for i := range idx {
		fp := pages[idx[i]].Fingerprint
		if i > 0 && bytes.Equal(pages[idx[i-1]].Fingerprint, fp) {
			continue
		}
		key = append(append(key[:0], pfxPage), fp...)
		if rec, ok := p.cache.get(key); ok {
			cached[i] = rec // never nil: a record is at least its header
			continue
		}
		if maybe[i] = p.filter.MayContain(key); maybe[i] {
			reads++
		}
	}
	look, done, err := p.d.seeker(pfxPage, reads, true)
	if err != nil {
		return fmt.Errorf("pebblestore: page put: %w", err)
	}
	defer done()
	b := p.d.db.NewBatch()
	defer b.Close()
	var val, next []byte
	var known []knownPage // records stored once the batch commits, for the cache
	for i := 0; i < len(idx); {
		fp := pages[idx[i]].Fingerprint
		key = append(append(key[:0], pfxPage), fp...)
		stored, inCache := cached[i], cached[i] != nil
		found := inCache
		if maybe[i] {
			if stored, found, err = look(key); err != nil {
				return fmt.Errorf("pebblestore: page put: %w", err)
			}
		}
		var rec pageRec
		if found {
			if rec, err = parsePageRecord(stored); err != nil {
				return fmt.Errorf("pebblestore: page put %x: %w", fp, err)
			}
		}
		val = appendMergedPage(val[:0], &rec, &pages[idx[i]])
		for i++; i < len(idx) && bytes.Equal(pages[idx[i]].Fingerprint, fp); i++ {
			if rec, err = parsePageRecord(val); err != nil {
				return fmt.Errorf("pebblestore: page put %x: %w", fp, err)
			}
			next = appendMergedPage(next[:0], &rec, &pages[idx[i]])
			val, next = next, val
		}
		if found && bytes.Equal(val, stored) {
			if !inCache {
				known = append(known, knownPage{string(key), slices.Clone(val)})
			}
			continue // nothing new about this page
		}
		if err := b.Set(key, val, nil); err != nil {
			return fmt.Errorf("pebblestore: page put: %w", err)
		}
		p.filter.Add(key) // before the commit: a key the filter holds and the batch does not write is a read more
		known = append(known, knownPage{string(key), slices.Clone(val)})
	}
	if !b.Empty() {
		if err := b.Commit(p.d.wo); err != nil {
			p.cache.drop(known) // those not written keep their records; the others may or may not be stored
			return fmt.Errorf("pebblestore: page put: %w", err)
		}
	}
	for _, k := range known {
		p.cache.put(k.key, k.rec)
	}
	return nil
}

// knownPage is a page key and the record stored at it once Put's batch is committed.
type knownPage struct {
	key string
	rec []byte
}

// pageCache remembers the records stored at page keys, in two generations of at most pageCacheBytes/2 each
// (keys, records and an estimate of the map's overhead): when the current one is full, the older is dropped
// and the current becomes the older. A record found in the older is moved to the current. Pages.mu guards it.
type pageCache struct {
	cur, prev map[string][]byte
	size      int // bytes held by cur
	max       int // Config.PageCacheBytes; 0: pageCacheBytes
}

// pageCacheBytes bounds the page cache by default (Config.PageCacheBytes; about 150 bytes a link's record:
// ~110,000 pages).
const pageCacheBytes = 16 << 20

// pageCacheEntry estimates what an entry costs beyond its key's and its record's bytes.
const pageCacheEntry = 64

func (c *pageCache) get(key []byte) ([]byte, bool) {
	if v, ok := c.cur[string(key)]; ok {
		return v, true
	}
	v, ok := c.prev[string(key)]
	if ok {
		delete(c.prev, string(key))
		c.put(string(key), v)
	}
	return v, ok
}

func (c *pageCache) put(key string, rec []byte) {
	n := len(key) + len(rec) + pageCacheEntry
	if c.cur == nil || c.size+n > cmp.Or(c.max, pageCacheBytes)/2 {
		c.prev, c.cur, c.size = c.cur, make(map[string][]byte), 0
	}
	if old, ok := c.cur[key]; ok {
		c.size -= len(key) + len(old) + pageCacheEntry
	}
	c.cur[key] = rec
	c.size += n
	delete(c.prev, key)
}

// drop forgets the records of pages.
func (c *pageCache) drop(pages []knownPage) {
	for _, k := range pages {
		if old, ok := c.cur[k.key]; ok {
			c.size -= len(k.key) + len(old) + pageCacheEntry
			delete(c.cur, k.key)
		}
		delete(c.prev, k.key)
	}
}

// Domains is the metadata.Domains on the d keys. Safe for concurrent use; it lives as long as its DB.
type Domains struct {
	d  *DB
	mu sync.Mutex // Add reads and writes
	// known holds, under mu, the counters and sources' marks Add and AddOnce read or wrote (absent ones too):
	// they are the only writers of those keys and the DB is this process's alone, so AddOnce reads Pebble only
	// for a key it has not met (a strategy worker adds to the same hosts' counters batch after batch: two point
	// reads per key were most of its counters' cost). Dropped whole past maxKnownCounters.
	known map[string]knownCounter
}

type knownCounter struct {
	v  int64
	ok bool // stored (a mark can be absent; an absent counter is 0)
}

// maxKnownCounters bounds Domains.known (about 100 bytes an entry).
const maxKnownCounters = 1 << 16

// remember records what key holds; mu is held.
func (d *Domains) remember(key []byte, v int64, ok bool) {
	if d.known == nil || len(d.known) >= maxKnownCounters {
		d.known = make(map[string]knownCounter)
	}
	d.known[string(key)] = knownCounter{v, ok}
}

// valueKnown is value through known; mu is held.
func (d *Domains) valueKnown(key []byte) (int64, error) {
	if k, ok := d.known[string(key)]; ok {
		return k.v, nil
	}
	v, err := d.value(key)
	if err == nil {
		d.remember(key, v, true)
	}
	return v, err
}

// markKnown is mark through known; mu is held.
func (d *Domains) markKnown(key []byte) (int64, bool, error) {
	if k, ok := d.known[string(key)]; ok {
		return k.v, k.ok, nil
	}
	s, ok, err := d.mark(key)
	if err == nil {
		d.remember(key, s, ok)
	}
	return s, ok, err
}

var _ metadata.ExactDomains = (*Domains)(nil)

func (d *Domains) value(key []byte) (int64, error) {
	v, closer, err := d.d.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("pebblestore: counter %q: %w", key[1:], err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("pebblestore: counter %q holds %d bytes, want 8", key[1:], len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// Add implements metadata.Domains.
func (d *Domains) Add(ctx context.Context, name string, domains []string, delta []int64) ([]int64, error) {
	if err := metadata.CheckAdd(name, domains, delta); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	cur := make(map[string]int64, len(domains))
	out := make([]int64, len(domains))
	for i, dom := range domains {
		v, ok := cur[dom]
		if !ok {
			var err error
			if v, err = d.valueKnown(domainKey(name, dom)); err != nil {
				return nil, err
			}
		}
		v += delta[i]
		cur[dom], out[i] = v, v
	}
	b := d.d.db.NewBatch()
	defer b.Close()
	for dom, v := range cur {
		if err := b.Set(domainKey(name, dom), binary.BigEndian.AppendUint64(nil, uint64(v)), nil); err != nil {
			return nil, fmt.Errorf("pebblestore: counters add: %w", err)
		}
	}
	if err := b.Commit(d.d.wo); err != nil {
		return nil, fmt.Errorf("pebblestore: counters add: %w", err)
	}
	for dom, v := range cur {
		d.remember(domainKey(name, dom), v, true)
	}
	return out, nil
}

// Get implements metadata.Domains.
func (d *Domains) Get(ctx context.Context, name string, domains []string) ([]int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]int64, len(domains))
	for i, dom := range domains {
		v, err := d.value(domainKey(name, dom))
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// AddOnce implements metadata.ExactDomains: the counters and the sources' marks are written in one batch, so a
// batch replayed after a kill (its offsets not yet committed in the bus) is not counted twice.
func (d *Domains) AddOnce(ctx context.Context, name string, tallies []metadata.Tally) ([]int64, error) {
	if err := metadata.CheckTallies(name, tallies); err != nil {
		return nil, fmt.Errorf("pebblestore: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	b := d.d.db.NewBatch()
	defer b.Close()
	order, groups := metadata.ByDomain(tallies)
	final := make(map[string]int64, len(order))
	var written []knownWrite // remembered once the batch is committed
	for _, dom := range order {
		v, err := d.valueKnown(domainKey(name, dom))
		if err != nil {
			return nil, err
		}
		applied := map[string]int64{}
		for _, t := range groups[dom] {
			if _, ok := applied[t.Source]; ok {
				continue
			}
			if s, ok, err := d.markKnown(markKey(name, dom, t.Source)); err != nil {
				return nil, err
			} else if ok {
				applied[t.Source] = s
			}
		}
		delta, seqs := metadata.Pending(groups[dom], applied)
		final[dom] = v + delta
		if len(seqs) == 0 {
			continue
		}
		key := domainKey(name, dom)
		if err := b.Set(key, binary.BigEndian.AppendUint64(nil, uint64(v+delta)), nil); err != nil {
			return nil, fmt.Errorf("pebblestore: counters add: %w", err)
		}
		written = append(written, knownWrite{key, v + delta})
		for src, seq := range seqs {
			key := markKey(name, dom, src)
			if err := b.Set(key, binary.BigEndian.AppendUint64(nil, uint64(seq)), nil); err != nil {
				return nil, fmt.Errorf("pebblestore: counters add: %w", err)
			}
			written = append(written, knownWrite{key, seq})
		}
	}
	if !b.Empty() {
		if err := b.Commit(d.d.wo); err != nil {
			return nil, fmt.Errorf("pebblestore: counters add: %w", err)
		}
	}
	for _, w := range written {
		d.remember(w.key, w.v, true)
	}
	out := make([]int64, len(tallies))
	for i, t := range tallies {
		out[i] = final[t.Domain]
	}
	return out, nil
}

type knownWrite struct {
	key []byte
	v   int64
}

// mark reads the highest Seq applied at key, and whether there is one.
func (d *Domains) mark(key []byte) (int64, bool, error) {
	v, closer, err := d.d.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("pebblestore: counter mark %q: %w", key[1:], err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, false, fmt.Errorf("pebblestore: counter mark %q holds %d bytes, want 8", key[1:], len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), true, nil
}
