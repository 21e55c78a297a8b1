package urlfrontier

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/frontiercrawl/frontier/internal/keyfilter"
)

// StoreConfig configures a Store.
type StoreConfig struct {
	// Dir is the Pebble database directory; created if missing.
	Dir string
	// Sync fsyncs the WAL on every write, so an acknowledged put or a handed-out lease survives a machine crash.
	Sync bool
	// DefaultDelay is the least time between two sends of one queue until SetDelay sets another (1 s, as in the
	// reference service); a default set by SetDelay is stored and outlives a restart.
	DefaultDelay time.Duration
	// CacheBytes is Pebble's block cache (the memtable is an eighth of it, at most 32 MiB).
	CacheBytes int64
	// SeenFilterBytes bounds the seen filter, in the Go heap (seen.go); 0 is its default, 32 MiB. The
	// standalone derives it from its memory limit (package standalone, "Memory").
	SeenFilterBytes int64
	// FS is the file system; nil is the OS (tests may use vfs.NewMem()).
	FS vfs.FS
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// DefaultStoreConfig returns synced writes, a 1 s default delay and a 128 MiB block cache.
func DefaultStoreConfig() StoreConfig {
	return StoreConfig{Sync: true, DefaultDelay: time.Second, CacheBytes: 128 << 20}
}

// Store is the standalone's URLFrontier backend: every URL, queue, lease, delay, block and limit in one
// Pebble database (see the package doc for the key layout). Safe for concurrent use.
type Store struct {
	db  *pebble.DB
	wo  *pebble.WriteOptions
	log *slog.Logger
	now func() time.Time

	// mu serialises every write: a put's known-test and a lease are decided and written under it, so two
	// clients never receive the same URL. Reads of URL rows take no lock.
	mu           sync.Mutex
	crawls       map[string]*crawlState
	defaultDelay int64 // ms
	active       bool
	// seen holds every URL key the store was given to write (a Bloom filter, seen.go): seekEach asks Pebble
	// only for the keys it may hold.
	seen *keyfilter.Filter
	// hold, if set, keeps URLs from Get (a Gateway's run-time control, holdFunc): with key and u "" whether
	// to hand out nothing at all, with u "" whether to skip the queue key, else whether to skip the URL u of
	// that queue. Set before the store is used.
	hold func(key, u string) bool
}

type crawlState struct {
	queues map[string]*queueRecord
	order  []string // queue keys, in the order GetURLs visits them
	cursor int      // where the next GetURLs starts, so every queue gets its turn
}

// Key prefixes (see the package doc).
const (
	pURL    = 'u'
	pSched  = 's'
	pLease  = 'l'
	pQueue  = 'q'
	pOption = 'o'
)

var (
	optDefaultDelay = []byte{pOption, 'd'}
	optInactive     = []byte{pOption, 'a'}
)

// OpenStore opens (or creates) the store in cfg.Dir.
func OpenStore(cfg StoreConfig, log *slog.Logger) (*Store, error) {
	if cfg.Dir == "" {
		return nil, errors.New("urlfrontier: store dir is empty")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cache := pebble.NewCache(max(cfg.CacheBytes, 1<<20))
	defer cache.Unref()
	// L0 is compacted at 8 sublevels (Pebble's default is 4): the URL keys of a put spread over every queue, so
	// each flush of a small memtable spans the whole key space and every L0 compaction rewrites most of L6;
	// compacting half as often rewrote ~30% fewer bytes per URL taking the feed (BenchmarkStoreFeedPut), and
	// the reads' Bloom filters and GetURLs' scans did not get dearer (BenchmarkGetAck).
	opts := &pebble.Options{FS: cfg.FS, Cache: cache, Logger: pebbleLogger{log},
		MemTableSize:          uint64(min(max(cfg.CacheBytes/8, 1<<20), 32<<20)),
		L0CompactionThreshold: 8, L0StopWritesThreshold: 24}
	// Most puts look up a URL that is not there; table-level Bloom filters answer those without reading
	// a block.
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	db, err := pebble.Open(cfg.Dir, opts)
	if err != nil {
		return nil, fmt.Errorf("urlfrontier: open %s: %w", cfg.Dir, err)
	}
	s := &Store{db: db, wo: pebble.NoSync, log: log, now: cfg.Now, crawls: map[string]*crawlState{},
		seen: newSeenFilter(cfg.SeenFilterBytes), defaultDelay: cfg.DefaultDelay.Milliseconds(), active: true}
	if cfg.Sync {
		s.wo = pebble.Sync
	}
	if s.now == nil {
		s.now = time.Now
	}
	if err := s.load(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database; call it once, after every call has returned.
func (s *Store) Close() error { return s.db.Close() }

func (s *Store) load() error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pQueue}, UpperBound: []byte{pQueue + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		crawl, key, ok := splitQueueKey(it.Key())
		if !ok {
			return fmt.Errorf("urlfrontier: malformed queue key %q", it.Key())
		}
		q, err := decodeQueueRecord(it.Value())
		if err != nil {
			return fmt.Errorf("%w (queue %q of crawl %q)", err, key, crawl)
		}
		s.crawl(crawl).add(key, &q)
	}
	if err := it.Error(); err != nil {
		return err
	}
	if err := s.loadSeen(); err != nil {
		return err
	}
	if v, closer, err := s.db.Get(optDefaultDelay); err == nil {
		d, _ := binary.Varint(v)
		s.defaultDelay = d
		closer.Close()
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return err
	}
	if _, closer, err := s.db.Get(optInactive); err == nil {
		s.active = false
		closer.Close()
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return err
	}
	n := 0
	for _, c := range s.crawls {
		n += len(c.queues)
	}
	s.log.Info("urlfrontier store opened", "crawls", len(s.crawls), "queues", n)
	return nil
}

// loadSeen adds every stored URL key to s.seen, until it is full.
func (s *Store) loadSeen() error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pURL}, UpperBound: []byte{pURL + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid() && !s.seen.Full(); it.Next() {
		s.seen.Add(it.Key())
	}
	return it.Error()
}

func (s *Store) crawl(id string) *crawlState {
	c := s.crawls[id]
	if c == nil {
		c = &crawlState{queues: map[string]*queueRecord{}}
		s.crawls[id] = c
	}
	return c
}

func (c *crawlState) add(key string, q *queueRecord) {
	c.queues[key] = q
	c.order = append(c.order, key)
}

func (c *crawlState) remove(key string) {
	delete(c.queues, key)
	if i := slices.Index(c.order, key); i >= 0 {
		c.order = slices.Delete(c.order, i, i+1)
		if c.cursor > i {
			c.cursor--
		}
	}
}

// queue returns the queue, creating it (in memory; the caller writes it) when missing.
func (c *crawlState) queue(key string) (*queueRecord, bool) {
	if q := c.queues[key]; q != nil {
		return q, false
	}
	q := &queueRecord{delay: -1}
	c.add(key, q)
	return q, true
}

// Keys. crawl and queue keys never hold a 0 byte (checkName), so the 0 separators keep prefixes apart.

func prefix2(p byte, crawl, key string) []byte { return prefix2n(p, crawl, key, 40) }

// prefix2n is prefix2 with room for extra more bytes.
func prefix2n(p byte, crawl, key string, extra int) []byte {
	b := make([]byte, 0, 3+len(crawl)+len(key)+extra)
	b = append(b, p)
	b = append(b, crawl...)
	b = append(b, 0)
	b = append(b, key...)
	return append(b, 0)
}

func crawlPrefix(p byte, crawl string) []byte {
	b := append([]byte{p}, crawl...)
	return append(b, 0)
}

func urlKey(crawl, key, u string) []byte   { return append(prefix2n(pURL, crawl, key, len(u)), u...) }
func leaseKey(crawl, key, u string) []byte { return append(prefix2n(pLease, crawl, key, len(u)), u...) }
func schedKey(crawl, key string, due int64, u string) []byte {
	b := binary.BigEndian.AppendUint64(prefix2n(pSched, crawl, key, 8+len(u)), uint64(due))
	return append(b, u...)
}
func queueKey(crawl, key string) []byte {
	b := prefix2(pQueue, crawl, key)
	return b[:len(b)-1]
}

func splitQueueKey(k []byte) (crawl, key string, ok bool) {
	if len(k) < 2 || k[0] != pQueue {
		return "", "", false
	}
	i := bytes.IndexByte(k[1:], 0)
	if i < 0 {
		return "", "", false
	}
	return string(k[1 : 1+i]), string(k[2+i:]), true
}

// upper returns the least key greater than every key with prefix p.
func upper(p []byte) []byte {
	u := slices.Clone(p)
	for i := len(u) - 1; i >= 0; i-- {
		if u[i] < 0xff {
			u[i]++
			return u[:i+1]
		}
	}
	return nil
}

// checkName rejects crawl IDs and queue keys the key layout cannot hold.
func checkName(what, v string) error {
	if strings.IndexByte(v, 0) >= 0 {
		return fmt.Errorf("urlfrontier: %s %q holds a NUL byte", what, v)
	}
	if len(v) > 255 {
		return fmt.Errorf("urlfrontier: %s is %d bytes long, at most 255", what, len(v))
	}
	return nil
}

// NormCrawl maps "" to DefaultCrawl.
func NormCrawl(c string) string {
	if strings.TrimSpace(c) == "" {
		return DefaultCrawl
	}
	return c
}

// HostKey is the queue of a URL whose put names none: its host, lower-cased.
func HostKey(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	if u.Hostname() == "" {
		return "", fmt.Errorf("no host in %q", rawURL)
	}
	return strings.ToLower(u.Hostname()), nil
}

// crawlDelayKeys are the metadata keys a client reports a host's Crawl-delay under, in seconds
// (robots.crawl.delay is StormCrawler's).
var crawlDelayKeys = []string{"crawl-delay", "crawl_delay", "robots.crawl.delay"}

// crawlDelay reads a queue delay a client reports in a URL's metadata (robots.txt's Crawl-delay, in seconds).
func crawlDelay(meta map[string][]string) (int64, bool) {
	for k, vs := range meta {
		if len(vs) == 0 || !slices.ContainsFunc(crawlDelayKeys, func(c string) bool { return strings.EqualFold(k, c) }) {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(vs[0]), 64)
		if err != nil || f < 0 || f > 86400 {
			return 0, false
		}
		return int64(f), true
	}
	return 0, false
}

type pending struct {
	rec    record
	exists bool
}

// seekMin is the number of keys from which a batch's reads walk one iterator forward (Store.seekEach) instead
// of making a Get each: a Get builds and tears down an iterator over every level for its one key, while one
// iterator asked for keys in ascending order keeps its position between nearby keys.
const seekMin = 16

// seekEach calls f with every key of keys, which must be URL keys in ascending order, and the value stored at
// it (ok false when none). The value is valid during f only. From seekMin keys on, one iterator walks forward
// over them (SeekPrefixGE, so the tables' Bloom filters still answer for absent keys); below, a Get per key.
// A key s.seen never held is answered absent without either. Reads take no lock, as lookup's.
func (s *Store) seekEach(keys [][]byte, f func(i int, v []byte, ok bool) error) error {
	maybe := make([]int, 0, len(keys))
	for i, k := range keys {
		if s.seen.MayContain(k) {
			maybe = append(maybe, i)
		} else if err := f(i, nil, false); err != nil {
			return err
		}
	}
	return s.seekStored(keys, maybe, f)
}

// seekStored is seekEach's Pebble side, for the keys keys[i] of the indices idx (ascending).
func (s *Store) seekStored(keys [][]byte, idx []int, f func(i int, v []byte, ok bool) error) error {
	if len(idx) < seekMin {
		for _, i := range idx {
			k := keys[i]
			v, closer, err := s.db.Get(k)
			if errors.Is(err, pebble.ErrNotFound) {
				if err := f(i, nil, false); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
			err = f(i, v, true)
			closer.Close()
			if err != nil {
				return err
			}
		}
		return nil
	}
	// UseL6Filters: Pebble skips L6's Bloom filters unless asked, and a store smaller than Pebble's level
	// sizes keeps every compacted table in L6, so without it each absent key read a data block there
	// (BenchmarkStoreSeekAbsent).
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pURL}, UpperBound: []byte{pURL + 1}, UseL6Filters: true})
	if err != nil {
		return err
	}
	defer it.Close()
	for _, i := range idx {
		k := keys[i]
		if !it.SeekPrefixGE(k) || !bytes.Equal(it.Key(), k) {
			if err := it.Error(); err != nil {
				return err
			}
			if err := f(i, nil, false); err != nil {
				return err
			}
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		if err := f(i, v, true); err != nil {
			return err
		}
	}
	return nil
}

