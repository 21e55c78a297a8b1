package pebblestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/frontiercrawl/frontier/state"
)

// Config configures the Pebble store.
type Config struct {
	// Dir is the database directory; it is created if missing.
	Dir string `mapstructure:"dir"`
	// Sync fsyncs the WAL on every write, so a returned write survives a machine crash, not only kill -9.
	Sync bool `mapstructure:"sync"`
	// DeferSync (with Sync) commits the store's writes without an fsync of their own: each becomes durable
	// with the next synced write to the same database, since Pebble writes one WAL in commit order, syncs it
	// whole and recovers a prefix of it. Standalone mode sets it: its synced writes are the spiders' (their
	// reports and feed commits through bus/pebblebus), the only ones a record outside the database depends
	// on (see the package doc, "Durability").
	DeferSync bool `mapstructure:"-"`
	// CacheBytes is Pebble's block cache, which also holds the memtables: Pebble reserves each memtable's
	// memory from the cache, so the store's memory outside the Go heap is about CacheBytes while the
	// memtables fit in it. Both live in memory Pebble allocates itself (C memory with cgo), which the Go
	// runtime's memory limit does not see. The standalone derives it from its memory limit when it is 0
	// (package standalone, "Memory"); here 0 means the 1 MiB floor.
	CacheBytes int64 `mapstructure:"cache_bytes"`
	// MemTableBytes is the size of one memtable; 0 derives it from CacheBytes (MemTableSize).
	MemTableBytes int64 `mapstructure:"memtable_bytes"`
	// ScoreBuckets is the resolution of the queue's score key part: scores in the same bucket are equals.
	ScoreBuckets int `mapstructure:"score_buckets"`
	// Bloom sizes the Bloom filter in front of the states; Expected 0 disables it.
	Bloom state.BloomConfig `mapstructure:"bloom"`
	// BloomMaxBytes caps that filter's memory (state.Bloom.SetMaxBytes: past it the filter stops growing and
	// answers "maybe" more often); 0 is no cap. The standalone derives it from its memory limit (package
	// standalone, "Memory").
	BloomMaxBytes int64 `mapstructure:"-"`
	// PageCacheBytes bounds the page cache (the page records Pages.Put wrote or read lately) and
	// PageFilterBytes the page-key filter (pagefilter.go), both in the Go heap; 0 is each one's default
	// (16 MiB). The standalone derives both from its memory limit (package standalone, "Memory").
	PageCacheBytes  int64 `mapstructure:"-"`
	PageFilterBytes int64 `mapstructure:"-"`
	// FS is the file system; nil is the OS. Tests use vfs.NewMem().
	FS vfs.FS `mapstructure:"-"`
}

// DefaultConfig returns the defaults: synced writes, 128 MiB block cache, 1000 score buckets, a Bloom filter
// for 100 million URLs at 1% (a filter that grows with the crawl, from about 1.2 MB: state.Bloom).
func DefaultConfig() Config {
	return Config{Sync: true, CacheBytes: 128 << 20, ScoreBuckets: 1000, Bloom: state.DefaultBloomConfig()}
}

// Validate reports every problem of the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.Dir == "" {
		errs = append(errs, errors.New("pebblestore: dir is empty"))
	}
	if c.CacheBytes < 0 {
		errs = append(errs, fmt.Errorf("pebblestore: cache_bytes = %d, want >= 0", c.CacheBytes))
	}
	if c.MemTableBytes < 0 || c.MemTableBytes > maxMemTable {
		errs = append(errs, fmt.Errorf("pebblestore: memtable_bytes = %d, want 0..%d (0: from cache_bytes)", c.MemTableBytes, int64(maxMemTable)))
	}
	if c.ScoreBuckets < 1 || c.ScoreBuckets > 65535 {
		errs = append(errs, fmt.Errorf("pebblestore: score_buckets = %d, want 1..65535", c.ScoreBuckets))
	}
	if err := c.Bloom.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("pebblestore: %w", err))
	}
	if c.BloomMaxBytes < 0 {
		errs = append(errs, fmt.Errorf("pebblestore: bloom max bytes = %d, want >= 0 (0: no cap)", c.BloomMaxBytes))
	}
	if c.PageCacheBytes < 0 || c.PageCacheBytes > math.MaxInt32 {
		errs = append(errs, fmt.Errorf("pebblestore: page cache bytes = %d, want 0..%d (0: the default)", c.PageCacheBytes, math.MaxInt32))
	}
	if c.PageFilterBytes < 0 || c.PageFilterBytes > math.MaxInt32 {
		errs = append(errs, fmt.Errorf("pebblestore: page filter bytes = %d, want 0..%d (0: the default)", c.PageFilterBytes, math.MaxInt32))
	}
	return errors.Join(errs...)
}

