// Package standalone is Frontier's single-process mode (docs/architecture.md): the spiders, the strategy workers and the
// DB worker run as goroutines over a durable in-process bus (bus/pebblebus) and one Pebble database
// (pebblestore), with the same worker code the cluster runs over Kafka and HBase. It is the quick start, and the
// right choice for a crawl that fits one machine.
//
// Run crawls from a seed file until the context ends or, with Config.StopWhenDone, until the crawl is
// finished: every stream consumed and committed by every group, the queue empty and no request in flight,
// for Config.QuietPeriod. A crawl that looks finished but holds a URL QUEUED with no queue row (stranded:
// nothing would ever fetch it) does not report "crawl finished": Run returns ErrStranded naming some of them.
//
// # Stop and resume
//
// States, queue, page metadata and the three streams all live in the Pebble database under Config.DataDir
// (the streams as logs under their own key prefix, see bus/pebblebus), so the standalone crawl keeps the
// cluster's promise: every consumer commits its position only after the effects of what it read are written,
// and a restarted process resumes every stream after its group's last commit. Cancelling the context (SIGTERM)
// stops fetching; a request in flight is abandoned unreported and stays on the spider feed after the spider's
// committed offset, so the next run fetches it; what was fetched is reported, every worker finishes and
// commits its current batch, and nothing extracted is dropped. After kill -9 the next run replays what was
// not committed; it fetches again at most what was in flight (see spider's package doc).
//
// The data directory records the settings that decide what its bytes mean (identity rules, fingerprint
// function, codec, partition counts; see Manifest); Run refuses a directory written with other ones, because
// switching them mid-crawl breaks the URL-seen test or strands queued URLs.
//
// # Memory
//
// Config.MemoryLimit is what the whole process may use (standalone.memory_limit, 256 MiB in cmd/standalone).
// Three consumers decide most of it, and two of them have a size of their own, so the limit is split, unless
// a key sets a part explicitly:
//
//   - Pebble, a quarter: the block cache (Pebble.CacheBytes when 0), in which Pebble also reserves its
//     memtables (Pebble.MemTableBytes when 0: a quarter of the cache, at most 32 MiB). Pebble allocates this
//     memory itself, outside the Go heap, so the Go runtime's memory limit does not see it.
//   - response bodies, a quarter: one budget of body bytes in memory shared by every spider of the process
//     (Spider.BodyBudgetBytes when 0; spider.BodyBudget), in the Go heap.
//   - the rest of the Go heap, half. Its structures that would otherwise grow to a size fixed in their
//     package are bounded from this share (MemoryPlan.StateCache, PageCache, PageFilter, StateBloom,
//     LinksSeen), 11/32 of it together: an eighth for the strategy workers' state caches
//     (strategy_worker.state_cache.max_entries is lowered to fit: about 790,000 URLs over all the workers in
//     the default 256 MiB, where the package's default is 3 million a worker, about 64 MB), a sixteenth for
//     the DB worker's page cache (8 MiB, where its default is 16), a thirty-second for its page-key filter
//     (4 MiB), a sixteenth for the states' Bloom filter (8 MiB, its first two layers: about 3 million URLs at
//     1%; past it the filter stops growing and answers "maybe" more often, which costs reads of the states,
//     never a URL) and a sixteenth for the DB worker's set of links recorded lately (db_worker.links_cache is
//     lowered to about 105,000 from 500,000). The rest of the share is for what grows with the load (the
//     batches and messages in flight, 60–80 MB on a crawl of a million pages, connection buffers) and the
//     collector's headroom: a live heap near the soft limit makes the collector run without pause, which
//     is what twice these shares did to a crawl of a million pages. With a URLFrontier gateway its store's
//     cache comes out of this share first (MemoryWithGateway), and the structures are sized from what is
//     left, the gateway's seen filter among them (a sixteenth: 7 MiB, where its default is 32 MiB).
//
// The Go runtime's soft limit (Memory().GoLimit, which cmd/standalone applies with MemoryPlan.SetRuntime,
// GOGC 200 beside it, unless GOMEMLIMIT or GOGC is set) is MemoryLimit minus Pebble's cache: the memory the Go
// runtime itself accounts for, bodies included. The limit stays soft: a live Go heap above it is not an
// error, the collector then just runs more often. With MemoryLimit 0 nothing is derived: pebblestore's cache (128 MiB), the spider's
// default budget (spider.DefaultBodyBudgetBytes, still one for all the spiders) and no Go limit.
//
// standalone sits at level L4: it picks the concrete implementations the workers get.
package standalone

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/pebblebus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/crawlstatus"
	"github.com/frontiercrawl/frontier/dbworker"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/pebblestore"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/spider"
	"github.com/frontiercrawl/frontier/state"
	"github.com/frontiercrawl/frontier/strategyworker"
)