// sortKeys orders the URL keys of a call for seekEach: order lists the indices i with keys[i] != nil by
// key (equal keys in index order), and slot[i] numbers the distinct keys in that order (−1 for a nil key), so
// uniq[slot[i]] is keys[i] once.
func sortKeys(keys [][]byte) (order, slot []int, uniq [][]byte) {
	order = make([]int, 0, len(keys))
	for i, k := range keys {
		if k != nil {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
	slot = make([]int, len(keys))
	uniq = make([][]byte, 0, len(order)) // sized once: a call's keys are mostly distinct
	for i := range slot {
		slot[i] = -1
	}
	for j, i := range order {
		if j == 0 || !bytes.Equal(keys[order[j-1]], keys[i]) {
			uniq = append(uniq, keys[i])
		}
		slot[i] = len(uniq) - 1
	}
	return order, slot, uniq
}

// Put implements Backend. The call's URL records are read in key order with one iterator (seekEach), then
// the puts are applied in call order.
func (s *Store) Put(ctx context.Context, puts []Put) ([]Status, error) {
	out := make([]Status, len(puts))
	now := s.now()
	nowMs, nowSec := now.UnixMilli(), now.Unix()
	type ref struct{ crawl, key string }
	refs := make([]ref, len(puts))
	keys := make([][]byte, len(puts))
	for i, p := range puts {
		crawl, key, ok := s.resolve(p.Info)
		if !ok {
			out[i] = Skipped
			continue
		}
		refs[i] = ref{crawl, key}
		keys[i] = urlKey(crawl, key, p.Info.URL)
	}
	_, slot, uniq := sortKeys(keys)
	s.mu.Lock()
	defer s.mu.Unlock()
	// Under the lock: what this call reads must be what the writes before it left.
	pds := make([]pending, len(uniq))
	err := s.seekEach(uniq, func(j int, v []byte, ok bool) error {
		if !ok {
			return nil
		}
		r, err := decodeRecord(v)
		if err != nil {
			return fmt.Errorf("%w (key %q)", err, uniq[j])
		}
		pds[j] = pending{rec: r, exists: true}
		return nil
	})
	if err != nil {
		return nil, err
	}
	b := s.db.NewBatch()
	defer b.Close()
	dirty := map[ref]*queueRecord{}
	var buf []byte
	for i, p := range puts {
		if slot[i] < 0 {
			continue
		}
		crawl, key := refs[i].crawl, refs[i].key
		uk := keys[i]
		pd := &pds[slot[i]]
		if f := p.feed; f != nil && pd.exists {
			old := &pd.rec
			if old.part == f.part && old.off >= f.off {
				out[i] = Skipped // a replay of a feed entry already taken
				continue
			}
			if !old.done() {
				// Still queued or leased: a copy the DB worker sent again. The URL keeps its place (and its
				// lease); the newer request is the one a known put reports.
				old.src, old.part, old.off = f.src, f.part, f.off
				buf = old.encode(buf[:0])
				_ = b.Set(uk, buf, nil)
				out[i] = Skipped
				continue
			}
			// Done: the strategy scheduled it again (a revisit, a retry). It is queued again below.
		}
		if !p.Known && p.feed == nil && pd.exists {
			out[i] = Skipped // already known: discovered URLs are added only if unknown
			continue
		}
		cs := s.crawl(crawl)
		q, _ := cs.queue(key)
		dirty[ref{crawl, key}] = q
		old := pd.rec
		if pd.exists {
			if !old.done() {
				_ = b.Delete(schedKey(crawl, key, old.sched, p.Info.URL), nil)
				q.active--
			} else {
				q.completed--
			}
			if old.lease != 0 {
				_ = b.Delete(leaseKey(crawl, key, p.Info.URL), nil)
			}
		}
		r := record{created: nowSec, meta: p.Info.Metadata}
		if pd.exists {
			r.created = old.created
			r.src, r.part, r.off = old.src, old.part, old.off
		}
		switch {
		case p.feed != nil:
			due := max(nowMs, p.feed.due)
			r.refetch, r.sched = due/1000, due
			r.src, r.part, r.off = p.feed.src, p.feed.part, p.feed.off
		case !p.Known:
			r.refetch, r.sched = nowSec, nowMs
		case p.Refetch > 0:
			r.refetch, r.sched = p.Refetch, p.Refetch*1000
		}
		if r.done() {
			q.completed++
		} else {
			_ = b.Set(schedKey(crawl, key, r.sched, p.Info.URL), nil, nil)
			q.active++
		}
		if d, ok := crawlDelay(p.Info.Metadata); ok && p.Known {
			q.delay = d
		}
		buf = r.encode(buf[:0])
		if !pd.exists {
			s.seen.Add(uk) // before the commit: a reader then either finds it in seen or read before the write
		}
		_ = b.Set(uk, buf, nil)
		pd.rec, pd.exists = r, true
	}
	for ref, q := range dirty {
		_ = b.Set(queueKey(ref.crawl, ref.key), q.encode(nil), nil)
	}
	if err := s.commit(b); err != nil {
		return nil, err
	}
	return out, nil
}

// resolve returns the crawl and queue of a put's URL (the host when it names no key), and false, with a log
// line, when the URL, key or crawl ID cannot be held.
func (s *Store) resolve(info URLInfo) (crawl, key string, ok bool) {
	crawl, key = NormCrawl(info.CrawlID), info.Key
	if key == "" {
		var err error
		if key, err = HostKey(info.URL); err != nil {
			s.log.Warn("put skipped: no queue key and no host", "url", info.URL, "err", err)
			return "", "", false
		}
	}
	if info.URL == "" || checkName("crawl ID", crawl) != nil || checkName("queue key", key) != nil {
		s.log.Warn("put skipped: invalid URL, key or crawl ID", "url", info.URL, "key", key, "crawl", crawl)
		return "", "", false
	}
	return crawl, key, true
}

// held returns how many URLs the store holds that are not done (queued or leased).
func (s *Store) held() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n uint64
	for _, c := range s.crawls {
		for _, q := range c.queues {
			n += q.active
		}
	}
	return n
}

// commit writes b; on failure it reloads the in-memory queue state from the store, which the failed batch did
// not change.
func (s *Store) commit(b *pebble.Batch) error {
	if b.Empty() {
		return nil
	}
	err := b.Commit(s.wo)
	if err == nil {
		return nil
	}
	s.crawls = map[string]*crawlState{}
	if lerr := s.load(); lerr != nil {
		s.log.Error("reload after a failed write", "err", lerr)
	}
	return fmt.Errorf("urlfrontier: write: %w", err)
}

// Get implements Backend.
func (s *Store) Get(ctx context.Context, p GetParams) ([]URLInfo, error) {
	lease := p.Lease
	if lease <= 0 {
		lease = DefaultLease
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.active || s.hold != nil && s.hold("", "") {
		return nil, nil
	}
	now := s.now().UnixMilli()
	var crawls []string
	if p.AnyCrawl {
		for c := range s.crawls {
			crawls = append(crawls, c)
		}
		slices.Sort(crawls)
	} else {
		crawls = []string{NormCrawl(p.CrawlID)}
	}
	b := s.db.NewBatch()
	defer b.Close()
	var out []URLInfo
	served := 0
	var buf []byte
	for _, crawl := range crawls {
		cs := s.crawls[crawl]
		if cs == nil {
			continue
		}
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: crawlPrefix(pSched, crawl), UpperBound: upper(crawlPrefix(pSched, crawl))})
		if err != nil {
			return nil, err
		}
		keys := cs.order
		start := cs.cursor
		if p.Key != "" {
			keys, start = []string{p.Key}, 0
		}
		n := len(keys)
		visited := 0
		for j := 0; j < n && (p.MaxQueues <= 0 || served < p.MaxQueues); j++ {
			key := keys[(start+j)%n]
			visited = j + 1
			q := cs.queues[key]
			if q == nil || !s.eligible(q, now) || s.hold != nil && s.hold(key, "") {
				continue
			}
			got := 0
			pfx := prefix2(pSched, crawl, key)
			for it.SeekGE(pfx); it.Valid() && (p.MaxURLsPerQueue <= 0 || got < p.MaxURLsPerQueue); it.Next() {
				k := it.Key()
				if !bytes.HasPrefix(k, pfx) || len(k) < len(pfx)+8 {
					break
				}
				if due := int64(binary.BigEndian.Uint64(k[len(pfx):])); due > now {
					break
				}
				u := string(k[len(pfx)+8:])
				if s.hold != nil && s.hold(key, u) {
					continue // held where it is, due, until the hold ends
				}
				uk := urlKey(crawl, key, u)
				v, closer, err := s.db.Get(uk)
				if err != nil {
					it.Close()
					return nil, fmt.Errorf("urlfrontier: scheduled URL %q of queue %q has no record: %w", u, key, err)
				}
				r, err := decodeRecord(v)
				closer.Close()
				if err != nil {
					it.Close()
					return nil, fmt.Errorf("%w (url %q)", err, u)
				}
				until := now + lease.Milliseconds()
				_ = b.Delete(schedKey(crawl, key, r.sched, u), nil)
				_ = b.Set(schedKey(crawl, key, until, u), nil, nil)
				_ = b.Set(leaseKey(crawl, key, u), binary.BigEndian.AppendUint64(nil, uint64(until)), nil)
				r.sched, r.lease = until, until
				buf = r.encode(buf[:0])
				_ = b.Set(uk, buf, nil)
				out = append(out, URLInfo{URL: u, Key: key, CrawlID: crawl, Metadata: r.meta})
				got++
			}
			if got > 0 {
				served++
				q.lastSent = now
				_ = b.Set(queueKey(crawl, key), q.encode(nil), nil)
			}
		}
		if err := it.Close(); err != nil {
			return nil, err
		}
		if p.Key == "" && n > 0 {
			cs.cursor = (start + visited) % n
		}
	}
	if err := s.commit(b); err != nil {
		return nil, err
	}
	return out, nil
}