// maxMemTable bounds MemTableBytes well below Pebble's own limit (4 GiB).
const maxMemTable = 1 << 30

// MemTableSize is the memtable size the store opens Pebble with: MemTableBytes, or 1/8 of CacheBytes between
// 1 MiB and 32 MiB. Pebble reserves memtable memory from the block cache (the mutable memtable and those
// waiting to be flushed), so the memtable must stay well below CacheBytes or nothing is cached at all.
func (c Config) MemTableSize() int64 {
	if c.MemTableBytes > 0 {
		return c.MemTableBytes
	}
	return min(max(c.CacheBytes/8, 1<<20), 32<<20)
}

// DB is one Pebble database holding all of Frontier's stores. Safe for concurrent use. The caller that
// opened it calls Close once, after every use of its stores has returned.
type DB struct {
	db    *pebble.DB
	cfg   Config
	fs    vfs.FS
	log   *slog.Logger
	wo    *pebble.WriteOptions
	bloom *state.Bloom

	states  *States
	bstates *state.BloomStore
	queue   *Queue
	pages   *Pages
	domains *Domains

	closeOnce sync.Once
	closeErr  error
}

const bloomFile = "states.bloom"

// openHook, when set (tests only), edits the options Open passes to Pebble.
var openHook func(*pebble.Options)

// Open opens (or creates) the database in cfg.Dir. log may be nil.
func Open(cfg Config, log *slog.Logger) (*DB, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	fs := cfg.FS
	if fs == nil {
		fs = vfs.Default
	}
	cache := pebble.NewCache(max(cfg.CacheBytes, 1<<20))
	defer cache.Unref()
	opts := &pebble.Options{
		FS:            fs,
		Cache:         cache,
		Logger:        Logger(log),
		EventListener: eventListener(log),
		MemTableSize:  uint64(cfg.MemTableSize()),
		// L0 is compacted at 8 sublevels, not Pebble's 4 (writes stop at 24, not 12), as the URLFrontier
		// gateway's store does: states, queue rows and page records are keyed by fingerprint, so every flush
		// spans the whole key space and each L0 compaction rewrites much of the level below; compacting half
		// as often took BenchmarkStandalonePut from 51–58 k to 63–68 k URLs/s (the same CPU per URL once
		// drained), and the fast timing web's CPU per page did not move (BENCHMARKS.md, stop 43).
		L0CompactionThreshold: 8,
		L0StopWritesThreshold: 24,
	}
	if openHook != nil {
		openHook(opts)
	}
	// Point lookups of absent keys (new URLs, unscheduled fingerprints) dominate; table-level Bloom
	// filters answer most of them without reading a block.
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	pdb, err := pebble.Open(cfg.Dir, opts)
	if err != nil {
		return nil, fmt.Errorf("pebblestore: open %s: %w", cfg.Dir, err)
	}
	d := &DB{db: pdb, cfg: cfg, fs: fs, log: log, wo: pebble.NoSync}
	if cfg.Sync && !cfg.DeferSync {
		d.wo = pebble.Sync
	}
	d.states = &States{d: d}
	d.pages = &Pages{d: d, filterMax: int(cfg.PageFilterBytes), cache: pageCache{max: int(cfg.PageCacheBytes)}}
	d.domains = &Domains{d: d}
	if d.queue, err = openQueue(d); err != nil {
		return nil, errors.Join(err, pdb.Close())
	}
	if cfg.Bloom.Expected > 0 {
		if err := d.openBloom(); err != nil {
			return nil, errors.Join(err, pdb.Close())
		}
		d.bstates = state.NewBloomStore(d.states, d.bloom)
	} else if err := pdb.Delete(keyBloomClean, pebble.Sync); err != nil {
		// States written without the filter make a saved filter stale for a later Open that enables it.
		return nil, errors.Join(fmt.Errorf("pebblestore: clear bloom marker: %w", err), pdb.Close())
	}
	return d, nil
}

