package dbworker

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/queue"
)

// Per-host flow control (issue 21). A fixed cap per host and batch (PerHost) starves the fast hosts and floods
// the slow ones: a host that answers in 1 ms without delay empties its four requests in a few milliseconds and
// waits for the next round, while a host at a 1 s delay gets four more every round and piles them up in the
// spider, whose pending bound then stops it from reading the feed at all. So the batch generator gives each host
// what its queue at the spider lacks to last one round of the loop:
//
//	depth(host) = clamp(ceil(Headroom × Round / interval(host)) + 1, MinDepth, MaxDepth)
//	cap(host)   = depth(host) − outstanding(host)
//
// That is Little's law (requests held = throughput × time they must last) with the host's throughput
// 1/interval: interval is the time between two of the host's fetch outcomes while it had more requests waiting,
// which is its service time, politeness delay, Crawl-delay or back-off, whichever rules it; Round is how long
// the loop takes to refill a host (a poll of the batch generator, the spider's report, the links role's read,
// the feed's delivery): FlowConfig.Round, or the round measured when it is longer (measuredRound says why a
// fixed one starves the fast hosts of a loaded machine). A host answering in 1 ms without delay gets hundreds of
// requests; one at a 1 s delay two or three; a host not measured yet gets PerHost, doubled each time it answered
// all of them before the links role could time a gap between them (slowStart), up to its share of the
// partition's outstanding budget (guessShare). outstanding counts the requests
// sent to the spider whose outcome the spider log has not shown yet.
//
// The measurements are the spider log's own events (page_crawled, request_error), which the links role reads,
// timed when it reads them: no field is added to the messages, so Frontera's spiders and workers interoperate
// unchanged. The same outcomes gate each partition (flowReady): while the flow runs, a partition gets a batch
// while what it was sent and has not answered is below 2 × FeedBatch, and not by its feed lag, because the
// spider's committed offset stops at the oldest request still running while the spider reads and fetches
// past it (package spider, "Flow").
//
// # Several DB workers: the fixed cap
//
// The flow runs only where those events are complete: when this process runs the links role over every
// spider-log partition (the standalone mode, or one DB worker with all roles). With several DB workers it is
// off, on purpose. A host's outcomes and its batches meet in different processes: its outcomes go to the
// spider-log partition of its domain fingerprint (bus/topology.go), read by whichever DB worker's links role
// owns that partition, while its batches come from the worker whose batches role owns its feed partition (crc32
// of the host name). With two workers half the hosts' outcomes are read by the other one; run there, the flow
// would count those hosts' requests outstanding forever, cap them at 0 and starve them until Expire (5 min),
// and a partition's outstanding sum would stop it. Making it work needs every batches role to see the outcomes
// of its own hosts: a second reader of the whole spider log in each worker (a consumer group per process, so
// each worker reads and decodes every outcome of the crawl, N times the links role's decode cost), or a
// partitioning of the spider log by feed partition (a change of the wire contract Frontera's spiders share).
// Neither is done here. The fallback, used whenever this process does not own every spider-log partition (also
// while a single worker waits for the partitions at start): every host gets Config.PerHost requests per batch
// (Frontera's fixed cap, at least MinHosts hosts), and a partition gets its next batch when its feed lag falls
// below the size of its last batch (worker.go, ready). There the spider still reads and fetches past a slow
// request (its per-host queues are decoupled from its commit), but the next batch waits until that request
// ends, so a slow request delays a partition's refill by up to spider.request_timeout; raising
// db_worker.max_lag (a fixed bound on the lag) trades that stall for more requests buffered at the spider.

// FlowConfig sizes the per-host depths (see the sizing rule above).
type FlowConfig struct {
	// Enabled turns flow control on where it can run (see above). Default true.
	Enabled bool `mapstructure:"enabled"`
	// Round is how long a host's requests at the spider must last at least: the loop's refill time on an idle
	// machine. The loop's measured refill time is used when longer, up to 10 × Round. Default 200ms.
	Round time.Duration `mapstructure:"round"`
	// Headroom multiplies the depth, for jitter in the host's answers and the loop. Default 1.5.
	Headroom float64 `mapstructure:"headroom"`
	// MinDepth and MaxDepth bound a host's depth. Default 2 and 512.
	MinDepth int `mapstructure:"min_depth"`
	MaxDepth int `mapstructure:"max_depth"`
	// Expire forgets a host's outstanding requests when none of its outcomes came for this long (a request
	// the spider held back for a blocked host, a spider that died), so that the host is fed again. Default 5m.
	Expire time.Duration `mapstructure:"expire"`
}

