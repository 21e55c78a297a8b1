// Package strategyworker runs a crawl strategy over one partition of the spider log (docs/architecture.md; docs/strategies.md): it
// reads the partition's events in batches, looks up the state of every URL involved through a bounded
// write-back cache in front of the state store (the URL-seen test: exact, because each host belongs to exactly
// one partition), lets the strategy decide, and publishes its decisions as update_score on the scoring log.
//
// Delivery (docs/architecture.md, invariant 2): for each batch the worker first sends the update_score messages and waits
// for the bus to acknowledge them, then flushes the states the batch changed to the store, and only then
// commits the spider-log offset. A crash replays the uncommitted batch; replaying is idempotent because a URL
// the strategy already queued is QUEUED in the store (and the queue keeps one row per URL anyway).
//
// A message the codec cannot decode is counted, logged with its offset and skipped (bus.Decode). A score the
// strategy gives outside [0, 1] is rejected for that one URL and counted; the batch goes on.
//
// Besides states, a strategy may keep a revisit time per URL (stored with its state) and counters per host
// or registrable domain (budgets, discovery): the worker caches those in front of the domain metadata store
// (Deps.Domains) and writes the batch's additions after flushing the states, before the commit.
//
// Redirects: the spiders do not follow 3xx answers; they report the target as a link carrying
// redirect_times (see package spider). The worker puts such a target through the URL-seen test itself: a new
// one is scheduled (at the redirecting request's depth and score) whatever the strategy would do with a link,
// a URL already queued, crawled or in error is not, so a page reachable both directly and through redirects is
// fetched once.
//
// Scope (Config.Scope, package scope): links and redirect targets out of the seeds' domains (or hosts), of
// denied extensions or trap-shaped are dropped before the strategy sees them; a URL scheduled for the first
// time is checked against its host's page budget and its path's query variants. Each drop is counted by
// reason (frontier_strategyworker_dropped_total and the stats line). The seeds' hosts and domains are
// recorded in the domain metadata store by the worker that owns each seed, and read from it by the others.
//
// Retries (RetryConfig): a transient failure (5xx, 408, 429, a timeout, a reset) is not shown to the strategy
// while the request has retries left; the worker schedules it again through the queue with a due time and
// the count in meta retry_times. The last failure reaches the strategy as a request_error.
//
// Control (frontierctl block, unblock, pause, resume; package control): the caller follows the control stream
// and reads it to its end before Run, waiting out a stream that cannot be read yet like any outage (cmd
// strategyworker does, as the DB workers and spiders do), so the worker never scores a batch against a control
// state older than the stream. What the commands mean here follows from the promise that no URL found is lost
// (docs/reliability.md): a link or retry of a blocked host is scored and queued like any other, and the DB
// workers keep it queued until the host is unblocked (dropping it would lose it: nothing finds it again once
// the page that held it is crawled); it is counted in frontier_strategyworker_blocked_scheduled_total and the
// stats line, so an operator sees how much a block holds back. Pause stops dispatch, not scoring: the strategy
// workers drain the spider log, so that "every lag at 0" marks the consistent point docs/operations.md's backup
// waits for.
//
// strategyworker sits at level L3: it imports the model, the codec, the bus, the state and strategy packages,
// and no concrete store or bus; the caller (cmd/strategyworker, standalone) injects them.
package strategyworker

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/scope"
	"github.com/frontiercrawl/frontier/state"
	"github.com/frontiercrawl/frontier/strategy"
)

