package crawl

import (
	"bytes"
	"flag"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/standalone"
)

// simWeb is a generated link graph answered in-process, as an http.RoundTripper: no sockets, no HTTP parsing,
// a configurable latency per fetch. Host h (0-based) is http://hH.sim/, its pages /p0 … /p(P-1); /p0 is the
// seed. Page p links to p+1 (so every page is reachable from the seeds) and to links-1 pages drawn from a
// hash of (h, p, i): 20% on another host, the rest on the same host. Bodies are padded to about 2 KiB, like
// the loopback web's pages.
type simWeb struct {
	hosts, pages, links int
	latency             time.Duration
	fetched             []atomic.Uint64 // one bit per page
	unique, dups        atomic.Int64
	robots              atomic.Int64
	last                atomic.Int64
	inFlight            atomic.Int64
}

func newSimWeb(hosts, pages, links int, latency time.Duration) *simWeb {
	return &simWeb{hosts: hosts, pages: pages, links: links, latency: latency,
		fetched: make([]atomic.Uint64, (hosts*pages+63)/64)}
}

func (s *simWeb) seeds() []string {
	out := make([]string, s.hosts)
	for h := range out {
		out[h] = "http://h" + strconv.Itoa(h) + ".sim/p0"
	}
	return out
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

var padding = strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 30)