// DefaultFlowConfig returns the defaults documented on FlowConfig.
func DefaultFlowConfig() FlowConfig {
	return FlowConfig{Enabled: true, Round: 200 * time.Millisecond, Headroom: 1.5, MinDepth: 2, MaxDepth: 512, Expire: 5 * time.Minute}
}

func (c FlowConfig) validate() []string {
	var bad []string
	if !c.Enabled {
		return nil
	}
	if c.Round <= 0 || c.Expire <= 0 {
		bad = append(bad, "flow.round and flow.expire must be > 0")
	}
	if c.Headroom < 1 || math.IsNaN(c.Headroom) {
		bad = append(bad, "flow.headroom must be >= 1")
	}
	if c.MinDepth < 1 || c.MaxDepth < c.MinDepth {
		bad = append(bad, "flow: want 1 <= min_depth <= max_depth")
	}
	return bad
}

// depth is the sizing rule: how many requests a host whose outcomes come every interval needs at the spider to
// stay busy for round, with headroom, within [lo, hi].
func depth(interval, round time.Duration, headroom float64, lo, hi int) int {
	if interval <= 0 {
		return hi
	}
	n := math.Ceil(headroom*float64(round)/float64(interval)) + 1
	if n > float64(hi) {
		return hi
	}
	return max(int(n), lo)
}

// flowWindow is how many busy gaps a host's interval averages over before older ones count for half.
const flowWindow = 64

// hostFlow is what the flow knows of one host.
type hostFlow struct {
	part        int       // the feed partition the host's requests went to (-1: not known)
	outstanding int       // requests sent whose outcome has not been read
	last        time.Time // the last outcome, or the last send when outstanding went from 0 to more
	busy        bool      // last is a time since which the host had requests at the spider without a pause
	probe       bool      // the requests were sent with nothing outstanding: their first outcome times the round
	gaps        float64   // seconds between outcomes while busy, summed (decayed past flowWindow)
	n           float64   // the gaps summed
	guess       int       // the depth while the interval is not measured (0: the flow's PerHost)
}

// interval is the host's measured time between outcomes, or 0 when not measured yet.
func (h *hostFlow) interval() time.Duration {
	if h.n < 2 {
		return 0
	}
	return time.Duration(h.gaps / h.n * float64(time.Second))
}

// flow is the per-host flow control of one DB worker: the batch generator asks it for caps and tells it what it
// sent; the links role tells it the outcomes. Safe for concurrent use.
type flow struct {
	cfg     FlowConfig
	perHost int // the cap of a host not measured yet
	mu      sync.Mutex
	hosts   map[string]*hostFlow
	partOut map[int]int // outstanding summed per feed partition (hosts whose partition is known)
	swept   time.Time
	// gen counts the events that can give a batch something new: outcomes read (a host has room) and items
	// scheduled (a host has rows). parts is the batch generator's own record per partition (its goroutine only).
	gen   atomic.Int64
	parts map[int]*partFlow
	// round is the loop's measured refill time, smoothed (see measuredRound); 0 until measured.
	round time.Duration
	// budget is what a partition may have outstanding (flowMaxOutstanding; 0: no bound), active how many
	// hosts were active per partition at its last scan: a guessed depth is at most the host's share of the
	// budget (guessShare).
	budget int
	active map[int]int
	// wait is, per partition, what its last scan left (idle). Guarded by mu.
	wait map[int]*partWait
	// due is, per partition, the due times (Unix seconds, ascending, at most flowMaxDue) of the delayed rows
	// scheduled since they were last scanned for (retries, revisits): a partition whose first due time has
	// come is scanned at once (dueNow), not up to flowRescan later. Guarded by mu.
	due map[int][]int64
}

