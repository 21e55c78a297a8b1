package spider

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/identity"
	"github.com/frontiercrawl/frontier/spider/links"
	"github.com/frontiercrawl/frontier/spider/robots"
)

// Codec is the part of a wire codec (package codec) the spider uses. codec.Msgpack and codec.JSON satisfy it.
type Codec interface {
	EncodeMessage(frontier.Message) ([]byte, error)
	DecodeRequest([]byte) (*frontier.Request, error)
}

// Deps are the spider's collaborators; the caller builds them and closes Feed and Log after Run returns.
type Deps struct {
	// Feed reads the spider's partition of the spider feed (exactly one partition: the commit watermark
	// follows that partition's offsets). Required.
	Feed bus.Consumer
	// Log writes to the spider log. It must partition by message key with the fingerprint partitioner
	// (partition.Fingerprint): the spider keys every message by the hex domain fingerprint of its host, as
	// Frontera does. Required.
	Log bus.Producer
	// Codec encodes spider-log messages and decodes feed requests. Required.
	Codec Codec
	// Identity fingerprints URLs and describes hosts; nil means SimpleIdentity.
	Identity Identity
	// Handler is called for every fetched response; nil means none.
	Handler ResponseHandler
	// Partition is the spider-feed partition this spider owns (for logs and stats).
	Partition int
	// Seeds is the path of a seed file to inject before crawling (--seeds), or "".
	Seeds string
	// Logger receives the spider's logs and its stats line; nil discards them.
	Logger *slog.Logger
	// Registerer receives the metrics; nil registers nothing.
	Registerer prometheus.Registerer
	// DialContext replaces the network dialer (tests use the synthetic web's); nil dials for real.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Resolver resolves host names for the politeness per IP (Config.Politeness, politeness.go); nil uses the
	// system's resolver, unless DialContext or Transport is set (then politeness is per host name).
	Resolver func(ctx context.Context, network, host string) ([]netip.Addr, error)
	// TLSConfig is the client TLS configuration; nil means Go's defaults.
	TLSConfig *tls.Config
	// Hold, if set, keeps the requests of blocked hosts from being fetched (see Holder).
	Hold Holder
	// Transport replaces the whole HTTP transport (DialContext and TLSConfig are then unused); nil builds one
	// from the Config.
	Transport http.RoundTripper
	// BodyBudget, if set, is the budget of response-body bytes in memory this spider shares with the other
	// spiders of its process (the standalone's); Config.BodyBudgetBytes is then unused. nil: a budget of the
	// spider's own, Config.BodyBudgetBytes (or DefaultBodyBudgetBytes). A spider registers the budget's
	// metrics with its Registerer, so only one of the spiders sharing it may have one.
	BodyBudget *BodyBudget
}

// Spider fetches the requests of one spider-feed partition. Build it with New and call Run once.
type Spider struct {
	cfg       Config
	deps      Deps
	now       func() time.Time // the clock of a link's discovery time (time.Now; tests fix it)
	log       *slog.Logger
	m         *metrics
	id        Identity
	agent     string // the User-Agent's product token, for robots.txt
	fetcher   *fetcher
	robotsF   *fetcher
	robots    *robotsCache
	tracker   *tracker
	reports   chan *outcome
	runners   sync.WaitGroup
	hostsMu   sync.Mutex
	hosts     map[string]*host
	inflight  chan struct{}
	ctx       context.Context       // Run's context: fetches stop when it ends
	transport *http.Transport       // the transport New built (nil when Deps.Transport was given); Run closes its idle connections
	domains   *identity.DomainCache // links' domain meta by scheme and host (reportPage)

	// journal of reported feed offsets (nil unless the spider log is durable, see DurableProducer)
	journal       *journal
	lastCommitted int64 // the last feed offset committed (-1: none known); feed goroutine only
	// offsets reported by the previous run (see feedState); used by the feed goroutine only
	skip        map[int64]bool
	skipAfter   int64
	skipChecked bool

	// counters for the stats line
	nPages, nBytes, nErrors, nLinks atomic.Int64
	nDuplicates                     atomic.Int64 // feed copies dropped because the same attempt was running
	errMu                           sync.Mutex
	errByName                       map[string]int64

	// politeness per IP address (politeness.go); its booking map is guarded by hostsMu
	perIP ipPoliteness
}

// host is the politeness state of one host name. Its fields are guarded by Spider.hostsMu.
type host struct {
	name    string
	queue   []*item
	runners int
	next    time.Time // earliest start of the next request to the host
	fails   int       // transient failures in a row (see Config.HostFailures)
}

