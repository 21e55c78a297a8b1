package hbase

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/hbase/internal/thrift2"
	"github.com/frontiercrawl/frontier/metadata"
)

// Metadata qualifiers in family m of the metadata table. Integers are 8-byte big-endian.
var (
	qualURL         = []byte("u")
	qualFirstSeen   = []byte("f")
	qualLastFetched = []byte("l")
	qualStatus      = []byte("s")
	qualDepth       = []byte("d")
	qualContentType = []byte("c")
	qualError       = []byte("e")
	qualRedirect    = []byte("r")
)

// Pages is the metadata.Store on the metadata table. Safe for concurrent use; it borrows the Client.
type Pages struct {
	c     *Client
	table []byte
	name  string
}

var _ metadata.Store = (*Pages)(nil)

// Pages returns the page metadata store.
func (c *Client) Pages() *Pages {
	n := c.cfg.table(metadataTable)
	return &Pages{c: c, table: []byte(n), name: n}
}

func i64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// Put writes only the known (non-zero) fields of each page, so HBase's own cell merge implements "zero does not
// overwrite". FirstSeen is written only where the row has none yet (one multi-get for the batch).
func (p *Pages) Put(ctx context.Context, pages []metadata.Page) error {
	var fsGets []*thrift2.TGet
	var fsAt []int
	for i := range pages {
		if len(pages[i].Fingerprint) == 0 {
			return fmt.Errorf("hbase: metadata put: page %d (%q) has no fingerprint", i, pages[i].URL)
		}
		if pages[i].FirstSeen != 0 {
			fsGets = append(fsGets, &thrift2.TGet{Row: pages[i].Fingerprint, Columns: []*thrift2.TColumn{{Family: famMeta, Qualifier: qualFirstSeen}}})
			fsAt = append(fsAt, i)
		}
	}
	hasFS := make(map[string]bool, len(fsGets))
	if len(fsGets) > 0 {
		res, err := p.c.getMultiple(ctx, p.name, p.table, fsGets)
		if err != nil {
			return err
		}
		for n, r := range res {
			if cellValue(r, famMeta, qualFirstSeen) != nil {
				hasFS[string(pages[fsAt[n]].Fingerprint)] = true
			}
		}
	}
	puts := make([]*thrift2.TPut, 0, len(pages))
	for i := range pages {
		pg := &pages[i]
		var cv []*thrift2.TColumnValue
		add := func(q, v []byte) { cv = append(cv, &thrift2.TColumnValue{Family: famMeta, Qualifier: q, Value: v}) }
		if pg.URL != "" {
			add(qualURL, []byte(pg.URL))
		}
		if pg.FirstSeen != 0 && !hasFS[string(pg.Fingerprint)] {
			add(qualFirstSeen, i64(pg.FirstSeen))
			hasFS[string(pg.Fingerprint)] = true // the first page of the batch wins
		}
		if pg.LastFetched != 0 {
			add(qualLastFetched, i64(pg.LastFetched))
		}
		if pg.Status != 0 {
			add(qualStatus, i64(int64(pg.Status)))
		}
		if pg.Depth != 0 {
			add(qualDepth, i64(int64(pg.Depth)))
		}
		if pg.ContentType != "" {
			add(qualContentType, []byte(pg.ContentType))
		}
		if pg.Error != "" {
			add(qualError, []byte(pg.Error))
		}
		if len(pg.RedirectTo) != 0 {
			add(qualRedirect, pg.RedirectTo)
		}
		if len(cv) > 0 {
			puts = append(puts, &thrift2.TPut{Row: pg.Fingerprint, ColumnValues: cv})
		}
	}
	return p.c.chunks(ctx, len(puts), p.c.cfg.PutBatch, func(ctx context.Context, lo, hi int) error {
		return p.c.putMultiple(ctx, p.name, p.table, puts[lo:hi])
	})
}