// flowMaxDue bounds the due times remembered per partition; rows due at a time beyond them (a crawl that
// schedules revisits over many distinct seconds) are found by the flowRescan scans as before.
const flowMaxDue = 64

// partWait is what the scans of one partition tell idle.
type partWait struct {
	asked    map[string]int      // the running scan's caps (HostCap's answers)
	hosts    map[string]struct{} // the hosts that took their whole cap in the last scan: rows may be left
	valid    bool                // the last scan went through the whole partition (its batch was not full)
	scanning bool
	fresh    bool // rows were scheduled since the last scan began for a host outside hosts (or during it)
}

// partFlow is when a partition's last Next ran, what gen was then, and whether it came back full.
type partFlow struct {
	at      time.Time
	gen     int64
	full    bool
	scanGen int64 // gen when the scan flowDue allowed began
}

func newFlow(cfg FlowConfig, perHost int) *flow {
	if perHost <= 0 {
		perHost = cfg.MaxDepth
	}
	return &flow{cfg: cfg, perHost: min(max(perHost, cfg.MinDepth), cfg.MaxDepth), hosts: map[string]*hostFlow{},
		partOut: map[int]int{}, parts: map[int]*partFlow{}, active: map[int]int{}, wait: map[int]*partWait{},
		due: map[int][]int64{}}
}

// caps returns the HostCap function of one batch at now.
func (f *flow) caps(now time.Time) func(host string) int { return f.capsFor(now, -1) }

// capsFor returns the HostCap function of partition p's batch at now, which notes its answers for idle (p < 0:
// not noted).
func (f *flow) capsFor(now time.Time, p int) func(host string) int {
	return func(host string) int {
		f.mu.Lock()
		defer f.mu.Unlock()
		c := f.capLocked(now, host)
		if pw := f.wait[p]; pw != nil && pw.scanning {
			pw.asked[host] = c
		}
		return c
	}
}

// capLocked is host's cap now. f.mu is held.
func (f *flow) capLocked(now time.Time, host string) int {
	h := f.hosts[host]
	if h == nil {
		return f.perHost
	}
	if h.outstanding > 0 && now.Sub(h.last) > f.cfg.Expire {
		f.addOut(h, -h.outstanding)
		h.busy = false
	}
	return max(f.depthLocked(h)-h.outstanding, 0)
}

// Skipping the scans that would come back empty (issue 21: 28% of the fast web's scans found every host with
// rows at its cap, each a seek past every host's group). A scan whose batch was not full went through the
// whole partition, so the hosts that took their whole cap in it are the only ones that may have rows left
// (every other host's rows were all taken); until one of them has room again (an outcome read, an expiry) or
// rows are scheduled for another host (or while a scan runs), the next scan would come back empty, and flowDue
// skips it. Rows of the delayed table that become due are not seen by this; flowDue scans their partition when
// their due time comes (flow.dueNow), or, beyond the due times it remembers, at most flowRescan later.

// scanBegin notes that a scan of partition p begins at now (the batch generator's goroutine), and counts the
// partition's active hosts for guessShare.
func (f *flow) scanBegin(p int, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.budget > 0 {
		n := 0
		for _, h := range f.hosts {
			if h.part == p && (h.outstanding > 0 || now.Sub(h.last) < flowRescan) {
				n++
			}
		}
		f.active[p] = n
	}
	pw := f.wait[p]
	if pw == nil {
		pw = &partWait{asked: map[string]int{}}
		f.wait[p] = pw
	}
	clear(pw.asked)
	pw.scanning, pw.fresh = true, false
}

// scanEnd notes the batch of partition p's scan; complete: the scan went through the whole partition.
func (f *flow) scanEnd(p int, items []queue.Item, complete bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pw := f.wait[p]
	if pw == nil || !pw.scanning {
		return
	}
	n := make(map[string]int, len(pw.asked))
	for _, it := range items {
		n[it.Host]++
	}
	hosts := make(map[string]struct{})
	for host, c := range pw.asked {
		if n[host] >= c {
			hosts[host] = struct{}{}
		}
	}
	pw.hosts, pw.valid, pw.scanning = hosts, complete, false
}

