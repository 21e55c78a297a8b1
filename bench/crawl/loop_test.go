package crawl

import (
	"context"
	"fmt"
	"math"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/crawlstatus"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// loopStats is what the web's servers saw of a crawler's loop (issue 21, item 1: do the fetchers wait for the
// loop?), from the request log: how many requests came each second and to how many hosts, and how long each
// host stayed idle between the end of one answer and the start of its next request. At delay 0 that gap is
// the crawler's turnaround alone when the host's next URL was waiting at the fetcher, and the loop's round
// trip (report, URL-seen test, queue, batch, feed) when it was not; at a delay it includes the delay.
type loopStats struct {
	Seconds   int              `json:"seconds"`    // seconds from the first request to the last
	ReqPerSec [3]int           `json:"req_per_s"`  // requests started per second: p10, p50, p90 over the seconds
	HostsBusy [3]int           `json:"hosts_busy"` // hosts that got a request that second: p10, p50, p90
	Gap       [3]time.Duration `json:"gap"`        // a host's idle time before its next request: p50, p90, p99
	// GapShare is the idle gaps summed over every host's span (its first request to its last answer): the
	// share of a host's crawl it waited for its next request. LongGaps counts the gaps of 50 ms or more.
	GapShare float64 `json:"gap_share"`
	LongGaps int     `json:"long_gaps"`
	// Timeline is "requests/hosts" for each second, for the log.
	Timeline string `json:"timeline"`
	// Long counts the requests whose answer took 100 ms or more (the large pages, streamed while the crawler
	// parses them: its host gets nothing else meanwhile); LongEnd is when they ended, p50/p90/max, from the
	// first request. A ramp whose hosts all wait on such a request shows as LongEnd near the ramp's end.
	Long    int              `json:"long"`
	LongEnd [3]time.Duration `json:"long_end"`
	// Retries are the requests of a target that had answered 5xx before (the web's fail-once pages tried
	// again); RetryWait is the wait from the failed answer's end to the retry's start, p50/p90/max.
	Retries   int              `json:"retries"`
	RetryWait [3]time.Duration `json:"retry_wait"`
	// The tail is what comes after the last busy second (one with at least a tenth of the median requests
	// per second): TailSeconds from its end to the last request, TailRequests started in it, of which
	// TailRetries are retries and TailSlow took 100 ms or more to answer.
	TailSeconds  float64 `json:"tail_s"`
	TailRequests int     `json:"tail_requests"`
	TailRetries  int     `json:"tail_retries"`
	TailSlow     int     `json:"tail_slow"`
}

// measureLoop computes loopStats over a request log (in start order, as web.Site.Requests returns it).
func measureLoop(reqs []web.Request) loopStats {
	var ls loopStats
	if len(reqs) == 0 {
		return ls
	}
	t0 := reqs[0].Start
	last := reqs[len(reqs)-1].Start
	ls.Seconds = int(last.Sub(t0)/time.Second) + 1
	perSec := make([]int, ls.Seconds)
	hostsSec := make([]map[string]bool, ls.Seconds)
	byHost := map[string][]web.Request{}
	for _, r := range reqs {
		s := int(r.Start.Sub(t0) / time.Second)
		perSec[s]++
		if hostsSec[s] == nil {
			hostsSec[s] = map[string]bool{}
		}
		hostsSec[s][r.Host] = true
		byHost[r.Host] = append(byHost[r.Host], r)
	}
	hosts := make([]int, ls.Seconds)
	var tl strings.Builder
	for s := range perSec {
		hosts[s] = len(hostsSec[s])
		fmt.Fprintf(&tl, " %d/%d", perSec[s], hosts[s])
	}
	ls.Timeline = strings.TrimSpace(tl.String())
	q := func(v []int, f float64) int { return v[rank(len(v), f)] }
	rs, hs := slices.Clone(perSec), slices.Clone(hosts)
	slices.Sort(rs)
	slices.Sort(hs)
	ls.ReqPerSec = [3]int{q(rs, 0.1), q(rs, 0.5), q(rs, 0.9)}
	ls.HostsBusy = [3]int{q(hs, 0.1), q(hs, 0.5), q(hs, 0.9)}
	var longEnd []time.Duration
	for _, r := range reqs {
		if !r.End.IsZero() && r.End.Sub(r.Start) >= 100*time.Millisecond {
			longEnd = append(longEnd, r.End.Sub(t0))
		}
	}
	if ls.Long = len(longEnd); ls.Long > 0 {
		slices.Sort(longEnd)
		ls.LongEnd = [3]time.Duration{longEnd[rank(len(longEnd), 0.5)], longEnd[rank(len(longEnd), 0.9)], longEnd[len(longEnd)-1]}
	}
	measureTail(&ls, reqs, perSec)
	var gaps []time.Duration
	var idle, span time.Duration
	for _, rs := range byHost {
		var end time.Time // the latest answer's end so far
		for i, r := range rs {
			if i > 0 && !end.IsZero() && r.Start.After(end) {
				g := r.Start.Sub(end)
				gaps = append(gaps, g)
				idle += g
				if g >= 50*time.Millisecond {
					ls.LongGaps++
				}
			}
			if r.End.After(end) {
				end = r.End
			}
		}
		if !end.IsZero() {
			span += end.Sub(rs[0].Start)
		}
	}
	if len(gaps) > 0 {
		slices.Sort(gaps)
		for i, f := range []float64{0.5, 0.9, 0.99} {
			ls.Gap[i] = gaps[rank(len(gaps), f)]
		}
	}
	if span > 0 {
		ls.GapShare = idle.Seconds() / span.Seconds()
	}
	return ls
}

// measureTail fills the retry and tail figures of ls from the request log and its requests per second.
func measureTail(ls *loopStats, reqs []web.Request, perSec []int) {
	t0 := reqs[0].Start
	busy := max(ls.ReqPerSec[1]/10, 1)
	lastBusy := -1
	for s, n := range perSec {
		if n >= busy {
			lastBusy = s
		}
	}
	tailFrom := t0.Add(time.Duration(lastBusy+1) * time.Second)
	if last := reqs[len(reqs)-1].Start; last.After(tailFrom) {
		ls.TailSeconds = last.Sub(tailFrom).Seconds()
	}
	failed := map[string]time.Time{} // host + target → when its 5xx answer ended
	var waits []time.Duration
	for _, r := range reqs {
		key := r.Host + " " + r.Target
		end, retry := failed[key]
		if retry {
			ls.Retries++
			waits = append(waits, r.Start.Sub(end))
			delete(failed, key)
		}
		if r.Status >= 500 && !r.End.IsZero() {
			failed[key] = r.End
		}
		if r.Start.Before(tailFrom) {
			continue
		}
		ls.TailRequests++
		if retry {
			ls.TailRetries++
		}
		if !r.End.IsZero() && r.End.Sub(r.Start) >= 100*time.Millisecond {
			ls.TailSlow++
		}
	}
	if len(waits) > 0 {
		slices.Sort(waits)
		ls.RetryWait = [3]time.Duration{waits[rank(len(waits), 0.5)], waits[rank(len(waits), 0.9)], waits[len(waits)-1]}
	}
}

// rank is the index of quantile f among n sorted values (nearest rank).
func rank(n int, f float64) int { return max(int(math.Ceil(f*float64(n)))-1, 0) }

// String is the summary for the test log (the timeline apart).
func (ls loopStats) String() string {
	r := func(d time.Duration) string { return d.Round(10 * time.Microsecond).String() }
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	return fmt.Sprintf("%d s; requests/s p10/p50/p90 %d/%d/%d; hosts busy p10/p50/p90 %d/%d/%d; a host's idle gap p50/p90/p99 %s/%s/%s, %.0f%% of its span, %d gaps ≥ 50 ms; %d answers took ≥ 100 ms, ended by p50/p90/max %s/%s/%s; %d retries of 5xx answers, waited p50/p90/max %s/%s/%s; tail after the last busy second %.2f s: %d requests, %d retries, %d slow",
		ls.Seconds, ls.ReqPerSec[0], ls.ReqPerSec[1], ls.ReqPerSec[2], ls.HostsBusy[0], ls.HostsBusy[1], ls.HostsBusy[2],
		r(ls.Gap[0]), r(ls.Gap[1]), r(ls.Gap[2]), 100*ls.GapShare, ls.LongGaps, ls.Long, ms(ls.LongEnd[0]), ms(ls.LongEnd[1]), ms(ls.LongEnd[2]),
		ls.Retries, ms(ls.RetryWait[0]), ms(ls.RetryWait[1]), ms(ls.RetryWait[2]), ls.TailSeconds, ls.TailRequests, ls.TailRetries, ls.TailSlow)
}

// childLoop samples, in the Frontier child, what its own metrics say of the loop: once a second the first
// spider's requests open (frontier_spider_pending: queued at its hosts or in flight) and the DB worker's batches
// and requests put on the feed that second; at the end the first spider's time from a link's discovery to
// its fetch (frontier_spider_discovery_to_fetch_seconds).
type childLoop struct {
	reg  *prometheus.Registry
	mu   sync.Mutex
	tl   strings.Builder
	prev [2]float64
	// queued and feed are the crawl's queue rows and spider-feed lag at its last status (Deps.Progress, about
	// once a second): URLs known but not sent, and sent but not reported.
	queued, feed int64
}

// progress takes the crawl's status (standalone.Deps.Progress).
func (c *childLoop) progress(s crawlstatus.Status) {
	c.mu.Lock()
	c.queued, c.feed = s.Totals.Queued, s.Totals.InFlight
	c.mu.Unlock()
}

func newChildLoop() *childLoop { return &childLoop{reg: prometheus.NewRegistry()} }

// metrics gathers the child's metrics by family name.
func (c *childLoop) metrics() map[string]*dto.MetricFamily {
	fams, _ := c.reg.Gather()
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// value is the first metric's value of a counter or gauge family (0 if absent).
func value(f *dto.MetricFamily) float64 {
	if f == nil || len(f.Metric) == 0 {
		return 0
	}
	m := f.Metric[0]
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return 0
}

// run samples every second until ctx ends.
func (c *childLoop) run(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m := c.metrics()
			b, s := value(m["frontier_dbworker_batches_total"]), value(m["frontier_dbworker_feed_requests_total"])
			c.mu.Lock()
			fmt.Fprintf(&c.tl, " %.0f/%.0f/%.0f/%d/%d", value(m["frontier_spider_pending"]), b-c.prev[0], s-c.prev[1], c.queued, c.feed)
			c.prev = [2]float64{b, s}
			c.mu.Unlock()
		}
	}
}