// Get reads the record of fp.
func (p *Pages) Get(ctx context.Context, fp frontier.Fingerprint) (metadata.Page, bool, error) {
	if len(fp) == 0 {
		return metadata.Page{}, false, errors.New("hbase: metadata get: empty fingerprint")
	}
	var r *thrift2.TResult_
	err := p.c.do(ctx, "get "+p.name, true, func(ctx context.Context, svc thrift2.THBaseService) (err error) {
		r, err = svc.Get(ctx, p.table, &thrift2.TGet{Row: fp, Columns: []*thrift2.TColumn{{Family: famMeta}}})
		return err
	})
	if err != nil || r == nil || len(r.ColumnValues) == 0 {
		return metadata.Page{}, false, err
	}
	pg := metadata.Page{Fingerprint: fp}
	for _, cv := range r.ColumnValues {
		var n int64
		switch string(cv.Qualifier) {
		case string(qualFirstSeen), string(qualLastFetched), string(qualStatus), string(qualDepth):
			if len(cv.Value) != 8 {
				return metadata.Page{}, false, fmt.Errorf("hbase: %s row %x column m:%s: %d bytes, want 8", p.name, fp, cv.Qualifier, len(cv.Value))
			}
			n = int64(binary.BigEndian.Uint64(cv.Value))
		}
		switch string(cv.Qualifier) {
		case string(qualURL):
			pg.URL = string(cv.Value)
		case string(qualFirstSeen):
			pg.FirstSeen = n
		case string(qualLastFetched):
			pg.LastFetched = n
		case string(qualStatus):
			pg.Status = int(n)
		case string(qualDepth):
			pg.Depth = int(n)
		case string(qualContentType):
			pg.ContentType = string(cv.Value)
		case string(qualError):
			pg.Error = string(cv.Value)
		case string(qualRedirect):
			pg.RedirectTo = frontier.Fingerprint(cv.Value)
		}
	}
	return pg, true, nil
}

// Domains is the metadata.Domains on the domain_metadata table: row = domain (UTF-8), column m:<counter name>,
// value = an 8-byte big-endian counter. Safe for concurrent use; it borrows the Client.
//
// Counters are written with a check-and-put on a per-counter version column (m:<name>\x00v), never with an
// HBase increment: the put also records, per source, the highest Seq applied (m:<name>\x00s\x00<source>), so
// every write is idempotent, is retried through an outage like every other call, and counts exactly once
// (metadata.Tally; hbase/doc.go says why).
type Domains struct {
	c     *Client
	table []byte
	name  string
	// proc and seq make the Source and Seq of plain Add calls: one source per Domains value, one Seq per call.
	proc  string
	seq   atomic.Int64
	locks [64]sync.Mutex // striped by row: writes to one row from this process take turns instead of racing (lock)
	cache rowCache       // the rows this Domains wrote last: their next write skips the read (addRow)
}

var _ metadata.ExactDomains = (*Domains)(nil)

// Domains returns the per-domain counters.
func (c *Client) Domains() *Domains {
	n := c.cfg.table(domainsTable)
	return &Domains{c: c, table: []byte(n), name: n, proc: fmt.Sprintf("add:%016x", rand.Uint64()), cache: rowCache{max: counterCacheRows}}
}

func checkDomains(op, name string, domains []string) error {
	if name == "" {
		return fmt.Errorf("hbase: domains %s: empty counter name", op)
	}
	for i, d := range domains {
		if d == "" {
			return fmt.Errorf("hbase: domains %s: domain %d is empty", op, i)
		}
	}
	return nil
}

// Qualifiers of counter name: its version, and the highest Seq applied from source. 0x00 cannot occur in a
// counter name the workers use, so these never collide with another counter's value column.
func versionQual(name string) []byte { return []byte(name + "\x00v") }
func markQual(name, source string) []byte {
	return []byte(name + "\x00s\x00" + source)
}