// Config configures a single-process crawl. It is also the standalone section of the configuration
// (configs.Config.Standalone): the fields with a key are that section's, declared and validated here only; the
// others are the cluster's own sections (codec, identity, spider, strategy_worker, db_worker, stats_interval),
// which configs fills in (configs.Config.FillGlobals) and their packages validate.
type Config struct {
	// DataDir holds the Pebble database and the spiders' local state.
	DataDir string `mapstructure:"data_dir"`
	// Spiders is the number of spiders (spider-feed partitions, but for a gateway's own past them:
	// Deps.GatewayPartitions); StrategyWorkers the number of strategy workers (spider-log partitions).
	Spiders         int `mapstructure:"spiders"`
	StrategyWorkers int `mapstructure:"strategy_workers"`
	// StopWhenDone ends Run once the crawl is finished (see the package doc): nothing queued, in flight or
	// unconsumed for QuietPeriod.
	StopWhenDone bool `mapstructure:"stop_when_done"`
	// QuietPeriod is how long the crawl must look finished before Run stops. Default 2s.
	QuietPeriod time.Duration `mapstructure:"quiet_period"`
	// Pebble configures the store; its Dir is DataDir/pebble when empty.
	Pebble pebblestore.Config `mapstructure:"pebble"`
	// MemoryLimit is the memory in bytes of the process that runs the crawl, split between Pebble's cache,
	// the response bodies and the rest of the Go heap (the package doc, "Memory"; Memory). Its Go part, the
	// limit minus Pebble's cache, is the process's soft memory limit (runtime/debug's SetMemoryLimit, as
	// GOMEMLIMIT), so the garbage collector works harder as the heap nears it rather than letting it grow, and
	// can collect less often below it (GOGC 200, GCPercent): cmd/standalone sets both at start (launch,
	// MemoryPlan.SetRuntime), unless GOMEMLIMIT or GOGC is set; Run itself never does, since a library must not
	// change its host process, but sizes the cache and the body budget from it. 0 sets none.
	MemoryLimit int64 `mapstructure:"memory_limit"`

	// Codec names the wire codec used on the in-process streams (the bytes are the cluster's).
	Codec string `mapstructure:"-"`
	// Canonicalization and Fingerprint name the identity settings Deps.Identity implements; they are recorded
	// in the data directory's Manifest and checked when a crawl resumes ("" is neither recorded nor checked).
	Canonicalization string                `mapstructure:"-"`
	Fingerprint      string                `mapstructure:"-"`
	Spider           spider.Config         `mapstructure:"-"`
	StrategyWorker   strategyworker.Config `mapstructure:"-"`
	DBWorker         dbworker.Config       `mapstructure:"-"`
	// StatsInterval is how often the crawl's stats line is logged. Default 10s.
	StatsInterval time.Duration `mapstructure:"-"`
}

// DefaultConfig returns one spider and one strategy worker, msgpack, and each role's defaults.
func DefaultConfig() Config {
	return Config{Spiders: 1, StrategyWorkers: 1, Codec: "msgpack", Spider: spider.DefaultConfig(),
		StrategyWorker: strategyworker.DefaultConfig(), DBWorker: dbworker.DefaultConfig(),
		Pebble: pebblestore.DefaultConfig(), QuietPeriod: 2 * time.Second, StatsInterval: 10 * time.Second}
}

// Validate reports every invalid value of the standalone section's keys (the fields other sections own are
// checked by checkRoles, which Run calls too).
func (c Config) Validate() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("data_dir is empty"))
	}
	if c.Spiders <= 0 || c.StrategyWorkers <= 0 {
		errs = append(errs, fmt.Errorf("spiders = %d, strategy_workers = %d, want > 0", c.Spiders, c.StrategyWorkers))
	}
	if c.QuietPeriod <= 0 {
		errs = append(errs, fmt.Errorf("quiet_period = %v, want > 0", c.QuietPeriod))
	}
	if c.MemoryLimit < 0 {
		errs = append(errs, fmt.Errorf("memory_limit = %d, want >= 0 (0 sets none)", c.MemoryLimit))
	} else if err := c.Memory().Check(); err != nil {
		errs = append(errs, err)
	}
	p := c.Pebble
	if p.Dir == "" {
		p.Dir = "-" // DataDir/pebble when the store opens
	}
	if err := p.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("pebble: %w", err))
	}
	return errors.Join(errs...)
}

