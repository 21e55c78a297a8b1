package state

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"

	"github.com/frontiercrawl/frontier"
)

// CacheConfig bounds a Cache.
type CacheConfig struct {
	// MaxEntries is the most fingerprints the cache holds (clean, dirty and known-absent together).
	MaxEntries int `mapstructure:"max_entries"`
	// FlushEvery is the number of dirty (written, not yet stored) fingerprints at which Put writes them back
	// to the store in one batch. It must be below MaxEntries.
	FlushEvery int `mapstructure:"flush_every"`
}

// DefaultCacheConfig holds up to 3 million URLs (as Frontera's HBASE_STATE_CACHE_SIZE_LIMIT; about 64 MB when
// full, reached with use) and writes back every 15,000 changes (HBASE_STATE_WRITE_LOG_SIZE).
func DefaultCacheConfig() CacheConfig { return CacheConfig{MaxEntries: 3_000_000, FlushEvery: 15_000} }

// CacheEntriesIn is the largest MaxEntries whose full table fits in bytes (21.25 bytes an entry; the write
// log, at most FlushEvery entries, and a growing table's old copy come beside it).
func CacheEntriesIn(bytes int64) int { return int(float64(bytes) * loadFactor / slotBytes) }

// Validate reports every problem of the configuration.
func (c CacheConfig) Validate() error {
	var errs []error
	if c.MaxEntries < 2 || c.MaxEntries > 1<<36 {
		errs = append(errs, fmt.Errorf("state: cache max_entries = %d, want 2..2^36", c.MaxEntries))
	}
	if c.FlushEvery < 1 || c.FlushEvery >= c.MaxEntries {
		errs = append(errs, fmt.Errorf("state: cache flush_every = %d, want 1..max_entries-1 (%d)", c.FlushEvery, c.MaxEntries-1))
	}
	return errors.Join(errs...)
}

// CacheStats are the Cache's counters since it was made. The strategy worker exports them as metrics.
type CacheStats struct {
	Hits, Misses   int64 // fingerprints answered from the cache / read from the store
	Evictions      int64 // clean entries dropped to make room
	Flushes        int64 // write-back batches sent to the store
	FlushedEntries int64 // entries in those batches
	Len            int   // entries held now
	Dirty          int   // entries written but not yet flushed
}