// eligible reports whether a queue may send now: not blocked, under its crawl limit, and its delay elapsed
// since it last sent.
func (s *Store) eligible(q *queueRecord, now int64) bool {
	if q.active == 0 || q.blocked*1000 > now || q.limit > 0 && q.completed >= q.limit {
		return false
	}
	d := s.defaultDelay
	if q.delay >= 0 {
		d = q.delay * 1000
	}
	return q.lastSent == 0 || now-q.lastSent >= d
}

// ListCrawls implements Backend.
func (s *Store) ListCrawls(ctx context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for c := range s.crawls {
		out = append(out, c)
	}
	slices.Sort(out)
	return out, nil
}

// DeleteCrawl implements Backend.
func (s *Store) DeleteCrawl(ctx context.Context, crawl string) (uint64, error) {
	crawl = NormCrawl(crawl)
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.crawls[crawl]
	if cs == nil {
		return 0, nil
	}
	var n uint64
	for _, q := range cs.queues {
		n += q.active + q.completed
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, p := range []byte{pURL, pSched, pLease, pQueue} {
		pfx := crawlPrefix(p, crawl)
		_ = b.DeleteRange(pfx, upper(pfx), nil)
	}
	delete(s.crawls, crawl)
	if err := s.commit(b); err != nil {
		return 0, err
	}
	return n, nil
}

// ListQueues implements Backend.
func (s *Store) ListQueues(ctx context.Context, crawl string, start, size int, includeInactive bool) ([]string, uint64, error) {
	crawl = NormCrawl(crawl)
	if size <= 0 {
		size = 100
	}
	nowSec := s.now().Unix()
	s.mu.Lock()
	var keys []string
	if cs := s.crawls[NormCrawl(crawl)]; cs != nil {
		for k, q := range cs.queues {
			if includeInactive || q.active > 0 && q.blocked < nowSec {
				keys = append(keys, k)
			}
		}
	}
	s.mu.Unlock()
	slices.Sort(keys)
	total := uint64(len(keys))
	if start >= len(keys) {
		return nil, total, nil
	}
	keys = keys[start:]
	if len(keys) > size {
		keys = keys[:size]
	}
	return keys, total, nil
}

// Stats implements Backend.
func (s *Store) Stats(ctx context.Context, crawl, key string) (Stats, error) {
	crawl = NormCrawl(crawl)
	st := Stats{CrawlID: crawl}
	s.mu.Lock()
	cs := s.crawls[crawl]
	if cs != nil {
		for k, q := range cs.queues {
			if key != "" && k != key {
				continue
			}
			st.NumberOfQueues++
			st.Size += q.active
			st.Completed += q.completed
			if q.active > 0 {
				st.ActiveQueues++
			}
		}
	}
	s.mu.Unlock()
	if cs == nil {
		return st, nil
	}
	// Leases are counted from the l keys: one per URL handed out and not reported since, live while its
	// end is ahead.
	pfx := crawlPrefix(pLease, crawl)
	if key != "" {
		pfx = prefix2(pLease, crawl, key)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: pfx, UpperBound: upper(pfx)})
	if err != nil {
		return st, err
	}
	now := s.now().UnixMilli()
	for it.First(); it.Valid(); it.Next() {
		if v := it.Value(); len(v) == 8 && int64(binary.BigEndian.Uint64(v)) > now {
			st.InProcess++
		}
	}
	return st, it.Close()
}