// checkRoles reports every invalid value of the fields the other sections own, with their owners' checks.
func (c Config) checkRoles() error {
	var errs []error
	if c.StatsInterval <= 0 {
		errs = append(errs, fmt.Errorf("stats_interval = %v, want > 0", c.StatsInterval))
	}
	for _, e := range []error{c.Spider.Validate(), c.StrategyWorker.Validate(), c.DBWorker.Validate()} {
		if e != nil {
			errs = append(errs, e)
		}
	}
	return errors.Join(errs...)
}

// Identity is what the roles need of the identity layer: the spider's fingerprint and domain functions.
type Identity = spider.Identity

// Deps are what a crawl is built from besides its configuration.
type Deps struct {
	// Seeds is the seed file spider 0 injects ("" injects none: a resumed crawl).
	Seeds    string
	Identity Identity // nil: spider.SimpleIdentity
	// Handler sees every fetched response (e.g. the WARC writer); nil means none.
	Handler spider.ResponseHandler
	// DialContext replaces the spiders' dialer (the demo and tests dial the synthetic web); nil dials for real.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Transport replaces the spiders' whole HTTP transport (DialContext is then unused): the throughput
	// benchmarks answer from a simulated web in-process. nil builds one per spider.
	Transport  http.RoundTripper
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	// Progress, if set, receives the crawl's status about once a second (the same snapshot is written to
	// DataDir/status.json for `frontierctl status --data-dir`).
	Progress func(crawlstatus.Status)
	// Gateway, if set, runs in place of the spiders of GatewayPartitions until the crawl ends: it gets the
	// crawl's bus and owns those spider-feed partitions (standalone --urlfrontier: the URLFrontier gateway,
	// package urlfrontier), and it may read the crawl's states and page metadata (to answer for URLs it does
	// not hold). A crawl may then start without a seed file.
	Gateway func(ctx context.Context, b bus.Bus, states state.Store, pages metadata.Store) error
	// GatewayPartitions are the spider-feed partitions Gateway owns; no spider is built for them, a spider
	// runs for each of the others (the first of them injects Seeds). Partitions from Config.Spiders on are
	// the gateway's own, added to the feed beside the spiders' (standalone --urlfrontier --seeds gives it
	// partition Config.Spiders), and recorded in the crawl's manifest. nil with Gateway set: every
	// partition, and no spider runs (Seeds must then be empty).
	GatewayPartitions []int
}

// Summary is what a finished crawl reports.
type Summary struct {
	Elapsed time.Duration
	Pages   int64 // page_crawled events (any status)
	Errors  int64 // request_error events
	Links   int64 // links extracted
	Queued  int64 // still queued when Run returned
}