// States returns the state store: the Bloom-filtered one when Config.Bloom is enabled.
func (d *DB) States() state.Store {
	if d.bstates != nil {
		return d.bstates
	}
	return d.states
}

// RawStates returns the state store without the Bloom filter.
func (d *DB) RawStates() *States { return d.states }

// BloomStore returns the Bloom-filtered state store, or nil when Config.Bloom is disabled.
func (d *DB) BloomStore() *state.BloomStore { return d.bstates }

// Queue returns the queue.
func (d *DB) Queue() *Queue { return d.queue }

// Pages returns the metadata page store.
func (d *DB) Pages() *Pages { return d.pages }

// Domains returns the per-domain counters.
func (d *DB) Domains() *Domains { return d.domains }

// Pebble returns the underlying database, for metrics (Metrics()), tools, and the durable bus of standalone
// mode (bus/pebblebus), which keeps its streams under the key prefix 'B'. The store's tables use lower-case
// prefixes (see the package doc); write nothing else to it.
func (d *DB) Pebble() *pebble.DB { return d.db }

// Close saves the Bloom filter and closes the database. Calls after the first return the first result.
func (d *DB) Close() error {
	d.closeOnce.Do(func() {
		var errs []error
		if d.bloom != nil {
			if err := d.saveBloom(); err != nil {
				errs = append(errs, err)
			}
		}
		d.logMetrics()
		if err := d.db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("pebblestore: close: %w", err))
		}
		d.closeErr = errors.Join(errs...)
	})
	return d.closeErr
}

// logMetrics logs at Close what Pebble wrote over the database's life in this process (Info): the bytes
// committed (WAL), flushed to L0 and written by compactions, the write amplification (table bytes written per
// byte flushed), the flush and compaction counts and the block cache's hit rate; at Debug, Pebble's whole
// metrics table. Where compaction CPU goes is read from there (BENCHMARKS.md, "Pebble's writes").
func (d *DB) logMetrics() {
	ctx := context.Background()
	if !d.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	m := d.db.Metrics()
	var flushed, compacted uint64
	for i := range m.Levels {
		flushed += m.Levels[i].TableBytesFlushed
		compacted += m.Levels[i].TableBytesCompacted
	}
	amp := 0.0
	if flushed > 0 {
		amp = float64(flushed+compacted) / float64(flushed)
	}
	hits, misses := m.BlockCache.Hits, m.BlockCache.Misses
	hitRate := 0.0
	if hits+misses > 0 {
		hitRate = float64(hits) / float64(hits+misses)
	}
	d.log.Info("pebble: metrics", "wal_in_mib", m.WAL.BytesIn>>20, "flushed_mib", flushed>>20, "compacted_mib", compacted>>20,
		"write_amp", fmt.Sprintf("%.2f", amp), "flushes", m.Flush.Count, "compactions", m.Compact.Count,
		"tombstone_density_compactions", m.Compact.TombstoneDensityCount, "block_cache_hit_rate", fmt.Sprintf("%.3f", hitRate),
		"tables_mib", m.Total().TablesSize>>20)
	if d.log.Enabled(ctx, slog.LevelDebug) {
		d.log.Debug("pebble: metrics table\n" + m.String())
	}
}