// Add adds delta to each domain's counter once (repeated domains are summed) and returns, for each position,
// the value after that position's delta, as if the deltas were applied in order. The call is one source
// (this Domains) and one Seq, so its retries are not counted twice; a caller that replays its input uses
// AddOnce with the input's offsets instead.
func (d *Domains) Add(ctx context.Context, name string, domains []string, delta []int64) ([]int64, error) {
	if len(delta) != len(domains) {
		return nil, fmt.Errorf("hbase: domains add: %d deltas for %d domains", len(delta), len(domains))
	}
	if err := checkDomains("add", name, domains); err != nil {
		return nil, err
	}
	unlock := d.lock(domains)
	defer unlock()
	seq := d.seq.Add(1) // taken under the rows' locks, so the calls of this process reach each row in Seq order
	tallies := make([]metadata.Tally, len(domains))
	for i, dom := range domains {
		tallies[i] = metadata.Tally{Domain: dom, Delta: delta[i], Source: d.proc, Seq: seq}
	}
	got, err := d.addOnce(ctx, name, tallies)
	if err != nil {
		return nil, err
	}
	final := make(map[string]int64, len(domains))
	for i, dom := range domains {
		final[dom] = got[i]
	}
	// Walk backwards: the last occurrence sees the final value; earlier ones see it minus the later deltas.
	out := make([]int64, len(domains))
	for i := len(domains) - 1; i >= 0; i-- {
		out[i] = final[domains[i]]
		final[domains[i]] -= delta[i]
	}
	return out, nil
}

// AddOnce implements metadata.ExactDomains: per domain, one get of the counter, its version and the sources'
// marks, then one check-and-put conditioned on the version; a lost race (another writer) reads again. The
// domains of one call are written concurrently, up to Config.PoolSize at a time.
func (d *Domains) AddOnce(ctx context.Context, name string, tallies []metadata.Tally) ([]int64, error) {
	if err := metadata.CheckTallies(name, tallies); err != nil {
		return nil, fmt.Errorf("hbase: %w", err)
	}
	domains := make([]string, len(tallies))
	for i, t := range tallies {
		domains[i] = t.Domain
	}
	unlock := d.lock(domains)
	defer unlock()
	return d.addOnce(ctx, name, tallies)
}

// lock takes the row locks of domains, in stripe order, and returns their release.
func (d *Domains) lock(domains []string) (unlock func()) {
	var stripes []int
	for _, dom := range domains {
		n := int(fnv32(dom) % uint32(len(d.locks)))
		if !slices.Contains(stripes, n) {
			stripes = append(stripes, n)
		}
	}
	slices.Sort(stripes)
	for _, n := range stripes {
		d.locks[n].Lock()
	}
	return func() {
		for _, n := range stripes {
			d.locks[n].Unlock()
		}
	}
}