// The table is open addressing with linear probing over parallel arrays (struct of arrays, no pointers, so
// the garbage collector never scans it). A slot is 17 bytes:
//
//	keys   uint64  xxhash64 of the full fingerprint (0 marks an empty slot; a hash of 0 is stored as 1)
//	checks uint32  CRC-32C of the full fingerprint: a second, independent hash that verifies a key match
//	revs   uint32  RevisitAt in Unix seconds when it fits in [0, 2^32-2]; revOverflow sends to a side map
//	meta   uint8   state (2 bits) | dirty | referenced (CLOCK) | absent (the store has no such fingerprint)
//
// The capacity grows with use: the table starts at initialSlots and doubles (rehashing every entry) whenever
// an insert would pass a load factor of 0.8, up to MaxEntries/0.8 slots (no power-of-two rounding: the slot
// index is the high half of hash × capacity), so a small crawl pays for the URLs it has, not for the bound,
// and a full cache costs 17/0.8 = 21.25 bytes per URL.
// Two fingerprints are confused only if both their 64-bit and their 32-bit hashes agree (about 2^-96 per
// pair, 10^-14 for a full 10-million-entry cache), which is the price of not storing the 20-byte keys.
const (
	metaState   = 0x03
	metaDirty   = 0x04
	metaRef     = 0x08
	metaAbsent  = 0x10
	revOverflow = math.MaxUint32
	loadFactor  = 0.8
	slotBytes   = 8 + 4 + 4 + 1
	// initialSlots is the table's size at start (about 1 MB).
	initialSlots = 1 << 16
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Cache is a bounded write-back cache of URL states in front of a Store. Get answers from memory what it
// can and reads the rest from the store in one batch; Put changes entries in memory and marks them dirty;
// dirty entries go back to the store in batches of CacheConfig.FlushEvery (or on Flush). A dirty entry is
// never evicted: when the cache is full of dirty entries, Put flushes first. Clean entries are evicted by
// CLOCK (second chance). It also remembers fingerprints the store does not have, so a link seen many times
// before it is scheduled costs one store read.
//
// The cache must be the only writer of its fingerprints to the store (in Frontier, each host belongs to one
// strategy worker: docs/architecture.md, invariant 1), or it serves stale states.
//
// Safe for concurrent use: one mutex guards the table, released while Get reads the store; Flush holds it
// while it writes. Call Flush before shutdown; the Cache does not own the Store and closes nothing.
type Cache struct {
	store    Store
	cfg      CacheConfig
	maxSlots int // the table's bound: MaxEntries/loadFactor

	mu struct {
		sync.Mutex
		keys   []uint64
		checks []uint32
		revs   []uint32
		meta   []uint8
		over   map[uint64]int64 // RevisitAt of slots marked revOverflow, by key
		n      int              // occupied slots
		hand   int              // CLOCK hand
		// The write log: the full fingerprints and entries of the dirty slots, one per fingerprint.
		log   []logEntry
		logAt map[uint64]int // key → index in log
		// logFPs is what the log's fingerprint copies are cut from (each capped); a flush lets it go with
		// them, so the store may keep what it was given.
		logFPs []byte
	}

	hits, misses, evictions, flushes, flushed atomic.Int64
}

type logEntry struct {
	fp  frontier.Fingerprint
	e   Entry
	k   uint64 // cacheHash(fp), so the flush finds the slot without hashing again
	chk uint32
}

var _ Store = (*Cache)(nil)

// NewCache returns an empty cache in front of store. Its table starts small and grows with use up to the
// bound cfg.MaxEntries sets.
func NewCache(store Store, cfg CacheConfig) (*Cache, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Cache{store: store, cfg: cfg, maxSlots: int(math.Ceil(float64(cfg.MaxEntries) / loadFactor))}
	c.alloc(min(initialSlots, c.maxSlots))
	c.mu.over = make(map[uint64]int64)
	c.mu.logAt = make(map[uint64]int)
	return c, nil
}

func (c *Cache) alloc(slots int) {
	c.mu.keys = make([]uint64, slots)
	c.mu.checks = make([]uint32, slots)
	c.mu.revs = make([]uint32, slots)
	c.mu.meta = make([]uint8, slots)
}

// TableBytes returns the memory of the table now: 17 bytes per slot (the write log and overflow map come on
// top, bounded by FlushEvery). It grows with the entries held, up to MaxEntries/0.8 slots.
func (c *Cache) TableBytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.keys) * slotBytes
}

// makeRoom grows the table, if it is below its bound, so one more entry keeps the load factor at most 0.8.
// Slot indexes found before it are stale after it. Locked.
func (c *Cache) makeRoom() {
	slots := len(c.mu.keys)
	if slots >= c.maxSlots || float64(c.mu.n+1) <= float64(slots)*loadFactor {
		return
	}
	keys, checks, revs, meta := c.mu.keys, c.mu.checks, c.mu.revs, c.mu.meta
	c.alloc(min(2*slots, c.maxSlots))
	for i, k := range keys {
		if k == 0 {
			continue
		}
		s, _ := c.find(k, checks[i])
		c.mu.keys[s], c.mu.checks[s], c.mu.revs[s], c.mu.meta[s] = k, checks[i], revs[i], meta[i]
	}
	c.mu.hand = 0
}

func cacheHash(fp []byte) (uint64, uint32) {
	k := xxhash.Sum64(fp)
	if k == 0 {
		k = 1
	}
	return k, crc32.Checksum(fp, crcTable)
}

// find returns the slot of (k, chk) and true, or the empty slot where it would go and false. Locked.
func (c *Cache) find(k uint64, chk uint32) (int, bool) {
	keys := c.mu.keys
	n := len(keys)
	hi, _ := bits.Mul64(k, uint64(n))
	i := int(hi)
	for {
		switch keys[i] {
		case 0:
			return i, false
		case k:
			if c.mu.checks[i] == chk {
				return i, true
			}
		}
		if i++; i == n {
			i = 0
		}
	}
}

func (c *Cache) entryAt(i int) (Entry, bool) {
	m := c.mu.meta[i]
	e := Entry{State: frontier.State(m & metaState)}
	if r := c.mu.revs[i]; r == revOverflow {
		e.RevisitAt = c.mu.over[c.mu.keys[i]]
	} else {
		e.RevisitAt = int64(r)
	}
	return e, m&metaAbsent == 0
}