// scheduled notes rows scheduled (nil: not known where).
func (f *flow) scheduled(items []queue.Item) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if items == nil {
		for _, pw := range f.wait {
			pw.fresh = true
		}
		return
	}
	for i := range items {
		if nb := items[i].NotBefore; nb > 0 {
			f.addDueLocked(items[i].Partition, nb)
		}
		pw := f.wait[items[i].Partition]
		if pw == nil || pw.fresh {
			continue
		}
		if _, waiting := pw.hosts[items[i].Host]; pw.scanning || !waiting {
			pw.fresh = true
		}
	}
}

// addDueLocked remembers that partition p has a row due at nb (Unix seconds). f.mu is held.
func (f *flow) addDueLocked(p int, nb int64) {
	d := f.due[p]
	i, found := slices.BinarySearch(d, nb)
	if found || i >= flowMaxDue {
		return
	}
	d = slices.Insert(d, i, nb)
	if len(d) > flowMaxDue {
		d = d[:flowMaxDue]
	}
	f.due[p] = d
}

// dueNow reports whether a row of partition p that was scheduled with a due time has become due at now, and
// forgets the due times that have passed: the scan that follows promotes those rows (the queue's Next moves
// every row due at now). The batch generator's goroutine.
func (f *flow) dueNow(p int, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.due[p]
	n := 0
	for n < len(d) && d[n] <= now.Unix() {
		n++
	}
	if n == 0 {
		return false
	}
	f.due[p] = slices.Delete(d, 0, n)
	return true
}

// idle reports whether a scan of partition p now would come back empty: see above.
func (f *flow) idle(p int, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	pw := f.wait[p]
	if pw == nil || !pw.valid || pw.scanning || pw.fresh {
		return false
	}
	for host := range pw.hosts {
		if f.capLocked(now, host) > 0 {
			return false
		}
	}
	return true
}

// depthLocked is h's depth now. f.mu is held.
func (f *flow) depthLocked(h *hostFlow) int {
	if iv := h.interval(); iv > 0 {
		return depth(iv, f.roundLocked(), f.cfg.Headroom, f.cfg.MinDepth, f.cfg.MaxDepth)
	}
	if h.guess > 0 {
		return min(h.guess, f.guessShare(h))
	}
	return f.perHost
}

// guessShare bounds a guessed depth (slowStart): the host's share of its partition's outstanding budget, the
// budget divided among the partition's active hosts at its last scan (those with requests outstanding or an
// outcome in the last flowRescan), at least PerHost. f.mu is held.
//
// Why: the doubling knows nothing of the other hosts. On the fast web (200 hosts answering in 1 ms) every
// host could double to 512 in the first seconds, 102,400 requests wanted against the partition's 16,384, so a
// batch went to the best-scored few hosts, 512 each, and the spider held deep queues of a few hosts while the
// others waited for the partition's bound (the slow start's deeper queues came with peaks of 262-315 MB
// against ~235 before it, BENCHMARKS.md). With the share the first rounds spread the budget over the hosts
// (81 each for 200), a host whose interval gets measured is sized by it up to MaxDepth as before, and a host
// alone in its partition, or among few (a late host once the others are done), still doubles to MaxDepth.
func (f *flow) guessShare(h *hostFlow) int {
	if f.budget <= 0 || h.part < 0 {
		return f.cfg.MaxDepth
	}
	return max(f.budget/max(f.active[h.part], 1), f.perHost)
}

// A host's depth before its interval is measured (the start of a crawl): PerHost, doubled each time the host
// answered everything it was sent and the links role read those outcomes together, so that no gap between
// them could be timed (the interval counts zero gaps as not measured: outcomes timed at their read). Such a
// host answers faster than the loop reads: at PerHost it got four requests a round and waited out the rest of
// each round, for as many rounds as its outcomes kept coming in one read (on a loaded machine, all the first
// seconds of the fast web). A host whose answers take longer than a read gets its interval measured on its
// first requests and is sized by it; the doubling stops there (or at MaxDepth).
func (f *flow) slowStart(h *hostFlow) {
	if h.outstanding == 0 && h.interval() == 0 && h.n > 0 {
		h.guess = min(2*max(h.guess, f.perHost), f.cfg.MaxDepth)
	}
}