func (s *simWeb) body(h, p int) []byte {
	var b bytes.Buffer
	b.Grow(2300)
	b.WriteString("<!doctype html><html><head><title>page</title></head><body><p>")
	b.WriteString(padding)
	b.WriteString("</p>\n")
	if p+1 < s.pages {
		b.WriteString(`<a href="/p` + strconv.Itoa(p+1) + `">next</a>` + "\n")
	}
	for i := 1; i < s.links; i++ {
		r := splitmix(uint64(h)*1_000_003 + uint64(p)*1_009 + uint64(i))
		th, tp := h, int(r>>20)%s.pages
		if r%10 < 2 {
			th = int(r>>40) % s.hosts
			b.WriteString(`<a href="http://h` + strconv.Itoa(th) + `.sim/p` + strconv.Itoa(tp) + `">x</a>` + "\n")
			continue
		}
		b.WriteString(`<a href="/p` + strconv.Itoa(tp) + `">y</a>` + "\n")
	}
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

func (s *simWeb) RoundTrip(r *http.Request) (*http.Response, error) {
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	if s.latency > 0 {
		t := time.NewTimer(s.latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return nil, r.Context().Err()
		}
	}
	if r.Body != nil {
		_ = r.Body.Close()
	}
	resp := &http.Response{Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: r, Header: http.Header{}}
	host := strings.TrimSuffix(strings.TrimPrefix(r.URL.Hostname(), "h"), ".sim")
	h, err1 := strconv.Atoi(host)
	p, err2 := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p"))
	if r.URL.Path == "/robots.txt" {
		s.robots.Add(1)
	}
	if err1 != nil || err2 != nil || h < 0 || h >= s.hosts || p < 0 || p >= s.pages || !strings.HasPrefix(r.URL.Path, "/p") {
		resp.StatusCode, resp.Status = 404, "404 Not Found"
		resp.Body = io.NopCloser(strings.NewReader("not found"))
		resp.ContentLength = 9
		return resp, nil
	}
	i := h*s.pages + p
	if old := s.fetched[i/64].Or(1 << (i % 64)); old&(1<<(i%64)) != 0 {
		s.dups.Add(1)
	} else {
		s.unique.Add(1)
	}
	s.last.Store(time.Now().UnixNano())
	body := s.body(h, p)
	resp.StatusCode, resp.Status = 200, "200 OK"
	resp.Header.Set("Content-Type", "text/html; charset=utf-8")
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

// TestStandaloneSim crawls the simulated web with the standalone mode (Pebble, in-process bus): the
// frontier's own ceiling, apart from HTTP. It reports pages/s, and URLs/s discovered (links extracted),
// scheduled (written to the queue) and dispatched (put on the feed).
func TestStandaloneSim(t *testing.T) {
	hosts, pages, err := parseSize(*flagSim)
	if err != nil {
		t.Fatal(err)
	}
	sw := newSimWeb(hosts, pages, *flagLinks, *flagLatency)
	cfg, id := standaloneConfig(t, filepath.Join(t.TempDir(), "data"))
	cfg.Spider.ObeyRobots = false // the simulated web has no robots.txt; one 404 per host would be noise
	m := startMeter()
	start := time.Now()
	defer progress(t, sw, start)()
	sum, reg, _ := runStandalone(t, cfg, standalone.Deps{Seeds: writeSeeds(t, sw.seeds()), Identity: id, Transport: sw})
	cpu := m.done()
	frontiertest.RequireStandaloneAccounted(t, cfg.DataDir) // after the meter stopped: not in the figures
	wall := time.Duration(sw.last.Load() - start.UnixNano())
	secs := wall.Seconds()
	scheduled, dispatched := counter(t, reg, "frontier_dbworker_scheduled_total"), counter(t, reg, "frontier_dbworker_feed_requests_total")
	n, q := histogram(t, reg, "frontier_spider_discovery_to_fetch_seconds", 0.5, 0.9, 0.99)
	reportMem(t, m, "standalone sim "+*flagSim+" links "+strconv.Itoa(*flagLinks)+" latency "+flagLatency.String(),
		sw.unique.Load(), wall, cpu, m.peakRSS.Load(), m.load,
		"duplicates", sw.dups.Load(), "of pages", int64(hosts*pages), "discovered URLs/s", float64(sum.Links)/secs,
		"scheduled URLs/s", scheduled/secs, "dispatched URLs/s", dispatched/secs, "spiders", cfg.Spiders,
		"discovery-to-fetch samples", int64(n), "p50/p90/p99", fmtQ(q))
	if got := sw.unique.Load(); got != int64(hosts*pages) || sw.dups.Load() != 0 {
		t.Errorf("fetched %d of %d pages, %d twice", got, hosts*pages, sw.dups.Load())
	}
}

var flagInFlight = flag.String("crawl.inflight", "200x5", "HOSTSxPAGES of the slow simulated web of TestSpiderInFlight (the recorded run: 2000x20)")

// TestSpiderInFlight crawls a simulated web whose every fetch takes -crawl.latency (200ms if unset) with one
// spider, and samples how many fetches are in flight at once (counted by the web itself) every 50 ms.
func TestSpiderInFlight(t *testing.T) {
	hosts, pages, err := parseSize(*flagInFlight)
	if err != nil {
		t.Fatal(err)
	}
	latency := *flagLatency
	if latency == 0 {
		latency = 200 * time.Millisecond
	}
	sw := newSimWeb(hosts, pages, *flagLinks, latency)
	cfg, id := standaloneConfig(t, filepath.Join(t.TempDir(), "data"))
	cfg.Spiders, cfg.StrategyWorkers = 1, 1
	cfg.Spider.ObeyRobots = false
	var samples, sum, peak int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				n := sw.inFlight.Load()
				if sw.unique.Load() > int64(hosts) && sw.unique.Load() < int64(hosts*pages)*9/10 { // past the seeds, before the tail
					samples++
					sum += n
				}
				peak = max(peak, n)
			}
		}
	}()
	m := startMeter()
	start := time.Now()
	_, _, _ = runStandalone(t, cfg, standalone.Deps{Seeds: writeSeeds(t, sw.seeds()), Identity: id, Transport: sw})
	cpu := m.done()
	close(stop)
	<-done
	frontiertest.RequireStandaloneAccounted(t, cfg.DataDir)
	wall := time.Duration(sw.last.Load() - start.UnixNano())
	mean := 0.0
	if samples > 0 {
		mean = float64(sum) / float64(samples)
	}
	reportMem(t, m, "one spider, simulated web "+*flagInFlight+" at "+latency.String()+" per fetch", sw.unique.Load(), wall, cpu,
		m.peakRSS.Load(), m.load, "mean in flight (steady phase)", mean, "peak in flight", peak, "duplicates", sw.dups.Load())
}

// progress logs the pages fetched every 30 s, so a long run shows where it is.
func progress(t *testing.T, sw *simWeb, start time.Time) (stop func()) {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(30 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				t.Logf("%v: %d pages, RSS %d MiB, load %s", time.Since(start).Round(time.Second), sw.unique.Load(), rss()>>20, loadAvg())
			}
		}
	}()
	return func() { close(done) }
}