func (c *Cache) setAt(i int, k uint64, chk uint32, e Entry, flags uint8) {
	if c.mu.keys[i] == 0 {
		c.mu.n++
	} else if c.mu.revs[i] == revOverflow {
		delete(c.mu.over, k)
	}
	c.mu.keys[i], c.mu.checks[i] = k, chk
	c.mu.meta[i] = uint8(e.State)&metaState | flags | metaRef
	if e.RevisitAt >= 0 && e.RevisitAt < revOverflow {
		c.mu.revs[i] = uint32(e.RevisitAt)
	} else {
		c.mu.revs[i] = revOverflow
		c.mu.over[k] = e.RevisitAt
	}
}

// remove empties slot i with backward-shift deletion, so probe chains stay unbroken without tombstones.
func (c *Cache) remove(i int) {
	keys := c.mu.keys
	n := len(keys)
	if c.mu.revs[i] == revOverflow {
		delete(c.mu.over, keys[i])
	}
	c.mu.n--
	j := i
	for {
		if j++; j == n {
			j = 0
		}
		if keys[j] == 0 {
			break
		}
		hi, _ := bits.Mul64(keys[j], uint64(n))
		home := int(hi)
		// Move j into the hole at i if its home is not in the cyclic range (i, j].
		if (i <= j && (home <= i || home > j)) || (i > j && home <= i && home > j) {
			keys[i], c.mu.checks[i], c.mu.revs[i], c.mu.meta[i] = keys[j], c.mu.checks[j], c.mu.revs[j], c.mu.meta[j]
			i = j
		}
	}
	keys[i], c.mu.checks[i], c.mu.revs[i], c.mu.meta[i] = 0, 0, 0, 0
}

// evictFor drops one clean entry to make room for key k: one from the run of occupied slots that starts at
// k's home slot if it holds an evictable one (evictNear), or else the one the CLOCK hand picks (evictOne).
// Locked.
func (c *Cache) evictFor(k uint64) bool {
	return c.evictNear(k) || c.evictOne()
}

// evictNear drops one clean entry from the run of occupied slots that starts at k's home slot, by the CLOCK
// rule (a referenced entry loses its mark and is passed over), and reports whether it found one before the
// run ended. Evicting where the new entry goes keeps the free slots spread over the table as the inserts
// are: the CLOCK hand alone frees slots only where it passes, while inserts fill the table everywhere, so the
// slots it passed longest ago fill up into runs that every probe walks, and a cache past its bound slowed
// down quadratically (300,000 gets past a bound of 200,000 took 100 s, most of it in find and remove).
// Locked.
func (c *Cache) evictNear(k uint64) bool {
	keys := c.mu.keys
	n := len(keys)
	hi, _ := bits.Mul64(k, uint64(n))
	i := int(hi)
	for range n {
		if keys[i] == 0 {
			return false
		}
		if m := c.mu.meta[i]; m&metaDirty == 0 {
			if m&metaRef == 0 {
				c.remove(i)
				c.evictions.Add(1)
				return true
			}
			c.mu.meta[i] = m &^ metaRef
		}
		if i++; i == n {
			i = 0
		}
	}
	return false
}

// evictOne drops one clean entry chosen by CLOCK and reports whether it found one. Locked.
func (c *Cache) evictOne() bool {
	n := len(c.mu.keys)
	for range 2 * n {
		i := c.mu.hand
		if c.mu.hand++; c.mu.hand == n {
			c.mu.hand = 0
		}
		if c.mu.keys[i] == 0 || c.mu.meta[i]&metaDirty != 0 {
			continue
		}
		if c.mu.meta[i]&metaRef != 0 {
			c.mu.meta[i] &^= metaRef
			continue
		}
		c.remove(i)
		c.evictions.Add(1)
		return true
	}
	return false
}

// Get implements Store: cached fingerprints from memory, the others from the store in one batch (then cached
// as clean, or as known-absent).
func (c *Cache) Get(ctx context.Context, fps []frontier.Fingerprint, out []Entry, found []bool) error {
	if err := checkGetArgs(fps, out, found); err != nil {
		return err
	}
	var miss []int
	c.mu.Lock()
	for i, fp := range fps {
		k, chk := cacheHash(fp)
		if s, ok := c.find(k, chk); ok {
			out[i], found[i] = c.entryAt(s)
			c.mu.meta[s] |= metaRef
			continue
		}
		miss = append(miss, i)
	}
	c.mu.Unlock()
	c.hits.Add(int64(len(fps) - len(miss)))
	c.misses.Add(int64(len(miss)))
	if len(miss) == 0 {
		return nil
	}
	mfps := make([]frontier.Fingerprint, len(miss))
	for j, i := range miss {
		mfps[j] = fps[i]
	}
	mout := make([]Entry, len(miss))
	mfound := make([]bool, len(miss))
	if err := c.store.Get(ctx, mfps, mout, mfound); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for j, i := range miss {
		k, chk := cacheHash(mfps[j])
		s, ok := c.find(k, chk)
		if ok { // a Put (or another Get) got there while the lock was released: it is newer
			out[i], found[i] = c.entryAt(s)
			continue
		}
		out[i], found[i] = mout[j], mfound[j]
		if c.mu.n < c.cfg.MaxEntries {
			c.makeRoom()
			s, _ = c.find(k, chk)
		} else {
			if !c.evictFor(k) {
				continue // full of dirty entries: serve without caching
			}
			s, _ = c.find(k, chk)
		}
		var flags uint8
		if !mfound[j] {
			flags = metaAbsent
		}
		c.setAt(s, k, chk, mout[j], flags)
	}
	return nil
}