// DeleteQueue implements Backend.
func (s *Store) DeleteQueue(ctx context.Context, crawl, key string) (uint64, error) {
	crawl = NormCrawl(crawl)
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.crawls[crawl]
	if cs == nil || cs.queues[key] == nil {
		return 0, nil
	}
	q := cs.queues[key]
	b := s.db.NewBatch()
	defer b.Close()
	for _, p := range []byte{pURL, pSched, pLease} {
		pfx := prefix2(p, crawl, key)
		_ = b.DeleteRange(pfx, upper(pfx), nil)
	}
	_ = b.Delete(queueKey(crawl, key), nil)
	cs.remove(key)
	if len(cs.queues) == 0 {
		delete(s.crawls, crawl)
	}
	if err := s.commit(b); err != nil {
		return 0, err
	}
	return q.active + q.completed, nil
}

// setQueue changes one queue's settings under the lock and writes it.
func (s *Store) setQueue(crawl, key string, f func(*queueRecord)) error {
	crawl = NormCrawl(crawl)
	if err := errors.Join(checkName("crawl ID", crawl), checkName("queue key", key)); err != nil {
		return err
	}
	if key == "" {
		return errors.New("urlfrontier: queue key is empty")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q, _ := s.crawl(crawl).queue(key)
	f(q)
	b := s.db.NewBatch()
	defer b.Close()
	_ = b.Set(queueKey(crawl, key), q.encode(nil), nil)
	return s.commit(b)
}

// BlockQueue implements Backend.
func (s *Store) BlockQueue(ctx context.Context, crawl, key string, until int64) error {
	return s.setQueue(crawl, key, func(q *queueRecord) { q.blocked = until })
}

// SetDelay implements Backend.
func (s *Store) SetDelay(ctx context.Context, crawl, key string, seconds int) error {
	if key != "" {
		return s.setQueue(crawl, key, func(q *queueRecord) { q.delay = int64(seconds) })
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.defaultDelay = int64(seconds) * 1000
	return s.db.Set(optDefaultDelay, binary.AppendVarint(nil, s.defaultDelay), s.wo)
}

// SetCrawlLimit implements Backend.
func (s *Store) SetCrawlLimit(ctx context.Context, crawl, key string, limit uint32) error {
	return s.setQueue(crawl, key, func(q *queueRecord) { q.limit = uint64(limit) })
}

// URLStatus implements Backend. With key "", the URL's host is tried first, then every queue of the crawl.
func (s *Store) URLStatus(ctx context.Context, crawl, key, u string) (URLStatus, error) {
	crawl = NormCrawl(crawl)
	var keys []string
	if key != "" {
		keys = []string{key}
	} else {
		if h, err := HostKey(u); err == nil {
			keys = append(keys, h)
		}
		s.mu.Lock()
		if cs := s.crawls[crawl]; cs != nil {
			keys = append(keys, cs.order...)
		}
		s.mu.Unlock()
	}
	for _, k := range keys {
		v, closer, err := s.db.Get(urlKey(crawl, k, u))
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return URLStatus{}, err
		}
		r, err := decodeRecord(v)
		closer.Close()
		if err != nil {
			return URLStatus{}, err
		}
		return URLStatus{Info: URLInfo{URL: u, Key: k, CrawlID: crawl, Metadata: r.meta}, Refetch: r.refetch, Created: r.created}, nil
	}
	return URLStatus{}, ErrNotFound
}

// scan calls f with every URL record matching p, in key order.
func (s *Store) scan(p ListParams, f func(key, u string, r record) error) error {
	crawl := NormCrawl(p.CrawlID)
	pfx := crawlPrefix(pURL, crawl)
	if p.Key != "" {
		pfx = prefix2(pURL, crawl, p.Key)
	}
	filter := p.Filter
	if p.IgnoreCase {
		filter = strings.ToLower(filter)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: pfx, UpperBound: upper(pfx)})
	if err != nil {
		return err
	}
	defer it.Close()
	base := len(crawlPrefix(pURL, crawl))
	for it.First(); it.Valid(); it.Next() {
		rest := it.Key()[base:]
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			continue
		}
		key, u := string(rest[:i]), string(rest[i+1:])
		if filter != "" {
			h := u
			if p.IgnoreCase {
				h = strings.ToLower(h)
			}
			if !strings.Contains(h, filter) {
				continue
			}
		}
		r, err := decodeRecord(it.Value())
		if err != nil {
			return fmt.Errorf("%w (url %q)", err, u)
		}
		if err := f(key, u, r); err != nil {
			return err
		}
	}
	return it.Error()
}

