package crawl

import (
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/spider/links"
)

// ceiling is the least crawler that could crawl the loopback web: a seen-set in memory, one goroutine and one
// connection per host, the spider's link extractor, no frontier, no politeness beyond one connection per host,
// nothing durable. Frontier's figures are read beside it.
type ceiling struct {
	client  *http.Client
	mu      sync.Mutex
	seen    map[string]bool
	hosts   map[string]*ceilingHost
	pending sync.WaitGroup
	pages   atomic.Int64
	errs    atomic.Int64
	last    atomic.Int64
}

type ceilingHost struct {
	queue   []*url.URL
	running bool
}

func (c *ceiling) add(u *url.URL) {
	u.Fragment, u.RawFragment = "", ""
	key := u.String()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[key] {
		return
	}
	c.seen[key] = true
	c.pending.Add(1)
	h := c.hosts[u.Host]
	if h == nil {
		h = &ceilingHost{}
		c.hosts[u.Host] = h
	}
	h.queue = append(h.queue, u)
	if !h.running {
		h.running = true
		go c.run(h)
	}
}

func (c *ceiling) run(h *ceilingHost) {
	for {
		c.mu.Lock()
		if len(h.queue) == 0 {
			h.running = false
			c.mu.Unlock()
			return
		}
		u := h.queue[0]
		h.queue = h.queue[1:]
		c.mu.Unlock()
		c.fetch(u)
		c.pending.Done()
	}
}

func (c *ceiling) fetch(u *url.URL) {
	resp, err := c.client.Get(u.String())
	if err != nil {
		c.errs.Add(1)
		return
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	_ = resp.Body.Close()
	if err != nil {
		c.errs.Add(1)
		return
	}
	c.pages.Add(1)
	c.last.Store(time.Now().UnixNano())
	if resp.StatusCode/100 != 2 {
		return
	}
	for _, l := range links.Extract(u, body, links.Options{MaxLinks: 10_000}) {
		if lu, err := url.Parse(l.URL); err == nil {
			c.add(lu)
		}
	}
}

// TestCeilingHTTP crawls the same loopback web as TestStandaloneHTTP with the ceiling crawler.
func TestCeilingHTTP(t *testing.T) {
	hosts, pages, err := parseSize(*flagWeb)
	if err != nil {
		t.Fatal(err)
	}
	w := startWeb(t, hosts, pages)
	tr := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, MaxIdleConns: 2 * hosts, DisableCompression: true}
	defer tr.CloseIdleConnections()
	c := &ceiling{client: &http.Client{Transport: tr, Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		seen: map[string]bool{}, hosts: map[string]*ceilingHost{}}
	m := startMeter()
	start := time.Now()
	for _, s := range w.Seeds {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		c.add(u)
	}
	c.pending.Wait()
	wall := time.Duration(c.last.Load() - start.UnixNano())
	cpu := m.done()
	ch := w.check(t)
	reportMem(t, m, "ceiling HTTP "+*flagWeb, int64(ch.Reachable-ch.Missing), wall, cpu, m.peakRSS.Load(), m.load,
		"reachable", ch.Reachable, "missing", ch.Missing, "fetched twice", ch.Twice, "errors", c.errs.Load(),
		"web server CPU", ch.CPU)
}