// addOnce is AddOnce with the rows' locks held.
func (d *Domains) addOnce(ctx context.Context, name string, tallies []metadata.Tally) ([]int64, error) {
	order, groups := metadata.ByDomain(tallies)
	results := make([]int64, len(order))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(d.c.cfg.PoolSize)
	for n, dom := range order {
		g.Go(func() (err error) {
			results[n], err = d.addRow(gctx, name, dom, groups[dom])
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	final := make(map[string]int64, len(order))
	for n, dom := range order {
		final[dom] = results[n]
	}
	out := make([]int64, len(tallies))
	for i, t := range tallies {
		out[i] = final[t.Domain]
	}
	return out, nil
}

// addRow applies the tallies of one domain and returns the counter's value after them. The caller holds the
// row's lock.
//
// A write is one round trip when this Domains wrote or read the row last (the usual case: a strategy worker
// owns its hosts' rows, a DB worker its partitions' error rows): the row's counter, version and marks are kept
// from then (rowCache), and the check-and-put is conditioned on that version, so it applies only if nobody
// wrote the row since and the kept marks are the row's. Otherwise (first write, another writer moved the
// version, a lost answer) it reads the row and tries again, as without the cache: two round trips, or more
// under contention. Exact either way: a put applies only on the version its marks were read with.
func (d *Domains) addRow(ctx context.Context, name, dom string, tallies []metadata.Tally) (int64, error) {
	row := []byte(dom)
	valQ, verQ := []byte(name), versionQual(name)
	var sources []string
	for _, t := range tallies {
		if !slices.Contains(sources, t.Source) {
			sources = append(sources, t.Source)
		}
	}
	key := name + "\x00" + dom
	st, cached := d.cache.get(key, sources)
	for {
		if !cached {
			var err error
			if st, err = d.readRow(ctx, name, dom, sources); err != nil {
				d.cache.drop(key)
				return 0, err
			}
		}
		delta, seqs := metadata.Pending(tallies, st.marks)
		if len(seqs) == 0 {
			if cached { // applied already (a retry or a replay): read the counter's current value
				cached = false
				continue
			}
			d.cache.put(key, st)
			return st.val, nil
		}
		next := rowState{val: st.val + delta, ver: i64(st.verNum + 1), verNum: st.verNum + 1,
			marks: maps.Clone(st.marks), known: maps.Clone(st.known)}
		cv := []*thrift2.TColumnValue{{Family: famMeta, Qualifier: valQ, Value: i64(next.val)}, {Family: famMeta, Qualifier: verQ, Value: next.ver}}
		for src, seq := range seqs {
			cv = append(cv, &thrift2.TColumnValue{Family: famMeta, Qualifier: markQual(name, src), Value: i64(seq)})
			next.marks[src], next.known[src] = seq, true
		}
		mut := &thrift2.TRowMutations{Row: row, Mutations: []*thrift2.TMutation{{Put: &thrift2.TPut{Row: row, ColumnValues: cv}}}}
		var ok bool
		// Idempotent: once it applied, the version moved and a retry's check fails; the next read sees the marks.
		err := d.c.do(ctx, "checkAndMutate "+d.name, true, func(ctx context.Context, svc thrift2.THBaseService) (err error) {
			ok, err = svc.CheckAndMutate(ctx, d.table, row, famMeta, verQ, thrift2.TCompareOp_EQUAL, st.ver, mut)
			return err
		})
		if err != nil {
			d.cache.drop(key)
			return 0, err
		}
		if ok {
			d.cache.put(key, next)
			return next.val, nil
		}
		d.c.m.casConflicts.Inc() // another writer moved the version (or a retried put had applied): read again
		if cached {
			d.cache.contend(key) // a row others write too: read it before each write from now on
		}
		cached = false
		if err := ctx.Err(); err != nil {
			d.cache.drop(key)
			return 0, &Error{Op: "checkAndMutate " + d.name, Addr: d.c.cfg.Addr, Err: err}
		}
	}
}

// rowState is what a counter row held for one counter: its value, its version (raw, nil when the row has
// none yet), the marks of the sources read or written, and which sources those are (a known source without a
// mark never wrote the row).
type rowState struct {
	val    int64
	ver    []byte
	verNum int64
	marks  map[string]int64
	known  map[string]bool
	// contended: another writer moved the row after this Domains wrote it. A check-and-put on a cached version
	// would fail again (and a failed one costs more than a get: 12.7 against 4.0 ms a write in
	// BenchmarkIntegrationCounterWrite two-writers), so such a row is read before each write, as without the
	// cache.
	contended bool
}

// readRow reads the counter name of row dom: its value, version and the marks of sources (one get).
func (d *Domains) readRow(ctx context.Context, name, dom string, sources []string) (rowState, error) {
	row := []byte(dom)
	valQ, verQ := []byte(name), versionQual(name)
	cols := []*thrift2.TColumn{{Family: famMeta, Qualifier: valQ}, {Family: famMeta, Qualifier: verQ}}
	for _, src := range sources {
		cols = append(cols, &thrift2.TColumn{Family: famMeta, Qualifier: markQual(name, src)})
	}
	var r *thrift2.TResult_
	err := d.c.do(ctx, "get "+d.name, true, func(ctx context.Context, svc thrift2.THBaseService) (err error) {
		r, err = svc.Get(ctx, d.table, &thrift2.TGet{Row: row, Columns: cols})
		return err
	})
	if err != nil {
		return rowState{}, err
	}
	st := rowState{marks: map[string]int64{}, known: map[string]bool{}}
	if v := cellValue(r, famMeta, valQ); v != nil {
		if st.val, err = counterValue(v); err != nil {
			return rowState{}, fmt.Errorf("hbase: %s row %q column m:%s: %w", d.name, dom, name, err)
		}
	}
	st.ver = cellValue(r, famMeta, verQ) // nil: no version yet (a new counter, or one an increment wrote)
	if st.ver != nil {
		if st.verNum, err = counterValue(st.ver); err != nil {
			return rowState{}, fmt.Errorf("hbase: %s row %q version of %s: %w", d.name, dom, name, err)
		}
	}
	for _, src := range sources {
		st.known[src] = true
		v := cellValue(r, famMeta, markQual(name, src))
		if v == nil {
			continue // this source never wrote the row
		}
		if st.marks[src], err = counterValue(v); err != nil {
			return rowState{}, fmt.Errorf("hbase: %s row %q mark of %s: %w", d.name, dom, src, err)
		}
	}
	return st, nil
}

// rowCache keeps the last known rowState of the counter rows a Domains wrote, so that its next write to a row
// is one check-and-put instead of a get and a check-and-put (addRow). Bounded: past maxRows, an arbitrary
// entry makes room (a miss costs one get).
type rowCache struct {
	mu   sync.Mutex
	rows map[string]rowState
	max  int
}

// counterCacheRows bounds the counter rows a Domains remembers (about 200 B each).
const counterCacheRows = 100_000

// get returns the row's state if it is known for every source.
func (c *rowCache) get(key string, sources []string) (rowState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.rows[key]
	if !ok || st.contended {
		return rowState{}, false
	}
	for _, src := range sources {
		if !st.known[src] {
			return rowState{}, false
		}
	}
	return st, true
}

func (c *rowCache) put(key string, st rowState) {
	if c.max <= 0 {
		return // no cache: every write reads first
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rows == nil {
		c.rows = map[string]rowState{}
	}
	old, ok := c.rows[key]
	if !ok && len(c.rows) >= c.max {
		for k := range c.rows {
			delete(c.rows, k)
			break
		}
	}
	st.contended = old.contended
	c.rows[key] = st
}

// contend marks the row as written by others too: get misses it from now on (until it is evicted).
func (c *rowCache) contend(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.rows[key]; ok {
		st.contended = true
		c.rows[key] = st
	}
}

func (c *rowCache) drop(key string) {
	c.mu.Lock()
	delete(c.rows, key)
	c.mu.Unlock()
}

func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

// Get reads the counters with one multi-get per Config.GetBatch domains.
func (d *Domains) Get(ctx context.Context, name string, domains []string) ([]int64, error) {
	if err := checkDomains("get", name, domains); err != nil {
		return nil, err
	}
	gets := make([]*thrift2.TGet, len(domains))
	for i, dom := range domains {
		gets[i] = &thrift2.TGet{Row: []byte(dom), Columns: []*thrift2.TColumn{{Family: famMeta, Qualifier: []byte(name)}}}
	}
	res, err := d.c.getMultiple(ctx, d.name, d.table, gets)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(domains))
	for i, r := range res {
		v := cellValue(r, famMeta, []byte(name))
		if v == nil {
			continue
		}
		if out[i], err = counterValue(v); err != nil {
			return nil, fmt.Errorf("hbase: %s row %q: %w", d.name, domains[i], err)
		}
	}
	return out, nil
}

func counterValue(v []byte) (int64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("counter value of %d bytes, want 8", len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}