// Put implements Store: the entries change in the cache at once and reach the store at the next flush.
// It returns the error of a flush it triggered; the entries put so far then stay in the cache, dirty, and
// the next flush retries them, so repeating the Put after an error is harmless.
func (c *Cache) Put(ctx context.Context, fps []frontier.Fingerprint, entries []Entry) error {
	if err := checkPutArgs(fps, entries); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, fp := range fps {
		k, chk := cacheHash(fp)
		s, ok := c.find(k, chk)
		if !ok && c.mu.n < c.cfg.MaxEntries {
			c.makeRoom()
			s, _ = c.find(k, chk)
		} else if !ok {
			if !c.evictFor(k) {
				if err := c.flushLocked(ctx); err != nil {
					return err
				}
				if !c.evictOne() {
					return fmt.Errorf("state: cache full and nothing evictable after a flush (max_entries %d)", c.cfg.MaxEntries)
				}
			}
			s, _ = c.find(k, chk)
		}
		c.setAt(s, k, chk, entries[i], metaDirty)
		if j, ok := c.mu.logAt[k]; ok && c.mu.log[j].fp.Equal(fp) {
			c.mu.log[j].e = entries[i]
		} else {
			c.mu.logAt[k] = len(c.mu.log)
			c.mu.log = append(c.mu.log, logEntry{fp: c.logCopy(fp, len(fps)-i), e: entries[i], k: k, chk: chk})
		}
		if len(c.mu.log) >= c.cfg.FlushEvery {
			if err := c.flushLocked(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// logCopy returns a copy of fp for the write log, cut from logFPs, which a new slab replaces when short: room
// for the rest of the Put's fingerprints (left of them, fp's size each), at most 4 KiB. Locked.
func (c *Cache) logCopy(fp frontier.Fingerprint, left int) frontier.Fingerprint {
	n := len(fp)
	if n == 0 {
		return nil
	}
	if cap(c.mu.logFPs)-len(c.mu.logFPs) < n {
		c.mu.logFPs = make([]byte, 0, max(n, min(left*n, 4096)))
	}
	l := len(c.mu.logFPs)
	c.mu.logFPs = append(c.mu.logFPs, fp...)
	return frontier.Fingerprint(c.mu.logFPs[l : l+n : l+n])
}

// Flush writes every dirty entry to the store in one batch. On error the entries stay dirty.
func (c *Cache) Flush(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flushLocked(ctx)
}

func (c *Cache) flushLocked(ctx context.Context) error {
	log := c.mu.log
	if len(log) == 0 {
		return nil
	}
	fps := make([]frontier.Fingerprint, len(log))
	es := make([]Entry, len(log))
	for i := range log {
		fps[i], es[i] = log[i].fp, log[i].e
	}
	if err := c.store.Put(ctx, fps, es); err != nil {
		return fmt.Errorf("state: cache flush of %d entries: %w", len(fps), err)
	}
	for _, l := range log {
		if s, ok := c.find(l.k, l.chk); ok {
			c.mu.meta[s] &^= metaDirty
		}
	}
	c.flushes.Add(1)
	c.flushed.Add(int64(len(fps)))
	clear(log) // the fingerprints go with the store's batch
	c.mu.log = c.mu.log[:0]
	c.mu.logFPs = nil
	clear(c.mu.logAt)
	return nil
}

// Stats returns the counters.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	n, dirty := c.mu.n, len(c.mu.log)
	c.mu.Unlock()
	return CacheStats{
		Hits: c.hits.Load(), Misses: c.misses.Load(), Evictions: c.evictions.Load(),
		Flushes: c.flushes.Load(), FlushedEntries: c.flushed.Load(), Len: n, Dirty: dirty,
	}
}