// Config configures a strategy worker.
type Config struct {
	// Strategy names the strategy (see strategy.Default.Names()). Default "bfs".
	Strategy string `mapstructure:"strategy"`
	// Options are the strategy's own options, decoded strictly by its factory.
	Options map[string]any `mapstructure:"options"`
	// BatchSize is the most spider-log messages handled per batch. Default 4,096 (Frontera's
	// SPIDER_LOG_CONSUMER_BATCH_SIZE is 512): a batch costs a few synced writes (scores, states, offset)
	// whatever its size, so when a backlog builds up, larger batches catch up faster; without a backlog a
	// batch is whatever has arrived.
	BatchSize int `mapstructure:"batch_size"`
	// Cache bounds the state cache.
	Cache state.CacheConfig `mapstructure:"state_cache"`
	// ShutdownTimeout bounds the last flush after the context ends. Default 30s.
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`
	// BatchTimeout bounds one batch (state reads, scores sent, states flushed, offset committed) while the worker
	// runs; a batch that exceeds it fails the worker and is replayed by the next one. 0 (the default) sets no
	// bound, so a batch waits out an outage of Kafka or HBase of any length and completes.
	BatchTimeout time.Duration `mapstructure:"batch_timeout"`
	// Retry configures retries of transient failures (5xx, 408, 429, timeouts, resets).
	Retry RetryConfig `mapstructure:"retry"`
	// Scope is what links the crawl follows and its trap defences. Not a key of this section: it is the
	// top-level scope section that every role shares (the main copies it here).
	Scope scope.Config `mapstructure:"-"`
	// StatsInterval is how often the stats line is logged. Not a key of this section: the main sets it from the
	// common stats_interval. 0 logs no stats line.
	StatsInterval time.Duration `mapstructure:"-"`
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{Strategy: "bfs", BatchSize: 4096, Cache: state.DefaultCacheConfig(), ShutdownTimeout: 30 * time.Second,
		Retry: DefaultRetryConfig(), Scope: scope.DefaultConfig()}
}

// Validate reports every invalid value.
func (c Config) Validate() error {
	var errs []error
	if c.Strategy == "" {
		errs = append(errs, errors.New("strategy: no strategy named"))
	}
	if c.BatchSize <= 0 {
		errs = append(errs, fmt.Errorf("batch_size = %d, want > 0", c.BatchSize))
	}
	if err := c.Cache.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("state_cache: %w", err))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, fmt.Errorf("shutdown_timeout = %v, want > 0", c.ShutdownTimeout))
	}
	if err := c.Retry.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Scope.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("scope: %w", err))
	}
	if c.BatchTimeout < 0 {
		errs = append(errs, fmt.Errorf("batch_timeout = %v, want >= 0 (0: no bound)", c.BatchTimeout))
	}
	return errors.Join(errs...)
}

// Deps are what a worker is built from. The caller owns and closes them.
type Deps struct {
	Bus    bus.Bus
	Codec  codec.Codec
	States state.Store // the exact store; the worker puts its own cache in front
	// Domains keeps the strategies' per-host and per-domain counters (Context.Count); nil keeps them in
	// memory only, so budgets start over at a restart.
	Domains metadata.Domains
	// Now is the strategies' clock; nil means time.Now.
	Now func() time.Time
	// Strategy decides; nil builds Config.Strategy from strategy.Default.
	Strategy strategy.Strategy
	// Fingerprint identifies a request whose meta has no fingerprint (the spider normally sets one).
	Fingerprint func(rawURL string) (frontier.Fingerprint, error)
	Partition   int // the spider-log partition this worker owns
	// Control, if set, is the run-time control state (control.State, package control), which the caller has
	// read to the control stream's end before Run: see "Control" in the package doc.
	Control    Control
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// Worker is one strategy worker. Build it with New and call Run once.
type Worker struct {
	cfg   Config
	deps  Deps
	log   *slog.Logger
	m     *metrics
	cache *state.Cache
	strat strategy.Strategy

	nEvents, nScheduled, nBatches atomic.Int64 // running totals for the stats line
	nBlocked                      atomic.Int64 // URLs of blocked hosts scheduled (frontier_strategyworker_blocked_scheduled_total)
	// counters caches the strategy's counters; only the worker goroutine touches it.
	counters *counters
	scope    *scoper
	// domainHosts keeps, by the address of its first entry, the name each domain map met gives, across
	// batches: the decoder shares a host's domain map across messages (codec.MsgpackDecoder), and decoded meta
	// values are never written into, so the same map gives the same name. Only the worker goroutine touches it.
	domainHosts map[*frontier.Entry]domainHost
}

// New checks the configuration and builds a worker.
func New(cfg Config, deps Deps) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("strategyworker: %w", err)
	}
	if deps.Bus == nil || deps.Codec == nil || deps.States == nil || deps.Fingerprint == nil {
		return nil, errors.New("strategyworker: Bus, Codec, States and Fingerprint are required")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Domains == nil {
		deps.Domains = metadata.NewMemoryDomains()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	strat := deps.Strategy
	if strat == nil {
		var err error
		if strat, err = strategy.New(cfg.Strategy, cfg.Options); err != nil {
			return nil, fmt.Errorf("strategyworker: %w", err)
		}
	}
	cache, err := state.NewCache(deps.States, cfg.Cache)
	if err != nil {
		return nil, fmt.Errorf("strategyworker: %w", err)
	}
	registerCache(deps.Registerer, cache)
	w := &Worker{cfg: cfg, deps: deps, log: deps.Logger.With("partition", deps.Partition), m: newMetrics(deps.Registerer),
		cache: cache, strat: strat, counters: newCounters(deps.Domains, maxCachedCounters),
		domainHosts: map[*frontier.Entry]domainHost{}}
	if w.scope, err = newScoper(cfg.Scope, deps.Domains, w.m, w.log); err != nil {
		return nil, fmt.Errorf("strategyworker: %w", err)
	}
	return w, nil
}

// Control is the run-time control state a worker consults (control.State implements it).
type Control interface {
	Blocked(host string) bool
}

// Owners is the ownership group of the strategy workers of partition p (bus.Owner): two workers started for
// the same partition never both run; the second waits as a standby and takes over when the first dies.
func Owners(p int) string { return fmt.Sprintf("%s-owners-%d", bus.GroupStrategyWorkerSpiderLog, p) }

// Run consumes the partition until ctx ends or the strategy declares the crawl finished; it returns nil then.
// It runs only while this process owns the partition (see bus.Own): a standby waits here.
func (w *Worker) Run(ctx context.Context) error {
	acquired := 0
	return bus.Own(ctx, w.deps.Bus, bus.SpiderLog, Owners(w.deps.Partition), []int{w.deps.Partition}, func(ctx context.Context, _ []int) error {
		acquired++
		if acquired > 1 {
			// Another worker owned the partition meanwhile and may have changed its states: start cold.
			cache, err := state.NewCache(w.deps.States, w.cfg.Cache)
			if err != nil {
				return fmt.Errorf("strategyworker: %w", err)
			}
			w.cache = cache
		}
		return w.run(ctx)
	})
}

func (w *Worker) run(ctx context.Context) error {
	b := w.deps.Bus
	in, err := b.Consumer(ctx, bus.SpiderLog, bus.GroupStrategyWorkerSpiderLog, []int{w.deps.Partition})
	if err != nil {
		return fmt.Errorf("strategyworker: open spider log: %w", err)
	}
	defer in.Close()
	out, err := bus.OpenProducer(ctx, b, bus.ScoringLog)
	if err != nil {
		return fmt.Errorf("strategyworker: open scoring log: %w", err)
	}
	defer out.Close()

	if w.cfg.StatsInterval > 0 {
		sctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); w.statsLoop(sctx) }()
		defer func() { stop(); <-done }()
	}
	last := int64(-1) // the highest offset of the batch being decoded: the Seq of its counter writes
	dec := w.newDecoder()
	decode := func(m bus.Message) (frontier.Message, error) {
		last = max(last, m.Offset)
		return dec(m.Value)
	}
	w.counters.source = fmt.Sprintf("%s/%d", bus.GroupStrategyWorkerSpiderLog, w.deps.Partition)
	return bus.Consume(ctx, in, w.cfg.BatchSize, w.cfg.ShutdownTimeout, decode, func(ctx context.Context, events []frontier.Message) error {
		w.counters.seq, last = last, -1
		if w.cfg.BatchTimeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, w.cfg.BatchTimeout)
			defer cancel()
		}
		if err := w.handle(ctx, events, out); err != nil {
			return err
		}
		w.nBatches.Add(1)
		w.nEvents.Add(int64(len(events)))
		if f, ok := w.strat.(strategy.Finisher); ok && f.Finished() {
			w.log.Info("strategy declared the crawl finished")
			return bus.ErrStop
		}
		return nil
	})
}

// newDecoder returns the decode of a run, for the worker's goroutine: one decoder for the run, so that with
// msgpack the messages share their meta domain maps (the partition's hosts), decoding without a private copy
// of each message's bytes (codec.Skim{Borrow: true}), whose decoded bin values alias the bus message:
// bus.Consume holds a batch's messages until handle returns, and nothing of a batch outlives it but what is
// made anew from it: the state cache's fingerprints are decoded from the hex meta into fresh bytes
// (metaFingerprint, frontier.ParseFingerprintHex), the hosts and counter keys are strings (converted, so
// copied), the shared domain maps hold copies of their bytes (codec.MsgpackDecoder), the update_scores
// (retries, redirects, a revisit's validators) are encoded into the batch's own buffers before it ends, and the
// scope and the strategies keep strings only. TestBorrowedDecodeKeepsNothing overwrites each batch's bytes
// after handle to catch a reference kept.
func (w *Worker) newDecoder() func([]byte) (frontier.Message, error) {
	dec := codec.NewMessageDecoder(w.deps.Codec)
	if d, ok := dec.(codec.SkimDecoder); ok {
		return func(p []byte) (frontier.Message, error) { return d.DecodeMessageSkim(p, codec.Skim{Borrow: true}) }
	}
	return dec.DecodeMessage
}

// handle runs one batch: states in, strategy, scores out, states back.
func (w *Worker) handle(ctx context.Context, events []frontier.Message, out bus.Producer) (err error) {
	defer func() {
		if err != nil {
			w.counters.reset() // the batch is handled again: forget what it added
		}
	}()
	n := 0     // the batch's requests, about: the maps below are sized once instead of growing through rehashes
	seeds := 0 // the batch's seeds, each scheduled once when new: c.out is sized for them
	for _, e := range events {
		switch e := e.(type) {
		case *frontier.AddSeeds:
			n += len(e.Seeds)
			seeds += len(e.Seeds)
		case *frontier.LinksExtracted:
			n += 1 + len(e.Links)
		default:
			n++
		}
	}
	c := &batchContext{ctx: ctx, w: w, reqs: make(map[*frontier.Request]int32, n), info: make([]reqInfo, 0, n),
		idx: newFPIndex(n), order: make([]frontier.Fingerprint, 0, n), entries: make([]state.Entry, 0, n),
		isDirty: make([]bool, 0, n), out: make([]bus.Message, 0, seeds)}
	var hosts []string // the requests' hosts for the counters' prefetch, a run of one host listed once
	addReq := func(r *frontier.Request) {
		c.add(r)
		if h := c.host(r); len(hosts) == 0 || hosts[len(hosts)-1] != h {
			hosts = append(hosts, h)
		}
	}
	for _, e := range events { // the requests whose states an event involves, as requestsOf lists them
		switch e := e.(type) {
		case *frontier.LinksExtracted:
			addReq(e.Request)
			for _, l := range e.Links {
				addReq(l)
			}
		case *frontier.PageCrawled:
			if r := e.Response.Request; r != nil {
				addReq(r)
				for _, hop := range redirectHops(r) {
					addReq(hop)
				}
			}
		case *frontier.RequestError:
			addReq(e.Request)
		default:
			for _, r := range requestsOf(e) {
				addReq(r)
			}
		}
	}
	if err := c.load(ctx); err != nil {
		return err
	}
	if err := w.counters.prefetch(ctx, hosts); err != nil {
		return fmt.Errorf("strategyworker: read counters: %w", err)
	}
	if err := w.counters.load(ctx, counterTemplatePages, w.scope.templateKeys(c, events)); err != nil {
		return fmt.Errorf("strategyworker: read the template budgets: %w", err)
	}
	if err := w.scope.prepare(ctx, c, events, w.deps.Now()); err != nil {
		return err
	}
	// The events counted by type, added to the metric after the loop: a few WithLabelValues per batch instead
	// of one per event.
	type tally struct {
		name string
		n    int
	}
	var byType []tally
	defer func() {
		for _, t := range byType {
			w.m.events.WithLabelValues(t.name).Add(float64(t.n))
		}
	}()
	for _, e := range events {
		name := e.Name()
		if i := slices.IndexFunc(byType, func(t tally) bool { return t.name == name }); i >= 0 {
			byType[i].n++
		} else {
			byType = append(byType, tally{name, 1})
		}
		switch e := e.(type) {
		case *frontier.AddSeeds:
			w.scope.seeds(c, e.Seeds)
			c.seeding = true // seeds are the scope: no budget applies to them
			w.strat.Seeds(c, e.Seeds)
			c.seeding = false
		case *frontier.PageCrawled:
			if e.Response.Request != nil {
				retried, errName := w.retryPage(c, e.Response)
				switch {
				case retried:
					continue // a transient failure, scheduled again: the strategy sees the last try only
				case errName != "":
					w.strat.RequestError(c, e.Response.Request, errName) // still failing after the last try
				default:
					w.strat.PageCrawled(c, e.Response)
				}
				// Every URL of the redirect chain was fetched too: mark the hops of this worker's host, so a
				// link to one of them later is not fetched again (other hosts' owners get their own report).
				for _, hop := range redirectHops(e.Response.Request) {
					if c.State(hop) != frontier.Crawled {
						c.SetState(hop, frontier.Crawled)
					}
				}
			}
		case *frontier.LinksExtracted:
			links := w.scope.links(c, e.Request, e.Links)
			if hasRedirect(links) {
				all := links
				links = make([]*frontier.Request, 0, len(all))
				for _, l := range all {
					if isRedirectTarget(l) {
						w.scheduleRedirect(c, l)
					} else {
						links = append(links, l)
					}
				}
			}
			if len(links) > 0 {
				w.strat.LinksExtracted(c, e.Request, links)
			}
		case *frontier.RequestError:
			if !w.retryError(c, e.Request, e.Error) {
				w.strat.RequestError(c, e.Request, e.Error)
			}
		}
	}
	if c.err != nil {
		return c.err // nothing sent, nothing committed: the batch is handled again
	}
	if len(c.out) > 0 {
		if err := out.Send(ctx, c.out...); err != nil {
			return fmt.Errorf("strategyworker: send %d scores: %w", len(c.out), err)
		}
		w.m.scheduled.Add(float64(len(c.out)))
		w.nScheduled.Add(int64(len(c.out)))
	}
	// The states are HBase writes no bus call guards: ask the fence again (free within 200 ms of the send's
	// check), so a worker that lost its partition while it sent (stopped past its session between the two)
	// does not write states over the new owner's. The counters need no fence: their marks make a stale write
	// count nothing twice (hbase/doc.go).
	if err := bus.CheckFence(ctx); err != nil {
		return fmt.Errorf("strategyworker: write %d states refused: %w", len(c.dirty), err)
	}
	if err := c.store(ctx); err != nil {
		return err
	}
	if err := w.counters.flush(ctx); err != nil {
		return fmt.Errorf("strategyworker: write counters: %w", err)
	}
	return nil
}

// requestsOf lists the requests whose states an event involves (handle walks the common events' without the
// slice).
func requestsOf(e frontier.Message) []*frontier.Request {
	switch e := e.(type) {
	case *frontier.AddSeeds:
		return e.Seeds
	case *frontier.PageCrawled:
		if e.Response.Request != nil {
			return append([]*frontier.Request{e.Response.Request}, redirectHops(e.Response.Request)...)
		}
	case *frontier.LinksExtracted:
		return append([]*frontier.Request{e.Request}, e.Links...)
	case *frontier.RequestError:
		return []*frontier.Request{e.Request}
	}
	return nil
}

// Meta keys the spider sets on a redirected request (Frontera's redirect middleware and canonical solver).
const (
	metaRedirectURLs         = "redirect_urls"
	metaRedirectFingerprints = "redirect_fingerprints"
	metaRedirectTimes        = "redirect_times"
)

// isRedirectTarget reports whether a link is the target of a 3xx answer (the spider does not follow
// redirects: it reports the target as a link carrying the chain so far) rather than a link of a page.
func isRedirectTarget(l *frontier.Request) bool {
	v, ok := l.Meta.Get(metaRedirectTimes)
	if !ok {
		return false
	}
	n, _ := v.(int64)
	return n > 0
}

func hasRedirect(links []*frontier.Request) bool {
	for _, l := range links {
		if isRedirectTarget(l) {
			return true
		}
	}
	return false
}

// scheduleRedirect puts a redirect target through the URL-seen test: a URL already queued, crawled or in
// error is not fetched again, whichever was discovered first; a new one is scheduled whatever the strategy
// would do with a link (a redirect hop is the same page moved, not a page one level deeper), with the score of
// the request that redirected (in its meta), 1 when it has none.
func (w *Worker) scheduleRedirect(c *batchContext, r *frontier.Request) {
	if c.State(r) != frontier.NotCrawled {
		w.m.redirects.WithLabelValues("seen").Inc()
		return
	}
	score, err := r.MetaScore()
	if err != nil || strategy.CheckScore(score) != nil {
		score = 1
	}
	if err := c.Schedule(r, score); err != nil {
		return
	}
	c.SetState(r, frontier.Queued)
	w.m.redirects.WithLabelValues("scheduled").Inc()
}

// redirectHops returns the other URLs of r's redirect chain that share r's host, as requests carrying their
// fingerprints (from meta redirect_fingerprints, hex, parallel to redirect_urls).
func redirectHops(r *frontier.Request) []*frontier.Request {
	us, _ := r.Meta.Get(metaRedirectURLs)
	fs, _ := r.Meta.Get(metaRedirectFingerprints)
	urls, _ := us.([]frontier.Value)
	fps, _ := fs.([]frontier.Value)
	if len(urls) == 0 || len(urls) != len(fps) {
		return nil
	}
	host := r.Hostname()
	var hops []*frontier.Request
	for i, v := range urls {
		u, ok := v.(string)
		hexFP, ok2 := fps[i].([]byte)
		if !ok || !ok2 || u == r.URL {
			continue
		}
		fp, err := frontier.ParseFingerprintHex(hexFP)
		if err != nil {
			continue
		}
		hop := &frontier.Request{URL: u}
		if hop.Hostname() != host {
			continue
		}
		hop.SetMetaFingerprint(fp)
		hops = append(hops, hop)
	}
	return hops
}

// batchContext is the strategy.Context of one batch.
type batchContext struct {
	ctx context.Context
	err error // the first counter read that failed: the batch fails
	w   *Worker
	// reqs maps each request the batch met to its index in info, which keeps what the worker, the scope and the
	// strategy ask of a request several times per URL (its fingerprint, the index of its state, Hostname,
	// url.Parse), worked out once: one map lookup per question instead of one per kind plus the state's.
	reqs map[*frontier.Request]int32
	info []reqInfo
	// fpSlab is what the fingerprints read from meta are cut from (each capped): one allocation for many.
	fpSlab []byte
	// lastDomain and lastDomainLen identify the domain map host read lastHost from.
	lastDomain    *frontier.Entry
	lastDomainLen int
	lastHost      string
	// The batch's states: idx maps each fingerprint to the index of the fingerprint in order and of its
	// state in entries, so that reading or changing a state converts no fingerprint to a string and allocates
	// nothing per URL beyond its first sight (fpIndex: not even a key then).
	idx     fpIndex
	order   []frontier.Fingerprint // each fingerprint once; the ones added before load are read in one call
	entries []state.Entry
	isDirty []bool
	dirty   []int32 // the indices of the changed states, each once
	out     []bus.Message
	// lastKey is the bus key of the last message scheduled, for host lastKeyHost: the messages of a run of one
	// host (a page's links) share it, read-only as every bus key is, instead of a conversion each.
	lastKeyHost string
	lastKey     []byte
	encBuf      []byte // what the batch's update_score messages are encoded into (encode)
	seeding     bool   // the strategy is handling seeds: the scope's budgets do not apply
}

// reqInfo is what the batch worked out about one request (batchContext.reqs).
type reqInfo struct {
	fp      frontier.Fingerprint // nil: no usable fingerprint (valid once hasFP)
	st      int32                // the index of fp's state in entries, -1 until looked up
	hasFP   bool
	hasHost bool
	hasURL  bool
	host    string
	url     parsedURL
}

// req returns r's reqInfo, adding an empty one the first time. The pointer is valid until the next new request.
func (c *batchContext) req(r *frontier.Request) *reqInfo {
	if i, ok := c.reqs[r]; ok {
		return &c.info[i]
	}
	c.reqs[r] = int32(len(c.info))
	c.info = append(c.info, reqInfo{st: -1})
	return &c.info[len(c.info)-1]
}

// loadedState is the state r had when the batch loaded it (NotCrawled for a request the batch did not load),
// without reading the store.
func (c *batchContext) loadedState(r *frontier.Request) frontier.State {
	i, ok := c.reqs[r]
	if !ok {
		return frontier.NotCrawled
	}
	p := &c.info[i]
	if !p.hasFP || p.fp == nil {
		return frontier.NotCrawled
	}
	if p.st < 0 {
		j, ok := c.idx.get(p.fp)
		if !ok {
			return frontier.NotCrawled
		}
		p.st = j
	}
	return c.entries[p.st].State
}

// host is r.Hostname(), worked out once per request and batch. Requests that carry the very same domain map
// (the codec gives every link of a links_extracted, and usually its page, one shared map) share the name read
// from it, instead of each scanning the map and converting the name again.
func (c *batchContext) host(r *frontier.Request) string {
	p := c.req(r)
	if p.hasHost {
		return p.host
	}
	p.hasHost = true
	dom, _ := r.Meta.Get(frontier.MetaKeyDomain)
	m, _ := dom.(frontier.Map)
	if len(m) > 0 && &m[0] == c.lastDomain && len(m) == c.lastDomainLen {
		p.host = c.lastHost
		return c.lastHost
	}
	if len(m) > 0 {
		if d, ok := c.w.domainHosts[&m[0]]; ok && d.n == len(m) {
			c.lastDomain, c.lastDomainLen, c.lastHost = &m[0], len(m), d.host
			p.host = d.host
			return d.host
		}
	}
	h := r.MetaDomainName()
	if h != "" {
		c.lastDomain, c.lastDomainLen, c.lastHost = &m[0], len(m), h
		if len(c.w.domainHosts) >= maxDomainHosts {
			clear(c.w.domainHosts)
		}
		c.w.domainHosts[&m[0]] = domainHost{len(m), h}
	} else {
		h = r.Hostname() // no usable domain meta: from the URL
	}
	p.host = h
	return h
}

// domainHost is the name a domain map of n entries gives (Worker.domainHosts).
type domainHost struct {
	n    int
	host string
}

// maxDomainHosts bounds Worker.domainHosts: as many as the msgpack decoder shares (codec.MsgpackDecoder).
const maxDomainHosts = 4096

// parsedURL is a request's URL parsed (u nil if it does not parse) and its template-budget key (tkey, when
// asked for once).
type parsedURL struct {
	u       *url.URL
	tkey    string
	hasTKey bool
}

// parsed is url.Parse(r.URL), worked out once per request and batch. The URL is shared: read it only.
func (c *batchContext) parsed(r *frontier.Request) parsedURL {
	return c.parsedInfo(c.req(r), r)
}

func (c *batchContext) parsedInfo(p *reqInfo, r *frontier.Request) parsedURL {
	if p.hasURL {
		return p.url
	}
	u, err := url.Parse(r.URL)
	if err != nil {
		u = nil
	}
	p.url, p.hasURL = parsedURL{u: u}, true
	return p.url
}

// templateKey is scope.TemplateKey of r's URL, worked out once per request and batch; ok is false when the
// URL does not parse.
func (c *batchContext) templateKey(r *frontier.Request) (string, bool) {
	p := c.req(r)
	c.parsedInfo(p, r)
	if p.url.u == nil {
		return "", false
	}
	if !p.url.hasTKey {
		p.url.tkey, p.url.hasTKey = scope.TemplateKey(p.url.u), true
	}
	return p.url.tkey, true
}

func (c *batchContext) fingerprint(r *frontier.Request) frontier.Fingerprint {
	return c.fingerprintInfo(c.req(r), r)
}

func (c *batchContext) fingerprintInfo(p *reqInfo, r *frontier.Request) frontier.Fingerprint {
	if p.hasFP {
		return p.fp
	}
	fp, err := c.metaFingerprint(r)
	if err != nil {
		if fp, err = c.w.deps.Fingerprint(r.URL); err != nil {
			c.w.log.Warn("request without a usable fingerprint", "url", r.URL, "err", err)
			c.w.m.badRequests.Inc()
			fp = nil
		} else {
			r.SetMetaFingerprint(fp)
		}
	}
	p.fp, p.hasFP = fp, true
	return fp
}

// metaFingerprint is r.MetaFingerprint(), decoding the usual hex bin into the batch's slab instead of an
// allocation of its own.
func (c *batchContext) metaFingerprint(r *frontier.Request) (frontier.Fingerprint, error) {
	v, _ := r.Meta.Get(frontier.MetaKeyFingerprint)
	b, ok := v.([]byte)
	if !ok {
		return r.MetaFingerprint() // absent, str or another type: its answer and error
	}
	n := hex.DecodedLen(len(b))
	if cap(c.fpSlab)-len(c.fpSlab) < n {
		// Room for the batch's requests not met yet (a batch of one message needs a few), at most 64.
		c.fpSlab = make([]byte, 0, max(n, min(64, cap(c.info)-len(c.info)+1)*sha1.Size))
	}
	l := len(c.fpSlab)
	fp := c.fpSlab[l : l+n : l+n]
	if _, err := hex.Decode(fp, b); err != nil {
		return r.MetaFingerprint() // not hex: its error
	}
	c.fpSlab = c.fpSlab[:l+n]
	return frontier.Fingerprint(fp), nil
}

func (c *batchContext) add(r *frontier.Request) {
	p := c.req(r)
	fp := c.fingerprintInfo(p, r)
	if fp == nil || p.st >= 0 {
		return
	}
	if i, ok := c.idx.get(fp); ok {
		p.st = i
	} else {
		p.st = c.push(fp, state.Entry{})
	}
}

func (c *batchContext) load(ctx context.Context) error {
	if len(c.order) == 0 {
		return nil
	}
	found := make([]bool, len(c.order))
	if err := c.w.cache.Get(ctx, c.order, c.entries, found); err != nil {
		return fmt.Errorf("strategyworker: read %d states: %w", len(c.order), err)
	}
	return nil
}

// push adds fp, not yet in the batch, with its entry e, and returns its index.
func (c *batchContext) push(fp frontier.Fingerprint, e state.Entry) int32 {
	i := int32(len(c.order))
	c.idx.put(fp, i)
	c.order = append(c.order, fp)
	c.entries = append(c.entries, e)
	c.isDirty = append(c.isDirty, false)
	return i
}

func (c *batchContext) store(ctx context.Context) error {
	if len(c.dirty) > 0 {
		fps := make([]frontier.Fingerprint, 0, len(c.dirty))
		entries := make([]state.Entry, 0, len(c.dirty))
		for _, i := range c.dirty {
			fps = append(fps, c.order[i])
			entries = append(entries, c.entries[i])
		}
		if err := c.w.cache.Put(ctx, fps, entries); err != nil {
			return fmt.Errorf("strategyworker: write %d states: %w", len(fps), err)
		}
	}
	if err := c.w.cache.Flush(ctx); err != nil {
		return fmt.Errorf("strategyworker: flush states: %w", err)
	}
	return nil
}

// State implements strategy.Context. A request marked dont_filter opts out of the URL-seen test (as in
// Scrapy): it looks never seen, so the strategy schedules it again.
func (c *batchContext) State(r *frontier.Request) frontier.State {
	if r.DontFilter() {
		return frontier.NotCrawled
	}
	i, ok := c.stateIndex(r)
	if !ok {
		return frontier.Error // unidentifiable: never schedule it
	}
	return c.entries[i].State
}

// stateIndex is the index of r's state in entries (index of its fingerprint, kept per request); ok is false
// when r has no usable fingerprint.
func (c *batchContext) stateIndex(r *frontier.Request) (int32, bool) {
	p := c.req(r)
	fp := c.fingerprintInfo(p, r)
	if fp == nil {
		return 0, false
	}
	if p.st < 0 {
		p.st = c.index(fp) // appends to entries, not to info: p stays valid
	}
	return p.st, true
}

// SetState implements strategy.Context.
func (c *batchContext) SetState(r *frontier.Request, s frontier.State) {
	c.update(r, func(e *state.Entry) { e.State = s })
}

// index returns the index of fp's entry, reading it (through the cache) when the batch did not load it: a
// request the strategy made itself, such as a domain's home page.
func (c *batchContext) index(fp frontier.Fingerprint) int32 {
	if i, ok := c.idx.get(fp); ok {
		return i
	}
	out, found := make([]state.Entry, 1), make([]bool, 1)
	if err := c.w.cache.Get(c.ctx, []frontier.Fingerprint{fp}, out, found); err != nil {
		if c.err == nil {
			c.err = fmt.Errorf("strategyworker: read the state of %x: %w", []byte(fp), err)
		}
		return c.push(fp, state.Entry{State: frontier.Error}) // never schedule what could not be read; the batch fails anyway
	}
	return c.push(fp, out[0])
}

// RevisitAt implements strategy.Context.
func (c *batchContext) RevisitAt(r *frontier.Request) int64 {
	i, ok := c.stateIndex(r)
	if !ok {
		return 0
	}
	return c.entries[i].RevisitAt
}

// SetRevisitAt implements strategy.Context.
func (c *batchContext) SetRevisitAt(r *frontier.Request, unix int64) {
	c.update(r, func(e *state.Entry) { e.RevisitAt = unix })
}

// Count implements strategy.Context.
func (c *batchContext) Count(name, key string) int64 {
	v, err := c.w.counters.get(c.ctx, name, key)
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("strategyworker: read counter %s of %s: %w", name, key, err)
	}
	return v
}

// Add implements strategy.Context.
func (c *batchContext) Add(name, key string, delta int64) int64 {
	v := c.Count(name, key) + delta
	c.w.counters.set(name, key, v, delta)
	return v
}

// Now implements strategy.Context.
func (c *batchContext) Now() time.Time { return c.w.deps.Now() }

// update changes r's entry and marks it dirty (a request the batch did not name starts from the zero entry,
// as State reports it).
func (c *batchContext) update(r *frontier.Request, f func(*state.Entry)) {
	i, ok := c.stateIndex(r)
	if !ok {
		return
	}
	f(&c.entries[i])
	if !c.isDirty[i] {
		c.isDirty[i] = true
		c.dirty = append(c.dirty, i)
	}
}

// ErrDropped is Schedule's error for a URL the scope's budgets drop (scope.ReasonHostBudget,
// scope.ReasonQueryVariants, scope.ReasonTemplateBudget); the drop is counted by reason.
var ErrDropped = errors.New("strategyworker: dropped by the scope")

// Schedule implements strategy.Context: it encodes an update_score for the scoring log, keyed by host.
func (c *batchContext) Schedule(r *frontier.Request, score float64) error {
	if err := strategy.CheckScore(score); err != nil {
		c.w.m.rejected.Inc()
		c.w.log.Warn("strategy score rejected", "url", r.URL, "score", score)
		return err
	}
	if c.fingerprint(r) == nil {
		return fmt.Errorf("strategyworker: %s has no fingerprint", r.URL)
	}
	first := !c.seeding && c.State(r) == frontier.NotCrawled
	var u *url.URL
	if first {
		u = c.parsed(r).u
		if reason := c.w.scope.budget(c, r, u); reason != "" {
			c.w.scope.drop(reason, r.URL)
			return fmt.Errorf("%w: %s", ErrDropped, reason)
		}
	}
	v, err := c.encode(&frontier.UpdateScore{Request: r, Score: score, Schedule: true})
	if err != nil {
		c.w.m.badRequests.Inc()
		return fmt.Errorf("strategyworker: encode update_score for %s: %w", r.URL, err)
	}
	host := c.host(r)
	c.out = append(c.out, bus.Message{Key: c.hostKey(host), Value: v})
	if ctl := c.w.deps.Control; ctl != nil && ctl.Blocked(host) {
		c.w.m.blocked.Inc() // queued all the same: the DB workers hold it until the host is unblocked
		c.w.nBlocked.Add(1)
	}
	if first {
		c.w.scope.scheduled(c, r, u)
	}
	return nil
}

// hostKey is []byte(host), shared by the messages scheduled in a row for one host.
func (c *batchContext) hostKey(host string) []byte {
	if c.lastKey == nil || host != c.lastKeyHost {
		c.lastKeyHost, c.lastKey = host, []byte(host)
	}
	return c.lastKey
}

// encSlab bounds the buffers the batch's update_score messages are encoded into (batchContext.encode).
const encSlab = 32 << 10

// encode is Codec.EncodeMessage(m). With msgpack (codec.AppendMessage, the same bytes) the batch's messages are
// encoded into shared buffers (sized to the batch, at most encSlab bytes), each message a 3-index slice of
// one: an allocation per many messages instead of one each. A buffer's bytes are never written again once a
// message is cut from them.
func (c *batchContext) encode(m frontier.Message) ([]byte, error) {
	if _, ok := c.w.deps.Codec.(codec.Msgpack); !ok {
		return c.w.deps.Codec.EncodeMessage(m)
	}
	if cap(c.encBuf)-len(c.encBuf) < 512 {
		c.encBuf = make([]byte, 0, min(encSlab, max(1024, 384*cap(c.info))))
	}
	i := len(c.encBuf)
	b, err := codec.AppendMessage(c.encBuf[i:i:cap(c.encBuf)], m)
	if err != nil {
		return nil, err
	}
	if len(b) > 0 && &b[0] == &c.encBuf[i : i+1 : cap(c.encBuf)][0] {
		c.encBuf = c.encBuf[:i+len(b)] // it fit: the next message starts after it
	} // else it did not fit and b is an allocation of its own; the buffer is left for the next message
	return b[:len(b):len(b)], nil
}

// statsLoop logs the stats line every StatsInterval until ctx ends: running totals and the rates over the last
// interval.
func (w *Worker) statsLoop(ctx context.Context) {
	t := time.NewTicker(w.cfg.StatsInterval)
	defer t.Stop()
	last := time.Now()
	var prevEvents, prevScheduled int64
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			secs := now.Sub(last).Seconds()
			last = now
			ev, sc := w.nEvents.Load(), w.nScheduled.Load()
			cs := w.cache.Stats()
			attrs := []any{"batches", w.nBatches.Load(),
				"events", ev, "events_per_s", rate(ev-prevEvents, secs),
				"scheduled", sc, "scheduled_per_s", rate(sc-prevScheduled, secs),
				"cache_entries", cs.Len, "cache_hits", cs.Hits, "cache_misses", cs.Misses, "blocked_scheduled", w.nBlocked.Load()}
			w.log.Info("strategy worker stats", append(attrs, w.scope.droppedCounts()...)...)
			prevEvents, prevScheduled = ev, sc
		}
	}
}

func rate(n int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(int64(float64(n)/secs*10)) / 10
}