// roundFactor bounds the measured round: at most this many times FlowConfig.Round.
const roundFactor = 10

// roundLocked is the round the depths cover: the measured one within [Round, roundFactor × Round]. f.mu is
// held.
func (f *flow) roundLocked() time.Duration {
	return min(max(f.round, f.cfg.Round), roundFactor*f.cfg.Round)
}

// measuredRound folds one sample of the loop's refill time into the smoothed round (a moving average, 1/8
// weight to the sample). f.mu is held.
//
// Why measured: the interval the depths divide by is the time between a host's outcomes while it had
// requests outstanding, and "outstanding" runs until the links role reads the outcome, not until the spider
// fetched it. When the loop takes longer than Headroom × Round to refill a host (a loaded machine: the report,
// the links role's batch, the next scan, the feed), a fast host drains its queue before the refill and its
// outcomes come at the loop's pace, not the host's: the interval measures the loop, the depth computed from
// it is Headroom × Round / (Round_real / depth) + 1, smaller than the depth whenever Round_real > Headroom ×
// Round, and the host settles at two or three requests a round. On the fast web at load 25-35 the hosts
// answering in 1 ms were idle 91-93% of their crawl, 61-87 ms between requests at the median (BENCHMARKS.md,
// "Loop latency on the fast web"). With the round measured, the depth grows by Headroom each round while the
// loop is what limits the host, until the host's own pace does.
//
// The sample is the time from a send to a host with nothing outstanding to the first outcome of it the links
// role reads: nothing was queued ahead of it at the spider, so it is the loop's latency plus one fetch (and
// done counts it only for a host whose measured interval is below half of it).
func (f *flow) measuredRound(sample time.Duration) {
	sample = min(max(sample, 0), roundFactor*f.cfg.Round)
	if f.round == 0 {
		f.round = sample
		return
	}
	f.round += (sample - f.round) / 8
}

// depthOf returns the host's depth now (for tests and the stats).
func (f *flow) depthOf(host string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.hosts[host]; h != nil {
		return f.depthLocked(h)
	}
	return f.perHost
}

// sent records requests put on the feed, per host, partition not known.
func (f *flow) sent(now time.Time, perHost map[string]int) { f.sentTo(now, -1, perHost) }

// sentTo records requests put on feed partition p, per host.
func (f *flow) sentTo(now time.Time, p int, perHost map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for host, n := range perHost {
		h := f.hosts[host]
		if h == nil {
			h = &hostFlow{part: p}
			f.hosts[host] = h
		}
		if h.outstanding == 0 {
			h.last, h.busy = now, false // the time the host waited for these is no measure of it
			h.part, h.probe = p, true
		}
		f.addOut(h, n)
	}
	f.sweep(now)
}

// addOut adds n to h's outstanding and to its partition's sum. f.mu is held.
func (f *flow) addOut(h *hostFlow, n int) {
	h.outstanding += n
	if h.part >= 0 {
		f.partOut[h.part] += n
	}
}

// outstandingIn is the requests sent to feed partition p whose outcome has not been read: what its spider
// holds (queued at its hosts or in flight) plus what waits on the feed.
func (f *flow) outstandingIn(p int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.partOut[p]
}

// done records one outcome of host read at now.
func (f *flow) done(now time.Time, host string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hosts[host]
	if h == nil || h.outstanding == 0 {
		return // not sent by this process (a restart, a seed's robots), or expired: nothing to measure
	}
	if h.probe {
		// Only where the loop, not the host, set the pace: the host could have been fetched twice in the time
		// the loop took (its interval measured, and below half the sample). A host at a politeness delay
		// longer than the loop waits out its delay before this first fetch; that is no measure of the loop.
		if iv, sample := h.interval(), now.Sub(h.last); iv > 0 && 2*iv < sample {
			f.measuredRound(sample)
		}
		h.probe = false
	}
	if h.busy {
		h.gaps += now.Sub(h.last).Seconds()
		h.n++
		if h.n > flowWindow {
			h.gaps, h.n = h.gaps/2, h.n/2
		}
	}
	f.addOut(h, -1)
	h.last = now
	h.busy = h.outstanding > 0
	f.slowStart(h)
}