var errEnough = errors.New("enough")

// ListURLs implements Backend.
func (s *Store) ListURLs(ctx context.Context, p ListParams, emit func(URLStatus) error) error {
	size := p.Size
	if size <= 0 {
		size = 100
	}
	crawl := NormCrawl(p.CrawlID)
	i, sent := 0, 0
	err := s.scan(p, func(key, u string, r record) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		i++
		if i <= p.Start {
			return nil
		}
		if err := emit(URLStatus{Info: URLInfo{URL: u, Key: key, CrawlID: crawl, Metadata: r.meta}, Refetch: r.refetch, Created: r.created}); err != nil {
			return err
		}
		if sent++; sent >= size {
			return errEnough
		}
		return nil
	})
	if errors.Is(err, errEnough) {
		return nil
	}
	return err
}

// CountURLs implements Backend.
func (s *Store) CountURLs(ctx context.Context, p ListParams) (uint64, error) {
	if p.Filter == "" {
		st, err := s.Stats(ctx, p.CrawlID, p.Key)
		return st.Size + st.Completed, err
	}
	var n uint64
	err := s.scan(p, func(string, string, record) error { n++; return ctx.Err() })
	return n, err
}

// PurgeURLs implements Backend.
func (s *Store) PurgeURLs(ctx context.Context, p ListParams, before int64) (uint64, error) {
	crawl := NormCrawl(p.CrawlID)
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.crawls[crawl]
	if cs == nil {
		return 0, nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	var n uint64
	touched := map[string]bool{}
	err := s.scan(p, func(key, u string, r record) error {
		if r.created >= before {
			return nil
		}
		q := cs.queues[key]
		if q == nil {
			return nil
		}
		_ = b.Delete(urlKey(crawl, key, u), nil)
		if r.done() {
			q.completed--
		} else {
			_ = b.Delete(schedKey(crawl, key, r.sched, u), nil)
			q.active--
		}
		if r.lease != 0 {
			_ = b.Delete(leaseKey(crawl, key, u), nil)
		}
		touched[key] = true
		n++
		return nil
	})
	if err != nil {
		s.crawls = map[string]*crawlState{}
		if lerr := s.load(); lerr != nil {
			s.log.Error("reload after a failed purge", "err", lerr)
		}
		return 0, err
	}
	for key := range touched {
		_ = b.Set(queueKey(crawl, key), cs.queues[key].encode(nil), nil)
	}
	if err := s.commit(b); err != nil {
		return 0, err
	}
	return n, nil
}

// SetActive implements Backend.
func (s *Store) SetActive(ctx context.Context, active bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if active {
		err = s.db.Delete(optInactive, s.wo)
	} else {
		err = s.db.Set(optInactive, nil, s.wo)
	}
	if err == nil {
		s.active = active
	}
	return err
}

// Active implements Backend.
func (s *Store) Active(ctx context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active, nil
}

type pebbleLogger struct{ log *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) { p.log.Debug(fmt.Sprintf(format, args...)) }
func (p pebbleLogger) Errorf(format string, args ...any) {
	p.log.Error(fmt.Sprintf(format, args...))
}
func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.log.Error(fmt.Sprintf(format, args...))
	panic(fmt.Sprintf(format, args...))
}