// Run crawls until ctx ends or, with StopWhenDone, the crawl is finished.
func Run(ctx context.Context, cfg Config, deps Deps) (Summary, error) {
	start := time.Now()
	if err := errors.Join(cfg.Validate(), cfg.checkRoles()); err != nil {
		return Summary{}, fmt.Errorf("standalone: %w", err)
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	id := deps.Identity
	if id == nil {
		id = spider.SimpleIdentity{}
	}
	c, err := codec.New(cfg.Codec)
	if err != nil {
		return Summary{}, fmt.Errorf("standalone: %w", err)
	}
	mem := cfg.Memory()
	if deps.Gateway != nil {
		mem = cfg.MemoryWithGateway()
	}
	swcfg := cfg.StrategyWorker
	swcfg.Cache = mem.StateCacheConfig(swcfg.Cache, cfg.StrategyWorkers)
	if set := cfg.StrategyWorker.Cache.MaxEntries; swcfg.Cache.MaxEntries < set && set != state.DefaultCacheConfig().MaxEntries {
		log.Warn("strategy_worker.state_cache.max_entries lowered to fit standalone.memory_limit: raise the limit to keep it",
			"max_entries", set, "lowered_to", swcfg.Cache.MaxEntries, "memory_limit", mem.Total, "strategy_workers", cfg.StrategyWorkers)
	}
	dcfg := cfg.DBWorker
	dcfg.LinksCache = mem.LinksCache(dcfg.LinksCache)
	if set := cfg.DBWorker.LinksCache; dcfg.LinksCache < set && set != dbworker.DefaultConfig().LinksCache {
		log.Warn("db_worker.links_cache lowered to fit standalone.memory_limit: raise the limit to keep it",
			"links_cache", set, "lowered_to", dcfg.LinksCache, "memory_limit", mem.Total)
	}
	pcfg := cfg.Pebble
	pcfg.CacheBytes, pcfg.MemTableBytes = mem.PebbleCache, mem.MemTable
	pcfg.PageCacheBytes, pcfg.PageFilterBytes, pcfg.BloomMaxBytes = mem.PageCache, mem.PageFilter, mem.StateBloom
	// The line gives the settings as the workers and the store get them.
	log.Info("memory", "limit_mib", mem.Total>>20, "pebble_cache_mib", pcfg.CacheBytes>>20, "memtable_mib", pcfg.MemTableBytes>>20,
		"body_budget_mib", mem.BodyBudget>>20, "gateway_cache_mib", mem.GatewayCache>>20, "go_limit_mib", mem.GoLimit>>20,
		"state_cache_entries", swcfg.Cache.MaxEntries, "page_cache_mib", pcfg.PageCacheBytes>>20, "page_filter_mib", pcfg.PageFilterBytes>>20,
		"state_bloom_max_mib", pcfg.BloomMaxBytes>>20, "links_cache", dcfg.LinksCache,
		"gateway_seen_filter_mib", mem.SeenFilter>>20)
	bodies := spider.NewBodyBudget(mem.BodyBudget) // one for every spider (the package doc, "Memory")
	if pcfg.Dir == "" {
		pcfg.Dir = filepath.Join(cfg.DataDir, "pebble")
	}
	if deps.Seeds != "" {
		if _, err := spider.CheckSeeds(deps.Seeds); err != nil {
			return Summary{}, err
		}
	} else if deps.Gateway == nil && !exists(filepath.Join(cfg.DataDir, ManifestFile)) && !exists(pcfg.Dir) {
		return Summary{}, fmt.Errorf("data directory %s holds no crawl to resume: give a seed file (--seeds FILE) to start one", absPath(cfg.DataDir))
	}
	// feeds counts every spider-feed partition, the gateway's own included (gatewayFeeds); cfg.Spiders, the
	// spiders' alone.
	m, feeds, err := gatewayFeeds(cfg, deps)
	if err != nil {
		return Summary{}, err
	}
	resumed, err := checkManifest(cfg.DataDir, pcfg.Dir, m)
	if err != nil {
		return Summary{}, err
	}
	// One WAL orders every write below, so only the writes that something outside the database relies on
	// need their own fsync: the spiders' (see bus/pebblebus, "Durability").
	pcfg.DeferSync = true
	db, err := pebblestore.Open(pcfg, log.With("component", "pebble"))
	if err != nil {
		return Summary{}, err
	}
	defer db.Close()
	registerBloom(deps.Registerer, db)
	if resumed {
		if err := logResume(ctx, log, cfg.DataDir, feeds, db); err != nil {
			return Summary{}, err
		}
	} else {
		log.Info("new crawl in " + absPath(cfg.DataDir))
	}

	// The streams live in the store's own database, so one WAL orders every write (see bus/pebblebus).
	bcfg := pebblebus.DefaultConfig()
	bcfg.Partitions = map[bus.Stream]int{bus.SpiderLog: cfg.StrategyWorkers, bus.ScoringLog: 1, bus.SpiderFeed: feeds}
	bcfg.Retired = map[bus.Stream][]string{bus.SpiderLog: {retiredStatsGroup}}
	bcfg.Sync = pcfg.Sync
	bcfg.DeferSends = []bus.Stream{bus.ScoringLog, bus.SpiderFeed}
	bcfg.DeferCommits = []bus.Stream{bus.SpiderLog, bus.ScoringLog}
	b, err := pebblebus.Open(db.Pebble(), bcfg, log.With("component", "bus"))
	if err != nil {
		return Summary{}, err
	}
	defer b.Close()

	if resumed {
		if err := ackDelivered(ctx, log, b, c, db, feeds); err != nil {
			return Summary{}, err
		}
	}

	// Build every worker first, and inject the seeds, so that nothing runs yet when one of them fails.
	if deps.Gateway != nil {
		dcfg.Gateways = gatewayBatches(dcfg.Gateways, deps.GatewayPartitions, feeds)
	}
	dbw, err := dbworker.New(dcfg, dbworker.Deps{Bus: b, Codec: c, Queue: db.Queue(), Pages: db.Pages(),
		Logger: log.With("component", "dbworker"), Registerer: deps.Registerer})
	if err != nil {
		return Summary{}, err
	}
	var sws []*strategyworker.Worker
	for p := range cfg.StrategyWorkers {
		sw, err := strategyworker.New(swcfg, strategyworker.Deps{Bus: b, Codec: c, States: db.States(), Domains: db.Domains(),
			Fingerprint: id.Fingerprint, Partition: p, Logger: log.With("component", "strategyworker", "partition", p),
			Registerer: firstOnly(deps.Registerer, p)})
		if err != nil {
			return Summary{}, err
		}
		sws = append(sws, sw)
	}
	var st stats
	var spiders []*spider.Role
	for p := range feeds {
		if deps.Gateway != nil && (deps.GatewayPartitions == nil || slices.Contains(deps.GatewayPartitions, p)) {
			continue // the gateway's
		}
		scfg := cfg.Spider
		scfg.StateDir = filepath.Join(cfg.DataDir, fmt.Sprintf("spider-%d", p))
		sd := spider.RoleDeps{Bus: b, Deps: spider.Deps{Codec: countingCodec{c, &st}, Identity: id, Handler: deps.Handler, Partition: p,
			Logger: log.With("component", "spider"), Registerer: firstOnly(deps.Registerer, p), DialContext: deps.DialContext,
			Transport: deps.Transport, BodyBudget: bodies}}
		s, err := spider.NewRole(scfg, sd)
		if err != nil {
			return Summary{}, err
		}
		// The first spider injects the seeds before anything runs: once they are on the (durable) spider log,
		// the crawl has work, so "nothing queued, nothing unconsumed" means finished from the first check on.
		if len(spiders) == 0 && deps.Seeds != "" {
			if err := s.InjectSeeds(ctx, deps.Seeds); err != nil {
				return Summary{}, err
			}
		}
		spiders = append(spiders, s)
	}
	if deps.Seeds != "" && len(spiders) == 0 {
		return Summary{}, fmt.Errorf("standalone: a seed file, but the gateway owns every one of the %d spider-feed partitions: no spider would inject it", feeds)
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(runCtx)
	g.Go(func() error { return dbw.Run(gctx) })
	for _, sw := range sws {
		g.Go(func() error { return sw.Run(gctx) })
	}
	for _, s := range spiders {
		g.Go(func() error { return s.Run(gctx) })
	}
	if deps.Gateway != nil {
		g.Go(func() error { return deps.Gateway(gctx, b, db.States(), db.Pages()) })
	}

	pr := &progressReporter{dir: cfg.DataDir, spiders: feeds, b: b, db: db, st: &st, fn: deps.Progress}
	var finished atomic.Bool
	g.Go(func() error {
		if watch(gctx, cfg, feeds, b, db, &st, log, pr) {
			finished.Store(true)
			cancel()
		}
		return nil
	})

	err = g.Wait()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	if finished.Load() && err == nil {
		// Every role has stopped and flushed: a URL still QUEUED must have a queue row, or nothing will ever
		// fetch it, and "finished" would be a lie.
		if serr := checkStranded(context.WithoutCancel(ctx), db); serr != nil {
			log.Error("crawl ended with URLs stranded", "err", serr)
			err = serr
		} else {
			log.Info("crawl finished")
		}
	}
	sum := Summary{Elapsed: time.Since(start), Pages: st.pages.Load(), Errors: st.errors.Load(), Links: st.links.Load()}
	for part := range feeds {
		n, _ := db.Queue().Count(context.WithoutCancel(ctx), part)
		sum.Queued += n
	}
	return sum, err
}

// ErrStranded is the error of a crawl that ended with URLs stranded: QUEUED in the states, with no queue
// row, so no request would ever fetch them (see checkStranded).
var ErrStranded = errors.New("standalone: URLs stranded")

// checkStranded scans the states of a finished crawl for URLs QUEUED without a queue row. A finished crawl
// has nothing on the feed or in flight, so every QUEUED URL must be in the queue; one that is not was lost
// on its way (a retry dropped, a row deleted by mistake), and the crawl must not call itself finished. It reads
// every state once (about a second per few million URLs).
func checkStranded(ctx context.Context, db *pebblestore.DB) error {
	const chunk = 1000
	var queued []frontier.Fingerprint
	var stranded []string
	n := 0
	flush := func() error {
		has, err := db.Queue().Has(ctx, queued)
		if err != nil {
			return err
		}
		for i, fp := range queued {
			if has[i] {
				continue
			}
			n++
			if len(stranded) < 10 {
				u := fmt.Sprintf("%x", []byte(fp))
				if p, ok, err := db.Pages().Get(ctx, fp); err == nil && ok && p.URL != "" {
					u = p.URL
				}
				stranded = append(stranded, u)
			}
		}
		queued = queued[:0]
		return nil
	}
	err := db.RawStates().Each(ctx, func(fp frontier.Fingerprint, e state.Entry) error {
		if e.State != frontier.Queued {
			return nil
		}
		queued = append(queued, bytes.Clone(fp))
		if len(queued) >= chunk {
			return flush()
		}
		return nil
	})
	if err == nil && len(queued) > 0 {
		err = flush()
	}
	if err != nil {
		return fmt.Errorf("standalone: check for stranded URLs: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("%w: %d QUEUED with no queue row, never to be fetched, e.g. %v", ErrStranded, n, stranded)
	}
	return nil
}

// ackDelivered removes from the queue the rows whose requests are on the spider feed still: a DB worker killed
// between sending a batch and acknowledging it left them, and would send them again (see
// pebblestore.Queue.AckDelivered).
func ackDelivered(ctx context.Context, log *slog.Logger, b bus.Bus, c codec.Codec, db *pebblestore.DB, spiders int) error {
	lags, err := b.Lag(ctx, bus.SpiderFeed, bus.GroupSpiderFeed)
	if err != nil {
		return err
	}
	total := 0
	for p := range spiders {
		if lags[p] == 0 {
			continue
		}
		feed, err := b.Consumer(ctx, bus.SpiderFeed, bus.GroupSpiderFeed, []int{p})
		if err != nil {
			return err
		}
		msgs, err := feed.Fetch(ctx, int(lags[p]))
		_ = feed.Close()
		if err != nil {
			return fmt.Errorf("read the spider feed: %w", err)
		}
		items := make([]queue.Item, 0, len(msgs))
		for _, m := range msgs {
			r, err := c.DecodeRequest(m.Value)
			if err != nil {
				continue // the spider reports it
			}
			fp, err := r.MetaFingerprint()
			if err != nil {
				continue
			}
			items = append(items, queue.Item{Partition: p, Fingerprint: fp, Request: m.Value})
		}
		n, err := db.Queue().AckDelivered(ctx, items)
		if err != nil {
			return err
		}
		total += n
	}
	if total > 0 {
		log.Info("queue rows already on the spider feed removed (a batch sent before the last stop and not acknowledged)", "rows", total)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// absPath is path made absolute for messages (path itself if that fails).
func absPath(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

// logResume says that the crawl resumes, with how much it has done and has left.
func logResume(ctx context.Context, log *slog.Logger, dataDir string, feeds int, db *pebblestore.DB) error {
	var queued int64
	for p := range feeds {
		n, err := db.Queue().Count(ctx, p)
		if err != nil {
			return err
		}
		queued += n
	}
	counts, err := db.RawStates().Count(ctx)
	if err != nil {
		return err
	}
	log.Info(fmt.Sprintf("resuming %s: %d queued, %d crawled", absPath(dataDir), queued, counts[frontier.Crawled]),
		"errors", counts[frontier.Error], "known", counts[frontier.Queued]+counts[frontier.Crawled]+counts[frontier.Error]+counts[frontier.NotCrawled])
	return nil
}

// firstOnly keeps several instances of one role from registering the same metric names twice: instance 0
// registers its metrics, the others' are not exported (their work shows in the spider log and the stats line).
func firstOnly(reg prometheus.Registerer, instance int) prometheus.Registerer {
	if instance == 0 {
		return reg
	}
	return nil
}

// progress is a snapshot of everything still to do.
type progress struct {
	lag    int64 // uncommitted messages over every stream and group
	queued int64
}

func (p progress) idle() bool { return p.lag == 0 && p.queued == 0 }

func snapshot(ctx context.Context, b bus.LagReader, db *pebblestore.DB, spiders int) (progress, error) {
	var p progress
	for _, sg := range bus.LagGroups() {
		lags, err := b.Lag(ctx, sg.Stream, sg.Group)
		if err != nil {
			return p, err
		}
		for _, l := range lags {
			p.lag += l
		}
	}
	for part := range spiders {
		n, err := db.Queue().Count(ctx, part)
		if err != nil {
			return p, err
		}
		p.queued += n
	}
	return p, nil
}

// watch logs the stats line and, with StopWhenDone, reports true once the crawl has been idle for the quiet
// period. The seeds are on the spider log before it starts, and work in progress always shows as a stream's
// lag or a queue row (a request is deleted from the queue only once it is on the feed, and leaves the feed's
// lag only once the spider reported it), so an idle snapshot means finished.
func watch(ctx context.Context, cfg Config, feeds int, b bus.LagReader, db *pebblestore.DB, st *stats, log *slog.Logger, pr *progressReporter) bool {
	const poll = 100 * time.Millisecond
	tick := time.NewTicker(poll)
	defer tick.Stop()
	var quietSince time.Time
	lastStats := time.Now()
	started := time.Now()
	for {
		select {
		case <-ctx.Done():
			return false
		case now := <-tick.C:
			p, err := snapshot(ctx, b, db, feeds)
			if err != nil {
				if ctx.Err() == nil {
					log.Warn("progress check", "err", err)
				}
				continue
			}
			pr.observe(ctx, now, p.idle())
			if now.Sub(lastStats) >= cfg.StatsInterval {
				pages := st.pages.Load()
				log.Info("crawl", "pages", pages, "pages_per_min", int(float64(pages)/now.Sub(started).Minutes()),
					"errors", st.errors.Load(), "links", st.links.Load(), "queued", p.queued, "uncommitted", p.lag)
				lastStats = now
			}
			if !p.idle() {
				quietSince = time.Time{}
				continue
			}
			if quietSince.IsZero() {
				quietSince = now
			}
			if !cfg.StopWhenDone {
				continue
			}
			if now.Sub(quietSince) >= cfg.QuietPeriod {
				return true
			}
		}
	}
}

// retiredStatsGroup is the consumer group that once read the whole spider log for the stats line, without
// decoding it (countingCodec counts as the spiders encode), only so that its committed offset, remembered by
// the bus, would not hold back the log's retention in crawls begun before the counting moved. Reading and
// committing every message for nothing was 1% of a fast crawl's CPU; the bus now forgets the group at open
// (pebblebus.Config.Retired).
const retiredStatsGroup = "embedded-stats"

// stats counts the spider log's outcomes for the stats line and the summary.
type stats struct {
	pages, errors, links atomic.Int64
	mu                   sync.Mutex
	errHosts             map[string]int64 // request errors by host
}

// countingCodec counts what the spiders put on the spider log as they encode it: the stats line and the
// summary need no second decoding of the whole spider log (that cost ~7% of a crawl's CPU).
type countingCodec struct {
	codec.Codec
	st *stats
}

func (c countingCodec) EncodeMessage(m frontier.Message) ([]byte, error) {
	b, err := c.Codec.EncodeMessage(m)
	if err != nil {
		return b, err
	}
	c.count(m)
	return b, nil
}

// AppendMessage keeps the spider's encoding of a page's messages into one buffer (spider.MessageAppender).
func (c countingCodec) AppendMessage(dst []byte, m frontier.Message) ([]byte, error) {
	var b []byte
	var err error
	if _, ok := c.Codec.(codec.Msgpack); ok {
		b, err = codec.AppendMessage(dst, m)
	} else if b, err = c.Codec.EncodeMessage(m); err == nil {
		b = append(dst, b...)
	}
	if err != nil {
		return dst, err
	}
	c.count(m)
	return b, nil
}

func (c countingCodec) count(m frontier.Message) {
	switch m := m.(type) {
	case *frontier.PageCrawled:
		c.st.pages.Add(1)
	case *frontier.RequestError:
		c.st.errors.Add(1)
		c.st.errorHost(m.Request)
	case *frontier.LinksExtracted:
		c.st.links.Add(int64(len(m.Links)))
	}
}