// sweep forgets, once a minute, the hosts with nothing outstanding for longer than Expire, so the map holds
// the hosts being crawled, not every host ever crawled. f.mu is held.
func (f *flow) sweep(now time.Time) {
	if now.Sub(f.swept) < time.Minute {
		return
	}
	f.swept = now
	for name, h := range f.hosts {
		if h.outstanding == 0 && now.Sub(h.last) > f.cfg.Expire {
			delete(f.hosts, name)
		}
	}
}

// outcomeHost returns the host of a spider-log event that ends a fetch of a feed request (page_crawled,
// request_error), or "".
func outcomeHost(e frontier.Message) string {
	switch e := e.(type) {
	case *frontier.PageCrawled:
		if e.Response != nil && e.Response.Request != nil {
			return e.Response.Request.Hostname()
		}
	case *frontier.RequestError:
		if e.Request != nil {
			return e.Request.Hostname()
		}
	}
	return ""
}

// flowActive reports whether the batch generator sizes hosts by the flow: it is on, and the links role of this
// process reads every spider-log partition.
func (w *Worker) flowActive() bool { return w.flow != nil && w.flowOn.Load() }

// flowMaxOutstanding is how many requests sent to a partition may await their outcomes while the flow runs.
// The per-host caps bound each host; this bounds their sum, so a partition whose spider is gone (outcomes stop)
// stops getting batches.
func flowMaxOutstanding(feedBatch int) int { return 2 * feedBatch }

// flowMaxLag is the feed lag past which a partition gets nothing while the flow runs, whatever its outstanding
// count: the guard for a spider that is gone after its hosts' outstanding requests expired (FlowConfig.Expire).
// It is far above the lag a live spider shows: the committed offset stops at the oldest request still running
// (a slow host's, or one waiting out a long delay), while the spider reads, fetches and reports what follows it
// (up to spider.max_uncommitted, 250,000 by default; 32 × the default FeedBatch is 262,144), so the lag
// overstates the work waiting.
func flowMaxLag(feedBatch int) int64 { return 32 * int64(feedBatch) }

// flowReady reports whether partition p, at feed lag lag, gets a batch while the flow runs: what it was sent
// and has not answered yet is below flowMaxOutstanding, and its lag below flowMaxLag. Why not the lag alone (as
// before): a request that holds the spider's commit for a few seconds (a slow page, a host backing off) made
// the lag of a fast crawl pass the bound while the spider had nothing left to fetch, and every host of the
// partition starved until it finished.
func (w *Worker) flowReady(p int, lag int64) bool {
	return w.flow.outstandingIn(p) < flowMaxOutstanding(w.cfg.FeedBatch) && lag < flowMaxLag(w.cfg.FeedBatch)
}

// limits shapes partition p's next batch: per-host caps from the flow when it runs, else PerHost (the
// partition's: Config.Gateways).
func (w *Worker) limits(p int, now time.Time) queue.Limits {
	max, perHost := w.cfg.batchSizes(p)
	lim := queue.Limits{Max: max, PerHost: perHost, MinHosts: w.cfg.MinHosts}
	if w.flowActive() {
		w.flow.scanBegin(p, now)
		lim.HostCap = w.flow.capsFor(now, p)
	}
	return lim
}

// flowSent tells the flow what a batch sends, per host (also before the links role owns the spider log, so
// that the flow knows what is outstanding once it runs).
func (w *Worker) flowSent(now time.Time, p int, items []queue.Item) {
	if w.flow == nil {
		return
	}
	per := make(map[string]int)
	for _, it := range items {
		per[it.Host]++
	}
	w.flow.sentTo(now, p, per)
}