func (d *DB) openBloom() error {
	path := d.fs.PathJoin(d.cfg.Dir, bloomFile)
	_, closer, err := d.db.Get(keyBloomClean)
	clean := err == nil
	if clean {
		closer.Close()
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("pebblestore: read bloom marker: %w", err)
	}
	if clean {
		b, err := d.loadBloom(path)
		switch {
		case err != nil:
			d.log.Warn("pebblestore: saved bloom filter unreadable; rebuilding from the states", "path", path, "err", err)
		case b.Config() != d.cfg.Bloom:
			d.log.Info("pebblestore: bloom filter design changed; rebuilding from the states", "saved", b.Config(), "want", d.cfg.Bloom)
		default:
			d.bloom = b
		}
	}
	// From here on the saved file is stale: drop the marker before any write.
	if err := d.db.Delete(keyBloomClean, pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: clear bloom marker: %w", err)
	}
	if d.bloom != nil {
		d.bloom.SetMaxBytes(d.cfg.BloomMaxBytes)
		return nil
	}
	if d.bloom, err = state.NewBloom(d.cfg.Bloom, d.log); err != nil {
		return fmt.Errorf("pebblestore: %w", err)
	}
	d.bloom.SetMaxBytes(d.cfg.BloomMaxBytes)
	start := time.Now()
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pfxState}, UpperBound: []byte{pfxState + 1}})
	if err != nil {
		return fmt.Errorf("pebblestore: rebuild bloom: %w", err)
	}
	n := 0
	for it.First(); it.Valid(); it.Next() {
		d.bloom.Add(it.Key()[1:])
		n++
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return fmt.Errorf("pebblestore: rebuild bloom: %w", err)
	}
	if n > 0 || !clean {
		d.log.Info("pebblestore: bloom filter rebuilt from the states", "states", n, "took", time.Since(start))
	}
	return nil
}

func (d *DB) loadBloom(path string) (*state.Bloom, error) {
	f, err := d.fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return state.ReadBloom(f, st.Size(), d.log)
}

func (d *DB) saveBloom() error {
	path := d.fs.PathJoin(d.cfg.Dir, bloomFile)
	tmp := path + ".tmp"
	f, err := d.fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("pebblestore: save bloom: %w", err)
	}
	_, err = d.bloom.WriteTo(f)
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		err = d.fs.Rename(tmp, path)
	}
	if err == nil {
		var dir vfs.File
		if dir, err = d.fs.OpenDir(d.cfg.Dir); err == nil {
			err = errors.Join(dir.Sync(), dir.Close())
		}
	}
	if err == nil {
		err = d.db.Set(keyBloomClean, nil, pebble.Sync)
	}
	if err != nil {
		return fmt.Errorf("pebblestore: save bloom to %s: %w", path, err)
	}
	return nil
}

// Logger returns a pebble.Logger that sends Pebble's own log lines to log (nil: discards them): its
// informational lines (the WAL replayed at Open, format upgrades) at Debug, its errors at Error, each message
// prefixed "pebble: ". The store opens Pebble with it; anything else that opens a Pebble database (a tool, a
// test reading a stopped crawl's data directory) passes it as pebble.Options.Logger, since Pebble's default
// logger writes to the standard library's log, that is stderr.
func Logger(log *slog.Logger) pebble.Logger {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return pebbleLogger{log}
}

// pebbleLogger sends Pebble's log lines to slog (Logger).
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	if p.l.Enabled(context.Background(), slog.LevelDebug) {
		p.l.Debug("pebble: " + fmt.Sprintf(format, args...))
	}
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error("pebble: " + fmt.Sprintf(format, args...))
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.l.Error("pebble: fatal: " + fmt.Sprintf(format, args...))
	panic(fmt.Sprintf(format, args...))
}

// eventListener logs the Pebble events an operator should see: background errors (Error, as Pebble's
// default does) and write stalls (Warn: writes wait for a flush or for L0 compactions to catch up).
func eventListener(log *slog.Logger) *pebble.EventListener {
	l := Logger(log)
	return &pebble.EventListener{
		BackgroundError: func(err error) { l.Errorf("background error: %s", err) },
		WriteStallBegin: func(info pebble.WriteStallBeginInfo) {
			log.Warn("pebble: write stall", "reason", info.Reason)
		},
	}
}

var _ io.Closer = (*DB)(nil)