// summary is the timeline and the discovery-to-fetch quantiles (upper bucket bounds).
func (c *childLoop) summary() string {
	m := c.metrics()
	var q [3]float64
	if f := m["frontier_spider_discovery_to_fetch_seconds"]; f != nil && len(f.Metric) > 0 && f.Metric[0].Histogram != nil {
		h := f.Metric[0].Histogram
		n := float64(h.GetSampleCount())
		for i, p := range []float64{0.5, 0.9, 0.99} {
			for _, b := range h.Bucket {
				if float64(b.GetCumulativeCount()) >= p*n {
					q[i] = b.GetUpperBound()
					break
				}
			}
		}
	}
	sl := schedLatency()
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("goroutines' wait to run p50/p90/p99 ≤ %.3g/%.3g/%.3g ms; spider 0's discovery to fetch p50/p90/p99 ≤ %.3g/%.3g/%.3g s; batches %.0f; per second spider 0's open requests/batches/requests sent/queued/feed lag: %s",
		sl[0]*1e3, sl[1]*1e3, sl[2]*1e3, q[0], q[1], q[2], value(m["frontier_dbworker_batches_total"]), strings.TrimSpace(c.tl.String()))
}

// schedLatency is the p50/p90/p99 (bucket upper bounds, seconds) of the time the process's goroutines waited
// to run once runnable (runtime/metrics /sched/latencies:seconds): on a CPU-starved machine, the wait of a
// host's runner between an answer and its next request.
func schedLatency() (q [3]float64) {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return q
	}
	h := s[0].Value.Float64Histogram()
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	for i, f := range []float64{0.5, 0.9, 0.99} {
		var cum uint64
		for j, c := range h.Counts {
			cum += c
			if float64(cum) >= f*float64(n) {
				q[i] = h.Buckets[j+1]
				break
			}
		}
	}
	return q
}

