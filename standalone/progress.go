package standalone

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/crawlstatus"
	"github.com/frontiercrawl/frontier/pebblestore"
	"github.com/frontiercrawl/frontier/queue"
)

// StatusFile is the name, under Config.DataDir, of the file a running crawl rewrites every second with its
// crawlstatus.Status (JSON). `frontierctl status --data-dir DIR` reads it: the Pebble database is locked by
// the running process, and the file costs nothing to produce from the counters the crawl keeps anyway.
const StatusFile = "status.json"

// statusEvery is how often the status is rebuilt, written and handed to Deps.Progress.
const statusEvery = time.Second

// progressReporter builds the crawl's status from its counters, the bus lags and the queue counts.
type progressReporter struct {
	dir     string
	spiders int
	b       bus.Bus
	db      *pebblestore.DB
	st      *stats
	fn      func(crawlstatus.Status)
	rate    crawlstatus.Rate
	last    time.Time
	// topQueued is refreshed every topEvery: it reads the best rows of every partition.
	topQueued []crawlstatus.HostCount
	topAt     time.Time
}

// topEvery and topScan bound the cost of the top-hosts-by-queue list: the topScan best due rows of each
// partition, read every topEvery.
const (
	topEvery = 5 * time.Second
	topScan  = 1000
)

// observe rebuilds the status once a second (final forces it) and publishes it.
func (r *progressReporter) observe(ctx context.Context, now time.Time, final bool) {
	r.rate.Observe(now, r.st.pages.Load())
	if !final && now.Sub(r.last) < statusEvery {
		return
	}
	r.last = now
	s, err := r.build(ctx, now)
	if err != nil {
		return // the next tick tries again; the stats line reports persistent failures
	}
	if r.fn != nil {
		r.fn(s)
	}
	_ = writeStatus(r.dir, s)
}

func (r *progressReporter) build(ctx context.Context, now time.Time) (crawlstatus.Status, error) {
	s := crawlstatus.Status{Mode: "standalone", Time: now, PagesPerSecond: r.rate.PerSecond(),
		Totals: crawlstatus.Totals{Crawled: r.st.pages.Load(), Errors: r.st.errors.Load(), Links: r.st.links.Load()}}
	for _, sg := range bus.LagGroups() { // the stream/group pairs the topology declares
		lags, err := r.b.Lag(ctx, sg.Stream, sg.Group)
		if err != nil {
			return s, err
		}
		for p := range r.b.Partitions(sg.Stream) {
			s.Lags = append(s.Lags, crawlstatus.Lag{Stream: string(sg.Stream), Group: sg.Group, Partition: p, Lag: lags[p]})
			if sg.Stream == bus.SpiderFeed {
				s.Totals.InFlight += lags[p]
			}
		}
	}
	for p := range r.spiders {
		n, err := r.db.Queue().Count(ctx, p)
		if err != nil {
			return s, err
		}
		s.Queue = append(s.Queue, crawlstatus.Depth{Partition: p, Queued: n})
		s.Totals.Queued += n
	}
	s.TopErrors = r.st.topErrors(10)
	if now.Sub(r.topAt) >= topEvery || s.Totals.Queued == 0 {
		r.topAt = now
		counts := map[string]int64{}
		for _, d := range s.Queue {
			if d.Queued == 0 {
				continue
			}
			items, err := r.db.Queue().Next(ctx, d.Partition, now.Unix(), queue.Limits{Max: topScan})
			if err != nil {
				return s, err
			}
			for _, it := range items {
				counts[it.Host]++
			}
		}
		r.topQueued = crawlstatus.Top(counts, 10)
	}
	s.TopQueued = r.topQueued
	s.Judge()
	return s, nil
}

// writeStatus replaces dir/status.json atomically.
func writeStatus(dir string, s crawlstatus.Status) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, StatusFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("standalone: status file: %w", err)
	}
	return os.Rename(tmp, filepath.Join(dir, StatusFile))
}

// maxErrorHosts bounds the per-host error counts the standalone keeps for its status.
const maxErrorHosts = 10000

func (st *stats) errorHost(r *frontier.Request) {
	if r == nil {
		return
	}
	h := r.Hostname()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.errHosts == nil {
		st.errHosts = make(map[string]int64)
	}
	if _, ok := st.errHosts[h]; !ok && len(st.errHosts) >= maxErrorHosts {
		return
	}
	st.errHosts[h]++
}

func (st *stats) topErrors(n int) []crawlstatus.HostCount {
	st.mu.Lock()
	defer st.mu.Unlock()
	return crawlstatus.Top(st.errHosts, n)
}

// registerBloom exports the state Bloom filter's fill against its design size (for the "Bloom filter past its
// design size" alert); nothing when the filter is disabled.
func registerBloom(reg prometheus.Registerer, db *pebblestore.DB) {
	bs := db.BloomStore()
	if reg == nil || bs == nil || bs.Bloom() == nil {
		return
	}
	b := bs.Bloom()
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "frontier_state_bloom_urls",
			Help: "Distinct URLs added to the state Bloom filter."}, func() float64 { return float64(b.Count()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "frontier_state_bloom_design_urls",
			Help: "The number of URLs the state Bloom filter is designed for (pebble.bloom.expected)."},
			func() float64 { return float64(b.Config().Expected) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "frontier_state_bloom_false_positives_total",
			Help: "State reads the Bloom filter let through that found nothing."},
			func() float64 { return float64(bs.FalsePositives.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "frontier_state_bloom_bytes",
			Help: "The state Bloom filter's memory, all its layers."}, func() float64 { return float64(b.Bits() / 8) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "frontier_state_bloom_max_bytes",
			Help: "The cap on the state Bloom filter's memory, from standalone.memory_limit (0: none)."},
			func() float64 { return float64(b.MaxBytes()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "frontier_state_bloom_full",
			Help: "1 once the state Bloom filter has reached its memory cap (from standalone.memory_limit) and stopped growing."},
			func() float64 {
				if b.Full() {
					return 1
				}
				return 0
			}),
	)
}