// push appends it to h's queue. Spider.hostsMu is held.
func (h *host) push(it *item) { h.queue = append(h.queue, it) }

// pop takes the first request of h's queue, which is not empty. Spider.hostsMu is held.
func (h *host) pop() *item {
	it := h.queue[0]
	h.queue[0] = nil
	h.queue = h.queue[1:]
	return it
}

// item is one feed request on its way through the spider.
type item struct {
	entry *entry
	req   *frontier.Request
	u     *url.URL
}

// New checks cfg and deps and returns a spider.
func New(cfg Config, deps Deps) (*Spider, error) {
	var errs []error
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	if deps.Feed == nil {
		errs = append(errs, errors.New("spider: Deps.Feed is nil"))
	}
	if deps.Log == nil {
		errs = append(errs, errors.New("spider: Deps.Log is nil"))
	}
	if deps.Codec == nil {
		errs = append(errs, errors.New("spider: Deps.Codec is nil"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	s := &Spider{
		cfg:       cfg,
		deps:      deps,
		log:       deps.Logger,
		m:         newMetrics(deps.Registerer),
		id:        deps.Identity,
		agent:     robots.ProductToken(cfg.UserAgent), // lower-case: the robots calls do not lower it again
		tracker:   newTrackerBounded(cfg.MaxPending, cfg.MaxUncommitted),
		reports:   make(chan *outcome, 2*cfg.MaxInFlight),
		hosts:     make(map[string]*host),
		inflight:  make(chan struct{}, cfg.MaxInFlight),
		errByName: make(map[string]int64),
		skipAfter: -1, lastCommitted: -1,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.id == nil {
		s.id = SimpleIdentity{}
	}
	s.domains = identity.NewDomainCache(s.id.Domain, maxCachedDomains)
	s.now = time.Now
	rt := deps.Transport
	if rt == nil {
		s.transport = newTransport(cfg, deps)
		rt = s.transport
	}
	s.fetcher = newFetcher(cfg, rt, false)
	budget := deps.BodyBudget
	if budget == nil {
		budget = NewBodyBudget(cfg.BodyBudgetBytes)
	}
	s.fetcher.budget = budget.b
	s.fetcher.spillDir = spillDir(cfg.StateDir)
	s.fetcher.streamLarge = bodiesUnread(deps.Handler, cfg)
	registerBudgetMetrics(deps.Registerer, s.fetcher.budget)
	rcfg := cfg
	rcfg.MaxBodyBytes, rcfg.MaxRedirects = robotsMaxBytes, 5 // RFC 9309: follow at least five redirects
	s.robotsF = newFetcher(rcfg, rt, true)
	s.robots = newRobotsCache(cfg.RobotsCacheSize)
	return s, nil
}

// spillDir is where large bodies are spilled: StateDir/spill when it can be created, else the system's
// temporary directory. Spill files are unlinked as soon as they are created, so nothing is left behind.
func spillDir(stateDir string) string {
	if stateDir != "" {
		d := filepath.Join(stateDir, "spill")
		if err := os.MkdirAll(d, 0o755); err == nil {
			return d
		}
	}
	return os.TempDir()
}

// Run builds a spider with New and runs it.
func Run(ctx context.Context, cfg Config, deps Deps) error {
	s, err := New(cfg, deps)
	if err != nil {
		return err
	}
	return s.Run(ctx)
}

// Run injects the seeds (if Deps.Seeds is set), then fetches the feed until ctx ends. On cancellation it
// stops fetching, abandons queued and in-flight requests (they are not reported, so they are fetched again
// after a restart), reports what has finished, commits the feed offset up to the last reported request, and
// returns nil. It returns an error only for a failure that stops the spider (seeds that cannot be read or
// published, a closed feed).
func (s *Spider) Run(ctx context.Context) error {
	s.ctx = ctx
	if s.deps.Seeds != "" {
		if err := s.InjectSeeds(ctx, s.deps.Seeds); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	s.loadFeedState()
	if s.durableLog() && s.cfg.StateDir != "" {
		s.loadJournal()
		if err := s.openJournal(); err != nil {
			s.log.Warn("spider journal not written; a crash fetches again what was reported since the last commit", "err", err)
		}
		defer s.closeJournal()
	}
	repCtx, repCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer repCancel()
	repDone := make(chan struct{})
	go func() {
		defer close(repDone)
		s.reporter(repCtx)
	}()
	statsDone := make(chan struct{})
	statsCtx, statsCancel := context.WithCancel(ctx)
	go func() {
		defer close(statsDone)
		s.statsLoop(statsCtx)
	}()

	runErr := s.feedLoop(ctx)

	// Shutdown (drain, flush, commit, then return nil): fetching has stopped; wait for the runners (their contexts are cancelled), then
	// let the reporter finish what is done, then commit.
	statsCancel()
	<-statsDone
	s.runners.Wait()
	close(s.reports)
	stop := time.AfterFunc(s.cfg.ShutdownTimeout, repCancel)
	<-repDone
	stop.Stop()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := s.commit(cctx); err != nil {
		runErr = errors.Join(runErr, err)
	} else if s.journal != nil {
		if err := s.compactJournal(s.committedOffset()); err != nil {
			s.log.Warn("spider journal not saved", "err", err)
		}
	} else if err := s.saveFeedState(); err != nil {
		s.log.Warn("spider state not saved", "err", err)
	}
	s.logStats(0)
	if s.transport != nil {
		s.transport.CloseIdleConnections()
	}
	return runErr
}

// feedLoop reads the feed and hands requests to the hosts until ctx ends, committing as work completes.
func (s *Spider) feedLoop(ctx context.Context) error {
	lastCommit := time.Now()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		free := s.tracker.free()
		if free > 0 {
			n := min(free, s.cfg.FetchBatch)
			// Wait for the feed no longer than until the next commit is due: the DB worker sends the next batch
			// only once the committed offset shows the spider has room, so a commit held back by an idle feed
			// would stall the whole loop (it did, for a second per round, at CommitInterval 1s).
			wait := max(time.Millisecond, s.cfg.CommitInterval-time.Since(lastCommit))
			fctx, cancel := context.WithTimeout(ctx, wait)
			msgs, err := s.deps.Feed.Fetch(fctx, n)
			cancel()
			for _, msg := range msgs {
				s.accept(ctx, msg)
			}
			if len(msgs) > 0 {
				s.m.pending.Set(float64(s.tracker.len()))
				s.m.uncommitted.Set(float64(s.tracker.tracked()))
			}
			if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				if errors.Is(err, bus.ErrClosed) || errors.Is(err, bus.ErrOffsetLost) { // retrying cannot fix these
					return fmt.Errorf("spider: feed: %w", err)
				}
				s.log.Warn("feed fetch", "err", err, "retry_in", backoff)
				if !sleepCtx(ctx, backoff) {
					break
				}
				backoff = min(2*backoff, 10*time.Second)
			} else {
				backoff = 100 * time.Millisecond
			}
		} else {
			// Full: wait for a request to be reported (MaxPending) or for the watermark to move (MaxUncommitted).
			select {
			case <-ctx.Done():
			case <-s.tracker.signal:
			case <-time.After(max(time.Millisecond, s.cfg.CommitInterval-time.Since(lastCommit))):
			}
		}
		if time.Since(lastCommit) >= s.cfg.CommitInterval {
			if err := s.commit(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("feed commit", "err", err)
			}
			s.sweepHosts()
			lastCommit = time.Now()
		}
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// commit commits the feed up to the last request whose outcome is reported.
func (s *Spider) commit(ctx context.Context) error {
	msg, ok := s.tracker.toCommit()
	if !ok {
		return nil
	}
	if f, ok := s.deps.Handler.(Flusher); ok {
		// What the handler stored (e.g. WARC records) must be durable before the offset moves past it.
		if err := f.Flush(); err != nil {
			return fmt.Errorf("spider: flush response handler before commit: %w", err)
		}
	}
	if err := s.deps.Feed.Commit(ctx, []bus.Message{msg}); err != nil {
		return fmt.Errorf("spider: commit feed offset %d: %w", msg.Offset, err)
	}
	s.tracker.committed(msg)
	s.lastCommitted = msg.Offset
	s.m.committed.Set(float64(msg.Offset))
	if j := s.journal; j != nil {
		j.mu.Lock()
		big := j.size > journalCompactBytes
		j.mu.Unlock()
		if big {
			if err := s.compactJournal(msg.Offset); err != nil {
				s.log.Warn("spider journal compaction", "err", err)
			}
		}
	}
	return nil
}

// committedOffset is the last feed offset known committed: this run's last commit, or the watermark of the
// state the previous run left, or -1.
func (s *Spider) committedOffset() int64 {
	return max(s.lastCommitted, s.skipAfter)
}

// accept decodes one feed message and queues it on its host.
func (s *Spider) accept(ctx context.Context, msg bus.Message) {
	e := s.tracker.add(msg)
	skip := s.skipped(msg.Offset)
	req, err := s.deps.Codec.DecodeRequest(msg.Value)
	if err != nil {
		if !skip {
			s.m.decodeErrors.Inc()
			if rep, ok := s.deps.Feed.(bus.MalformedReporter); ok {
				rep.Malformed(msg, err)
			} else {
				s.log.Warn("feed message does not decode; skipped", "offset", msg.Offset, "err", err)
			}
		}
		s.tracker.done(e)
		return
	}
	e.msg.Key, e.msg.Value = nil, nil // decoded: only the offset is needed from here on
	it := &item{entry: e, req: req}
	it.u, err = links.NormalizeString(req.URL) // one parse for a URL in the Standard's form
	if err != nil {
		if skip {
			s.tracker.done(e)
			return
		}
		name := ErrNameInvalidURL
		if errors.Is(err, links.ErrNotHTTP) {
			name = ErrNameNotSupported
		}
		s.reportError(ctx, it, named(name, err))
		return
	}
	s.ensureMeta(req, it.u)
	if skip {
		s.tracker.done(e)
		return
	}
	// A request whose same attempt is still being fetched (taken, outcome not yet on the spider log) comes
	// again only when the DB worker re-sent a batch whose acknowledgement a crash lost: the copy running is
	// reported, so this one is dropped. A retry (another retry_times) or a copy of an attempt already reported
	// is fetched: dropping it would strand the URL, QUEUED with no queue row.
	if fp, err := req.MetaFingerprint(); err == nil && !s.tracker.claim(e, string(fp), attemptOf(req)) {
		s.m.duplicates.Inc()
		s.nDuplicates.Add(1)
		s.tracker.done(e)
		return
	}
	s.enqueue(it)
}

// MetaKeyRetryTimes is the number of times a request was retried (Scrapy's meta['retry_times'], set by the
// strategy worker; see strategyworker.MetaKeyRetryTimes). The spider tells attempts of one URL apart by it.
const MetaKeyRetryTimes = "retry_times"

// attemptOf is the request's attempt number: its retry_times, 0 when absent.
func attemptOf(r *frontier.Request) int64 {
	v, _ := r.Meta.Get(MetaKeyRetryTimes)
	switch v := v.(type) {
	case int64:
		return v
	case uint64:
		return int64(v)
	case int:
		return int64(v)
	case float64:
		return int64(v)
	}
	return 0
}

// ensureMeta adds the fingerprint and domain meta Frontera's middlewares would have added, when absent.
func (s *Spider) ensureMeta(req *frontier.Request, u *url.URL) {
	if _, ok := req.Meta.Get(frontier.MetaKeyFingerprint); !ok {
		if fp, err := s.id.Fingerprint(u.String()); err == nil {
			req.SetMetaFingerprint(fp)
		}
	}
	if d, err := req.MetaDomain(); err != nil || d.Fingerprint == "" {
		req.SetMetaDomain(s.id.Domain(u))
	}
}

// hostLocked returns the host named name, creating it. s.hostsMu must be held.
func (s *Spider) hostLocked(name string) *host {
	h := s.hosts[name]
	if h == nil {
		h = &host{name: name}
		s.hosts[name] = h
	}
	return h
}

func (s *Spider) enqueue(it *item) {
	s.hostsMu.Lock()
	defer s.hostsMu.Unlock()
	h := s.hostLocked(it.u.Hostname())
	h.push(it)
	if h.runners < s.cfg.ConnsPerHost && h.runners < len(h.queue) {
		h.runners++
		s.runners.Add(1)
		go s.runHost(h)
	}
}

// sweepHosts forgets idle hosts whose delay has passed (the robots cache keeps what matters about them).
func (s *Spider) sweepHosts() {
	now := time.Now()
	s.hostsMu.Lock()
	for name, h := range s.hosts {
		if h.runners == 0 && len(h.queue) == 0 && now.After(h.next) {
			delete(s.hosts, name)
		}
	}
	n := len(s.hosts)
	s.hostsMu.Unlock()
	s.m.hosts.Set(float64(n))
}

// runHost works through h's queue, one request at a time; ConnsPerHost runners may share a host.
func (s *Spider) runHost(h *host) {
	defer s.runners.Done()
	for {
		s.hostsMu.Lock()
		if len(h.queue) == 0 || s.ctx.Err() != nil {
			h.runners--
			s.hostsMu.Unlock()
			return
		}
		it := h.pop()
		s.hostsMu.Unlock()
		s.process(s.ctx, h, it)
	}
}