// TestMeasureLoop: requests per second, hosts busy, and a host's idle gaps from its answer's end to its next
// request.
func TestMeasureLoop(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	reqs := []web.Request{
		{Host: "a", Start: at(0), End: at(10)},
		{Host: "c", Start: at(1), End: at(300)}, // long, ends at 300 ms
		{Host: "b", Start: at(5), End: at(6)},
		{Host: "a", Start: at(110), End: at(120)},   // 100 ms idle
		{Host: "a", Start: at(1120), End: at(1130)}, // 1 s idle, second 1
	}
	ls := measureLoop(reqs)
	if ls.Seconds != 2 || ls.Timeline != "4/3 1/1" {
		t.Errorf("seconds %d, timeline %q; want 2, \"4/3 1/1\"", ls.Seconds, ls.Timeline)
	}
	if ls.Long != 1 || ls.LongEnd[2] != 300*time.Millisecond {
		t.Errorf("long %d ending %v; want 1 ending at 300ms", ls.Long, ls.LongEnd)
	}
	if ls.Gap[0] != 100*time.Millisecond || ls.Gap[2] != time.Second || ls.LongGaps != 2 {
		t.Errorf("gaps %v, long %d; want p50 100ms, p99 1s, 2 long", ls.Gap, ls.LongGaps)
	}
	// a's span 1,130 ms with 1,100 idle, b's 1 ms and c's 299 ms with none.
	if want := 1.1 / 1.430; ls.GapShare < want-1e-9 || ls.GapShare > want+1e-9 {
		t.Errorf("gap share %v, want %v", ls.GapShare, want)
	}
}
