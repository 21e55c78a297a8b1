// Package dbworker is the DB worker (docs/architecture.md). It has three roles, which can run in one process
// or apart (Config.Roles):
//
//   - scoring: reads the scoring log and schedules every update_score with Schedule=true into the queue (one
//     row per URL, so a replay overwrites instead of duplicating);
//   - batches: when a spider-feed partition's lag (latest offset − the spiders' committed offset) is below
//     Config.MaxLag (by default: below the size of the last batch it got), takes the partition's next batch
//     from the queue (best scores first, per-host cap, minimum host count) and puts it on that partition, keyed by hostname; the rows are acknowledged (deleted) only
//     after Kafka acknowledged the batch, and rows a cap skipped stay queued (Frontera lost them, #393);
//   - links: reads the spider log and records page metadata (first seen, last fetched, status, error, and the
//     target of a 3xx answer, which the spider reports as a link carrying redirect_times).
//
// Flow control (docs/architecture.md, invariant 4): the batch generator runs at once when the scoring role queued
// something or the links role read fetch outcomes, and otherwise re-checks every Config.PollInterval, so a
// partition that becomes ready gets its batch within that interval (Frontera slept 30 s). Where this process
// reads every outcome (the links role over the whole spider log), each host's share of a batch follows its
// demand (flow.go, Config.Flow): enough requests to keep it busy for one round of the loop, sized by Little's
// law from the measured time between its outcomes, less what it still has at the spider, and a scan of the
// queue that could only come back empty (every host with rows left at its cap) is skipped; elsewhere a host
// gets Config.PerHost per batch (flow.go says why with several DB workers). A partition whose spider is gone stops
// receiving batches (its lag stays; with the flow, the requests it was sent stay unanswered), and its rows stay
// in the queue.
//
// Every consumer commits its offset only after the batch's effects are durable (queue or metadata written),
// so a crash replays; replays are idempotent.
//
// dbworker sits at level L3 and gets its stores and bus injected.
package dbworker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/queue"
)

// The roles of a DB worker.
const (
	RoleScoring = "scoring"
	RoleBatches = "batches"
	RoleLinks   = "links"
)