// outcomes tells the flow the fetch outcomes among the spider-log events the links role read, and wakes the
// batch generator: the hosts they came from have room.
func (w *Worker) outcomes(events []frontier.Message) {
	if w.flow == nil {
		return
	}
	now, n := w.deps.Now(), 0
	for _, e := range events {
		if h := outcomeHost(e); h != "" {
			w.flow.done(now, h)
			n++
		}
	}
	if n > 0 {
		w.flow.gen.Add(1)
	}
	if n > 0 && w.flowActive() {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// flowRescan is how often a partition is scanned while the flow runs even when nothing was read or scheduled
// since its last scan: rows become due (retries, revisits) and outstanding requests expire on their own.
const flowRescan = time.Second

// flowStarvedGap is how often a starved partition (flowStarved) may be scanned when something was read or
// scheduled since its last scan.
const flowStarvedGap = 5 * time.Millisecond

// flowStarved is the outstanding count below which a partition's spider is close to idle: it holds fewer
// requests than a thirty-second of a feed batch (256 at the default FeedBatch). At the start of a crawl, while
// few URLs are known and every host gets PerHost, and at its end, the loop's round is the crawl's pace, and
// half a round waited before each scan was a third of it or more; a spider that holds thousands (a slow web,
// the steady state) is scanned at the half-round pace as before.
func flowStarved(feedBatch int) int { return max(feedBatch/32, 1) }

// flowDue reports whether partition p's next batch is worth a scan now. While the flow runs the lag no longer
// gates the scans (see ready), so without this every poll and every wake would scan the queue past every
// host that has no room (a scan of 1,000 hosts at a 1 s delay, 20 times a second, cost a fifth of the crawl's
// CPU): a partition is scanned again right away when its last batch came back full; else at most once every
// half round (Flow.Round/2, or half a poll interval if longer: every depth covers a round and a half), and only
// if an outcome was read or an item scheduled since its last scan (or flowRescan passed). A starved partition
// (flowStarved) is scanned on such an event without the half round's wait (flowStarvedGap apart). A partition
// one of whose delayed rows (a retry after its back-off, a revisit) has come due since it was scheduled is
// scanned at once (flow.dueNow): no event announces such a row, and at the end of a crawl, when nothing else is
// read or scheduled, waiting for flowRescan added up to a second to every retry.
func (w *Worker) flowDue(p int, now time.Time) bool {
	if w.flow == nil {
		return true
	}
	pf := w.flow.parts[p]
	if pf == nil {
		pf = &partFlow{}
		w.flow.parts[p] = pf
	}
	g := w.flow.gen.Load()
	pf.scanGen = g // an event during the scan makes the next one due
	if !w.flowActive() || pf.full || w.flow.dueNow(p, now) {
		return true
	}
	since := now.Sub(pf.at)
	var due bool
	if since < max(w.cfg.PollInterval, w.cfg.Flow.Round)/2 {
		due = g != pf.gen && since >= flowStarvedGap && w.flow.outstandingIn(p) < flowStarved(w.cfg.FeedBatch)
	} else {
		due = g != pf.gen || since >= flowRescan
	}
	if due && since < flowRescan && w.flow.idle(p, now) {
		w.stats.skippedScans.Add(1)
		return false
	}
	return due
}

// flowScanned records a scan of partition p that returned items (the batch generator's goroutine only); ok:
// without error.
func (w *Worker) flowScanned(p int, now time.Time, items []queue.Item, ok bool) {
	max, _ := w.cfg.batchSizes(p)
	full := len(items) >= max
	w.flowNexted(p, now, full)
	if w.flow != nil {
		w.flow.scanEnd(p, items, ok && !full)
	}
	w.stats.scans.Add(1)
	if len(items) == 0 {
		w.stats.emptyScans.Add(1)
	}
}

// flowNexted records a scan of partition p (the batch generator's goroutine only).
func (w *Worker) flowNexted(p int, now time.Time, full bool) {
	if w.flow == nil {
		return
	}
	if pf := w.flow.parts[p]; pf != nil {
		pf.at, pf.gen, pf.full = now, pf.scanGen, full
	}
}

// flowTouch notes that items were scheduled (none given: not known which).
func (w *Worker) flowTouch(items ...queue.Item) {
	if w.flow != nil {
		w.flow.scheduled(items)
		w.flow.gen.Add(1)
	}
}