// Config configures a DB worker.
type Config struct {
	// Roles lists the roles this process runs. Default all three.
	Roles []string `mapstructure:"roles"`
	// BatchSize is the most log messages handled per batch. Default 4,096: a batch costs a few synced writes
	// whatever its size, so a backlog is caught up in large batches; without one a batch is what has arrived.
	BatchSize int `mapstructure:"batch_size"`
	// FeedBatch is the most requests put on a feed partition at once (Frontera's MAX_NEXT_REQUESTS). With
	// PerHost it sizes a batch in hosts × depth: up to FeedBatch/PerHost hosts get PerHost requests each.
	// Default 8,192 (2,048 hosts × 4).
	FeedBatch int `mapstructure:"feed_batch"`
	// MaxLag is the feed lag under which a partition gets a new batch. Default 0: the size of the last batch
	// the partition got, so the spider always holds between one and two batches (PerHost to 2×PerHost
	// requests for each of its busy hosts) whatever the number of hosts, and no host's queue runs dry while
	// the next batch is on its way.
	MaxLag int64 `mapstructure:"max_lag"`
	// PerHost caps the requests of one host in a batch (Frontera's BC_MAX_REQUESTS_PER_HOST): the depth of
	// each host's queue in the spider. Default 4.
	PerHost int `mapstructure:"per_host"`
	// MinHosts keeps a batch from being filled by a few hosts when more are queued (BC_MIN_HOSTS). Default 24.
	MinHosts int `mapstructure:"min_hosts"`
	// Gateways sizes the batches of the feed partitions that URLFrontier gateways own instead of spiders, in a
	// cluster that has both. Empty (the default): every partition gets FeedBatch and PerHost.
	Gateways GatewayBatches `mapstructure:"gateways"`
	// Flow sizes each host's share of a batch by its measured demand instead of PerHost (see flow.go), where
	// this process reads every outcome (the links role over the whole spider log).
	Flow FlowConfig `mapstructure:"flow"`
	// LinksCache is how many fingerprints of recorded links the links role remembers, so that a link found
	// again on another page is not read and written again: its record already holds its first-seen time
	// (metadata.Merge keeps the first), and only a later spelling of the same URL is not stored. 0 records
	// every link. Default 500,000 (about 40 MB; LinksCacheIn); the standalone lowers it to fit its memory limit.
	LinksCache int `mapstructure:"links_cache"`
	// JobID is stamped as meta jid on every feed request, as Frontera's DB worker does: Frontera's spiders carry
	// it back on the spider log and Frontera's workers drop events of another job. Default 0, Frontera's first
	// job id.
	JobID int64 `mapstructure:"job_id"`
	// PollInterval is how often an idle batch generator re-checks the lags. Default 50ms.
	PollInterval time.Duration `mapstructure:"poll_interval"`
	// ShutdownTimeout bounds finishing the current batch after the context ends. Default 30s.
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`
	// BatchTimeout bounds one batch (its queue and store writes, its sends, its commit) while the worker runs;
	// a batch that exceeds it fails the worker, and is replayed by the next one. 0 (the default) sets no bound,
	// so a batch waits out an outage of Kafka or HBase of any length and completes.
	BatchTimeout time.Duration `mapstructure:"batch_timeout"`
	// Partitions are the spider-feed partitions whose batches this process generates (Frontera's --partitions).
	// Empty (the default): the DB workers running the batches role share the feed partitions among themselves
	// through the bus (one owner per partition; a second worker takes a share, survivors take over a dead
	// one's). Given, the process asks for exactly these; a partition another live worker owns is waited for.
	Partitions []int `mapstructure:"partitions"`
	// StatsInterval is how often the stats line is logged. Not a key of this section: the main sets it from the
	// common stats_interval. 0 logs no stats line.
	StatsInterval time.Duration `mapstructure:"-"`
}

// GatewayBatches are the batch sizes of the feed partitions a URLFrontier gateway owns. A gateway holds what
// it is sent (up to its MaxHeld) and its clients keep each queue's politeness, so its partitions take larger
// batches with more URLs of a host than a spider's: with a spider's 4 per host, a partition whose hosts each
// hold more than 4 queued URLs is read whole for every batch (BENCHMARKS.md, URLFrontier service).
type GatewayBatches struct {
	// Partitions are the gateways' feed partitions.
	Partitions []int `mapstructure:"partitions"`
	// PerHost and FeedBatch replace Config.PerHost and Config.FeedBatch for those partitions; 0 keeps
	// Config's. cmd/urlfrontier's doc suggests 64 and 32,768.
	PerHost   int `mapstructure:"per_host"`
	FeedBatch int `mapstructure:"feed_batch"`
}

// GatewayPerHost and GatewayFeedBatch are the batch sizes suggested for a gateway's feed partitions
// (GatewayBatches): what the standalone gives its own gateway's partitions unless db_worker.gateways names
// partitions, and what cmd/urlfrontier's doc asks of a cluster's DB workers.
const (
	GatewayPerHost   = 64
	GatewayFeedBatch = 32768
)

// batchSizes returns partition p's feed batch and per-host cap (Config.Gateways for a gateway's partition).
func (c Config) batchSizes(p int) (feedBatch, perHost int) {
	feedBatch, perHost = c.FeedBatch, c.PerHost
	if slices.Contains(c.Gateways.Partitions, p) {
		if c.Gateways.FeedBatch > 0 {
			feedBatch = c.Gateways.FeedBatch
		}
		if c.Gateways.PerHost > 0 {
			perHost = c.Gateways.PerHost
		}
	}
	return feedBatch, perHost
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{Roles: []string{RoleScoring, RoleBatches, RoleLinks}, BatchSize: 4096, FeedBatch: 8192,
		PerHost: 4, MinHosts: 24, Flow: DefaultFlowConfig(), LinksCache: 500_000, PollInterval: 50 * time.Millisecond, ShutdownTimeout: 30 * time.Second}
}

// Validate reports every invalid value.
func (c Config) Validate() error {
	var errs []error
	if len(c.Roles) == 0 {
		errs = append(errs, errors.New("roles: none"))
	}
	for _, r := range c.Roles {
		if !slices.Contains([]string{RoleScoring, RoleBatches, RoleLinks}, r) {
			errs = append(errs, fmt.Errorf("roles: %q is not scoring, batches or links", r))
		}
	}
	seen := map[int]bool{}
	for _, p := range c.Partitions {
		if p < 0 || seen[p] {
			errs = append(errs, fmt.Errorf("partitions: %d is negative or listed twice", p))
		}
		seen[p] = true
	}
	for k, v := range map[string]int64{"batch_size": int64(c.BatchSize), "feed_batch": int64(c.FeedBatch)} {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s = %d, want > 0", k, v))
		}
	}
	if c.JobID < 0 {
		errs = append(errs, fmt.Errorf("job_id = %d, want >= 0", c.JobID))
	}
	gw := map[int]bool{}
	for _, p := range c.Gateways.Partitions {
		if p < 0 || gw[p] {
			errs = append(errs, fmt.Errorf("gateways.partitions: %d is negative or listed twice", p))
		}
		gw[p] = true
	}
	if c.Gateways.PerHost < 0 || c.Gateways.FeedBatch < 0 {
		errs = append(errs, fmt.Errorf("gateways.per_host = %d, gateways.feed_batch = %d, want >= 0 (0: per_host, feed_batch)",
			c.Gateways.PerHost, c.Gateways.FeedBatch))
	}
	if c.PerHost < 0 || c.MinHosts < 0 || c.MaxLag < 0 || c.LinksCache < 0 {
		errs = append(errs, fmt.Errorf("per_host = %d, min_hosts = %d, max_lag = %d, links_cache = %d, want >= 0",
			c.PerHost, c.MinHosts, c.MaxLag, c.LinksCache))
	}
	if c.PollInterval <= 0 || c.ShutdownTimeout <= 0 {
		errs = append(errs, fmt.Errorf("poll_interval = %v, shutdown_timeout = %v, want > 0", c.PollInterval, c.ShutdownTimeout))
	}
	for _, b := range c.Flow.validate() {
		errs = append(errs, errors.New(b))
	}
	if c.BatchTimeout < 0 {
		errs = append(errs, fmt.Errorf("batch_timeout = %v, want >= 0 (0: no bound)", c.BatchTimeout))
	}
	return errors.Join(errs...)
}

// Deps are what a worker is built from. The caller owns and closes them.
type Deps struct {
	Bus   bus.Bus
	Codec codec.Codec
	Queue queue.Queue    // required by the scoring and batches roles
	Pages metadata.Store // required by the links role
	// Counters, if set, receives the crawl-wide counters the links role keeps (see CounterRow).
	Counters metadata.Domains
	// Control, if set, pauses dispatch and holds blocked hosts (see Control).
	Control Control
	Now     func() time.Time // nil means time.Now
	// Logger and Registerer: nil discards logs and registers no metrics.
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// Worker is one DB worker. Build it with New and call Run once.
type Worker struct {
	cfg   Config
	deps  Deps
	log   *slog.Logger
	m     *metrics
	wake  chan struct{} // scoring → batches: something was queued
	nFeed int
	// feedPart is the spider feed's partitioner, as bus.Partition applies it, looked up once (bus.SpecOf copies
	// the stream's declaration: a tenth of the scoring role's item).
	feedPart func(key []byte, n int) int
	last     map[int]int64 // batch generator only: the size of each partition's last batch (MaxLag 0)
	onIdle   func()        // test hook: called when the batch generator found nothing to do
	flow     *flow         // nil without Config.Flow.Enabled or without both the batches and the links role
	flowOn   atomic.Bool   // the links role reads every spider-log partition, so flow sees every outcome
	stats    stats
}

// New checks the configuration and builds a worker.
func New(cfg Config, deps Deps) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("dbworker: %w", err)
	}
	if deps.Bus == nil || deps.Codec == nil {
		return nil, errors.New("dbworker: Bus and Codec are required")
	}
	if (slices.Contains(cfg.Roles, RoleScoring) || slices.Contains(cfg.Roles, RoleBatches)) && deps.Queue == nil {
		return nil, errors.New("dbworker: the scoring and batches roles need a Queue")
	}
	if slices.Contains(cfg.Roles, RoleLinks) && deps.Pages == nil {
		return nil, errors.New("dbworker: the links role needs a metadata Store")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	nFeed := deps.Bus.Partitions(bus.SpiderFeed)
	for _, p := range cfg.Partitions {
		if p >= nFeed {
			return nil, fmt.Errorf("dbworker: partitions: %d is outside [0, %d) (the spider feed has %d partitions)", p, nFeed, nFeed)
		}
	}
	w := &Worker{cfg: cfg, deps: deps, log: deps.Logger, m: newMetrics(deps.Registerer, cfg.LinksCache),
		wake: make(chan struct{}, 1), nFeed: nFeed, last: map[int]int64{}}
	w.feedPart = func([]byte, int) int { return 0 }
	if sp, ok := bus.SpecOf(bus.SpiderFeed); ok && sp.Partitioner != nil {
		w.feedPart = sp.Partitioner
	}
	if cfg.Flow.Enabled && slices.Contains(cfg.Roles, RoleBatches) && slices.Contains(cfg.Roles, RoleLinks) {
		w.flow = newFlow(cfg.Flow, cfg.PerHost)
		w.flow.budget = flowMaxOutstanding(cfg.FeedBatch)
	}
	return w, nil
}

// Run runs the configured roles until ctx ends (nil) or one fails (its error).
func (w *Worker) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	if w.cfg.StatsInterval > 0 {
		g.Go(func() error { w.statsLoop(ctx); return nil })
	}
	for _, r := range w.cfg.Roles {
		switch r {
		case RoleScoring:
			g.Go(func() error { return w.runScoring(ctx) })
		case RoleBatches:
			g.Go(func() error { return w.runBatches(ctx) })
		case RoleLinks:
			g.Go(func() error { return w.runLinks(ctx) })
		}
	}
	err := g.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// Ownership groups: the DB workers running a role share that role's partitions through these (bus.Owner), so
// that two DB workers never run the same role on the same partition.
const (
	OwnersScoring = bus.GroupDBWorkerScoringLog + "-owners" // scoring-log partitions, for the scoring role
	OwnersLinks   = bus.GroupDBWorkerSpiderLog + "-owners"  // spider-log partitions, for the links role
	OwnersBatches = "dbw-batches-owners"                    // spider-feed partitions, for the batches role
)

// consumeWith runs handle over every batch of the partitions of stream this process owns (see bus.Own), in
// group, decoded with decode (the role's own, for one goroutine), committing after handle succeeds.
func (w *Worker) consumeWith(ctx context.Context, stream bus.Stream, owners, group string, decode func(bus.Message) (frontier.Message, error), handle func(context.Context, []frontier.Message) error) error {
	return bus.Own(ctx, w.deps.Bus, stream, owners, nil, func(ctx context.Context, parts []int) error {
		if stream == bus.SpiderLog && w.flow != nil {
			w.flowOn.Store(len(parts) == w.deps.Bus.Partitions(bus.SpiderLog))
			defer w.flowOn.Store(false)
		}
		in, err := w.deps.Bus.Consumer(ctx, stream, group, parts)
		if err != nil {
			return fmt.Errorf("dbworker: open %s partitions %v: %w", stream, parts, err)
		}
		defer in.Close()
		if err := bus.Consume(ctx, in, w.cfg.BatchSize, w.cfg.ShutdownTimeout, decode, w.bounded(handle)); err != nil {
			return fmt.Errorf("dbworker: %s: %w", stream, err)
		}
		return nil
	})
}

// bounded puts Config.BatchTimeout, if any, on each call of handle.
func (w *Worker) bounded(handle func(context.Context, []frontier.Message) error) func(context.Context, []frontier.Message) error {
	if w.cfg.BatchTimeout <= 0 {
		return handle
	}
	return func(ctx context.Context, events []frontier.Message) error {
		ctx, cancel := context.WithTimeout(ctx, w.cfg.BatchTimeout)
		defer cancel()
		return handle(ctx, events)
	}
}

// linksDecoder returns the links role's decode of spider-log messages, for one goroutine: through one
// codec.MessageDecoder for the role's run (with msgpack, one MsgpackDecoder: the pages' domain maps, the same
// few hosts message after message, are built once and shared), and with a codec that can (codec.SkimDecoder),
// keeping only what handle reads (linksSkim), so the role does not build the domain map of every link, the
// other meta of every page nor its headers (the strategy worker decodes the same message whole).
func (w *Worker) linksDecoder() func(bus.Message) (frontier.Message, error) {
	dec := codec.NewMessageDecoder(w.deps.Codec)
	if d, ok := dec.(codec.SkimDecoder); ok {
		return func(m bus.Message) (frontier.Message, error) { return d.DecodeMessageSkim(m.Value, linksSkim) }
	}
	if d, ok := w.deps.Codec.(codec.LinksMetaDecoder); ok {
		return func(m bus.Message) (frontier.Message, error) { return d.DecodeMessageLinksMeta(m.Value, linkMetaRead) }
	}
	return func(m bus.Message) (frontier.Message, error) { return dec.DecodeMessage(m.Value) }
}

// linksSkim is what the links role reads of a spider-log message: the meta keys of linkMetaRead and
// pageMetaRead and the Content-Type header. It borrows the message's bytes: handle copies out what it keeps
// (URLs, fingerprints, hosts, content types) before it returns, and bus.Consume holds a batch's messages until
// then.
var linksSkim = codec.Skim{LinksMeta: linkMetaRead, Meta: pageMetaRead, Headers: isContentType, Borrow: true}

// linkMetaRead says which meta keys of a links_extracted's page and links runLinks reads (the page's for the
// record of a redirect).
func linkMetaRead(key []byte) bool {
	switch string(key) {
	case frontier.MetaKeyFingerprint, frontier.MetaKeyDepth, "redirect_times":
		return true
	}
	return false
}

// pageMetaRead says which meta keys of the other messages' requests runLinks reads: the record's (fingerprint,
// depth) and the host of an outcome (domain; see outcomeHost and count).
func pageMetaRead(key []byte) bool {
	switch string(key) {
	case frontier.MetaKeyFingerprint, frontier.MetaKeyDepth, frontier.MetaKeyDomain:
		return true
	}
	return false
}

// isContentType says whether a response header is the one runLinks reads (frontier.Headers.Get's match).
func isContentType(name []byte) bool { return bytes.EqualFold(name, []byte("Content-Type")) }

// runScoring moves update_score messages into the queue.
func (w *Worker) runScoring(ctx context.Context) error {
	return w.consumeWith(ctx, bus.ScoringLog, OwnersScoring, bus.GroupDBWorkerScoringLog, w.scoringDecoder(), w.schedule)
}

// scoringDecoder returns the scoring role's decode, for one goroutine: through one codec.MessageDecoder for the
// role's run (with msgpack, the update_scores' domain maps are built once per host and shared; item only reads
// them, and SetMetaScore and SetMetaJobID set other keys).
func (w *Worker) scoringDecoder() func(bus.Message) (frontier.Message, error) {
	dec := codec.NewMessageDecoder(w.deps.Codec)
	if d, ok := dec.(codec.SkimDecoder); ok {
		// schedule keeps nothing of the message's bytes: item encodes the feed request anew and copies out
		// the host and fingerprint, so the decode borrows them (see linksSkim).
		return func(m bus.Message) (frontier.Message, error) {
			return d.DecodeMessageSkim(m.Value, codec.Skim{Borrow: true})
		}
	}
	return func(m bus.Message) (frontier.Message, error) { return dec.DecodeMessage(m.Value) }
}

// schedule queues the update_score messages with Schedule=true of one scoring-log batch.
func (w *Worker) schedule(ctx context.Context, events []frontier.Message) error {
	items := make([]queue.Item, 0, len(events))
	for _, e := range events {
		us, ok := e.(*frontier.UpdateScore)
		if !ok || !us.Schedule {
			continue
		}
		it, err := w.item(us)
		if err != nil {
			w.m.badItems.Inc()
			w.log.Warn("update_score skipped", "url", us.Request.URL, "err", err)
			continue
		}
		items = append(items, it)
	}
	if len(items) == 0 {
		return nil
	}
	if err := fenced(ctx, fmt.Sprintf("schedule %d items", len(items))); err != nil {
		return err
	}
	err := w.deps.Queue.Schedule(ctx, items)
	var se *queue.ScheduleError
	if errors.As(err, &se) {
		for _, ie := range se.Items {
			w.m.badItems.Inc()
			it := items[ie.Index]
			w.log.Warn("queue rejected an item", "host", it.Host, "fingerprint", it.Fingerprint.Hex(), "err", ie.Err)
		}
		err = nil
	}
	if err != nil {
		return fmt.Errorf("dbworker: schedule %d items: %w", len(items), err)
	}
	w.m.scheduled.Add(float64(len(items)))
	w.stats.scheduled.Add(int64(len(items)))
	w.flowTouch(items...)
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return nil
}

// item turns an update_score into a queue item: the feed request is encoded once, here, with its score in meta.
func (w *Worker) item(us *frontier.UpdateScore) (queue.Item, error) {
	r := us.Request
	fp, err := r.MetaFingerprint()
	if err != nil {
		return queue.Item{}, fmt.Errorf("no fingerprint: %w", err)
	}
	host := r.Hostname()
	r.SetMetaScore(us.Score)
	r.SetMetaJobID(w.cfg.JobID)
	v, err := w.deps.Codec.EncodeRequest(r)
	if err != nil {
		return queue.Item{}, err
	}
	nb, _ := r.MetaNotBefore() // a revisit's due time; absent = due now
	return queue.Item{Partition: w.feedPart([]byte(host), w.nFeed), Host: host, Fingerprint: fp, Score: us.Score,
		NotBefore: max(nb, 0), Request: v}, nil
}

// runBatches feeds every ready spider-feed partition this process owns from the queue.
func (w *Worker) runBatches(ctx context.Context) error {
	out, err := bus.OpenProducer(ctx, w.deps.Bus, bus.SpiderFeed) // routed: each item goes to its own queue partition
	if err != nil {
		return fmt.Errorf("dbworker: open spider feed: %w", err)
	}
	defer out.Close()
	var want []int
	if len(w.cfg.Partitions) > 0 {
		want = w.cfg.Partitions
	}
	return bus.Own(ctx, w.deps.Bus, bus.SpiderFeed, OwnersBatches, want, func(ctx context.Context, parts []int) error {
		return w.feed(ctx, out, parts)
	})
}

// feed generates the batches of the owned partitions parts until ctx ends.
func (w *Worker) feed(ctx context.Context, out bus.Producer, parts []int) error {
	tick := time.NewTicker(w.cfg.PollInterval)
	defer tick.Stop()
	for {
		sent, err := w.generate(ctx, out, parts)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if sent > 0 {
			continue
		}
		if w.onIdle != nil {
			w.onIdle()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-w.wake:
		case <-tick.C:
		}
	}
}

// generate sends one batch to every owned partition whose lag is below MaxLag and returns how many requests it
// sent. It checks before each batch that the partitions are still owned (ctx live), so a worker that lost a
// partition to another dispatches nothing more for it.
func (w *Worker) generate(ctx context.Context, out bus.Producer, parts []int) (int, error) {
	if w.paused() {
		return 0, nil
	}
	lags, err := w.deps.Bus.Lag(ctx, bus.SpiderFeed, bus.GroupSpiderFeed)
	if err != nil {
		return 0, fmt.Errorf("dbworker: feed lag: %w", err)
	}
	sent := 0
	for _, p := range parts {
		if ctx.Err() != nil {
			return sent, nil
		}
		lag := lags[p]
		w.m.lag.WithLabelValues(fmt.Sprint(p)).Set(float64(lag))
		w.stats.lag.Store(sumLag(lags))
		now := w.deps.Now()
		if !w.ready(p, lag) || !w.flowDue(p, now) {
			continue
		}
		items, err := w.deps.Queue.Next(ctx, p, now.Unix(), w.limits(p, now))
		w.flowScanned(p, now, items, err == nil)
		if err != nil {
			return sent, fmt.Errorf("dbworker: next batch of partition %d: %w", p, err)
		}
		if items = w.unblocked(items); len(items) == 0 {
			continue
		}
		msgs := make([]bus.Message, len(items))
		for i, it := range items {
			msgs[i] = bus.Message{Key: []byte(it.Host), Value: it.Request, Partition: p}
		}
		// Send, then acknowledge: a crash between the two re-sends the batch (at least once), never loses it.
		// Both wait out an outage (no deadline but BatchTimeout while running; ShutdownTimeout after ctx ends),
		// so a batch is never left sent but unacknowledged by a deadline.
		dctx, cancel := bus.Grace(ctx, w.cfg.ShutdownTimeout)
		if w.cfg.BatchTimeout > 0 {
			var cancelBatch context.CancelFunc
			dctx, cancelBatch = context.WithTimeout(dctx, w.cfg.BatchTimeout)
			defer cancelBatch()
		}
		w.flowSent(now, p, items) // before the spider can report an outcome of them
		err = out.Send(dctx, msgs...)
		if err == nil {
			err = w.deps.Queue.Ack(dctx, items)
		}
		cancel()
		if err != nil {
			return sent, fmt.Errorf("dbworker: batch of %d for partition %d: %w", len(items), p, err)
		}
		w.last[p] = int64(len(items))
		w.m.batches.Inc()
		w.m.sent.Add(float64(len(items)))
		w.stats.batches.Add(1)
		w.stats.sent.Add(int64(len(items)))
		sent += len(items)
	}
	return sent, nil
}

// ready reports whether partition p, at feed lag lag, gets a batch now: below Config.MaxLag or, with MaxLag
// 0, once the spider has consumed more than the size of p's last batch (at once when its lag is 0).
func (w *Worker) ready(p int, lag int64) bool {
	if w.cfg.MaxLag > 0 {
		return lag < w.cfg.MaxLag
	}
	if w.flowActive() {
		return w.flowReady(p, lag) // the hosts' caps bound what the spider holds
	}
	return lag == 0 || lag < w.last[p]
}

// runLinks records page metadata from the spider log.
func (w *Worker) runLinks(ctx context.Context) error {
	l := w.newLinksRole()
	return w.consumeWith(ctx, bus.SpiderLog, OwnersLinks, bus.GroupDBWorkerSpiderLog, l.decode, l.handle)
}

// linksRole is the links role's state between the batches it reads (one goroutine).
type linksRole struct {
	w       *Worker
	seen    *seenSet
	decode1 func(bus.Message) (frontier.Message, error)
	at      []position // where each decoded event of the batch came from, for exact counts (count)
}

func (w *Worker) newLinksRole() *linksRole {
	return &linksRole{w: w, seen: newSeenSet(w.cfg.LinksCache), decode1: w.linksDecoder()}
}

// decode decodes a spider-log message and notes where it came from.
func (l *linksRole) decode(m bus.Message) (frontier.Message, error) {
	v, err := l.decode1(m)
	if err == nil {
		l.at = append(l.at, position{m.Partition, m.Offset})
	}
	return v, err
}

// handle records the page metadata of one spider-log batch.
func (l *linksRole) handle(ctx context.Context, events []frontier.Message) error {
	w, seen := l.w, l.seen
	pos := l.at
	l.at = nil
	w.outcomes(events)
	now := w.deps.Now().Unix()
	pages := make([]metadata.Page, 0, len(events))
	var links [][]byte // fingerprints of the link records of this batch, remembered once they are stored
	add := func(r *frontier.Request, fp frontier.Fingerprint, p metadata.Page) {
		p.Fingerprint, p.URL = fp, r.URL
		if d, err := r.MetaDepth(); err == nil {
			p.Depth = int(d)
		}
		pages = append(pages, p)
	}
	addReq := func(r *frontier.Request, p metadata.Page) {
		if fp, err := r.MetaFingerprint(); err == nil {
			add(r, fp, p)
		}
	}
	for _, e := range events {
		switch e := e.(type) {
		case *frontier.AddSeeds:
			for _, r := range e.Seeds {
				addReq(r, metadata.Page{FirstSeen: now})
			}
		case *frontier.LinksExtracted:
			for _, r := range e.Links {
				_, noDepth := r.MetaDepth()
				// A link with a depth is recorded always (the depth would be merged); one without is not
				// when the seen set holds its fingerprint, which is looked up without being allocated.
				if seen != nil && noDepth != nil && seen.hasMeta(r) {
					w.m.linksSkipped.Inc()
					continue
				}
				fp, err := r.MetaFingerprint()
				if err != nil {
					continue
				}
				if seen != nil && noDepth != nil {
					links = append(links, fp)
				}
				add(r, fp, metadata.Page{FirstSeen: now})
				if isRedirectTarget(r) { // the page answered a 3xx to r (see package spider)
					addReq(e.Request, metadata.Page{FirstSeen: now, RedirectTo: fp})
				}
			}
		case *frontier.PageCrawled:
			if r := e.Response.Request; r != nil {
				ct := string(e.Response.Headers.Get("Content-Type"))
				addReq(r, metadata.Page{FirstSeen: now, LastFetched: now, Status: e.Response.Status, ContentType: ct})
			}
		case *frontier.RequestError:
			addReq(e.Request, metadata.Page{FirstSeen: now, LastFetched: now, Error: e.Error})
		}
	}
	if len(pages) == 0 {
		return nil
	}
	if err := fenced(ctx, fmt.Sprintf("record %d pages", len(pages))); err != nil {
		return err
	}
	if err := w.deps.Pages.Put(ctx, pages); err != nil {
		return fmt.Errorf("dbworker: record %d pages: %w", len(pages), err)
	}
	for _, fp := range links {
		seen.add(fp)
	}
	w.m.pages.Add(float64(len(pages)))
	w.stats.pages.Add(int64(len(pages)))
	return w.count(ctx, events, pos)
}

// isRedirectTarget reports whether a link is the target of its page's 3xx answer: the spider reports it with
// meta redirect_times (Scrapy's key), the length of the chain that led to it.
func isRedirectTarget(l *frontier.Request) bool {
	v, ok := l.Meta.Get("redirect_times")
	n, _ := v.(int64)
	return ok && n > 0
}
