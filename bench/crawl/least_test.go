package crawl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/spider/links"
	"github.com/frontiercrawl/frontier/spider/robots"
)

// least is the least crawler that could crawl the timing web politely: an in-memory seen-set, one goroutine and
// one connection per host, robots.txt fetched first and obeyed (as the generic agent, Crawl-delay honoured), the
// same delay between the starts of two requests to one host as Frontier's spider, a redirect's target followed
// as a link, a 5xx or 429 retried twice (at the back of its host's queue), the spider's link extractor, bodies
// kept up to 8 MiB (Frontier's max_body_bytes) under a 32 MiB budget of body bytes in flight; no frontier,
// nothing durable. Frontier's figures on the same web are read beside it.
type least struct {
	client  *http.Client
	delay   time.Duration
	budget  *semaphore.Weighted
	mu      sync.Mutex
	seen    map[string]bool
	hosts   map[string]*leastHost
	pending sync.WaitGroup
	pages   atomic.Int64
	errs    atomic.Int64
	last    atomic.Int64
	prog    *arrivals
}

const (
	leastMaxBody = 8 << 20
	leastBudget  = 32 << 20
	leastRetries = 2
)

type leastURL struct {
	u     *url.URL
	tries int
}

type leastHost struct {
	queue   []leastURL
	running bool
	rules   *robots.Rules
	next    time.Time
}

func newLeast(delay time.Duration, hosts int) *least {
	tr := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, MaxIdleConns: 2 * hosts, DisableCompression: true}
	return &least{delay: delay, budget: semaphore.NewWeighted(leastBudget), seen: map[string]bool{}, hosts: map[string]*leastHost{},
		client: &http.Client{Transport: tr, Timeout: time.Minute,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (c *least) add(u *url.URL) {
	u.Fragment, u.RawFragment = "", ""
	key, err := web.Normalize("", u.String()) // the canonical form: /%7Euser and /~user, ?b=2&a=1 and ?a=1&b=2 are one
	if err != nil {
		key = u.String()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[key] {
		return
	}
	c.seen[key] = true
	c.pending.Add(1)
	c.enqueue(leastURL{u: u})
}

// enqueue puts lu on its host's queue and starts the host's goroutine if it is idle. c.mu is held.
func (c *least) enqueue(lu leastURL) {
	h := c.hosts[lu.u.Host]
	if h == nil {
		h = &leastHost{}
		c.hosts[lu.u.Host] = h
	}
	h.queue = append(h.queue, lu)
	if !h.running {
		h.running = true
		go c.run(lu.u, h)
	}
}

func (c *least) run(origin *url.URL, h *leastHost) {
	if h.rules == nil {
		rb := &url.URL{Scheme: origin.Scheme, Host: origin.Host, Path: "/robots.txt"}
		c.wait(h)
		h.rules = robots.DisallowAll
		_ = c.get(rb, func(status int, _ http.Header, body []byte) { h.rules = robots.Decide(status, body) })
	}
	for {
		c.mu.Lock()
		if len(h.queue) == 0 {
			h.running = false
			c.mu.Unlock()
			return
		}
		lu := h.queue[0]
		h.queue = h.queue[1:]
		c.mu.Unlock()
		if !h.rules.Allowed("*", lu.u.RequestURI()) {
			c.pending.Done()
			continue
		}
		c.wait(h)
		if c.fetch(lu) {
			c.mu.Lock()
			lu.tries++
			c.enqueue(lu)
			c.mu.Unlock()
			continue
		}
		c.pending.Done()
	}
}

// wait sleeps until the host may get its next request, and books the one after.
func (c *least) wait(h *leastHost) {
	d := c.delay
	if cd, ok := h.rulesDelay(); ok && cd > d {
		d = cd
	}
	if w := time.Until(h.next); w > 0 {
		time.Sleep(w)
	}
	h.next = time.Now().Add(d)
}

func (h *leastHost) rulesDelay() (time.Duration, bool) {
	if h.rules == nil {
		return 0, false
	}
	return h.rules.CrawlDelay("*")
}

// get fetches u and calls use with its status, header and body (at most leastMaxBody bytes, valid only during
// the call): the body's bytes are held in the budget, and its buffer taken from a pool, until use returns.
func (c *least) get(u *url.URL, use func(status int, hdr http.Header, body []byte)) error {
	resp, err := c.client.Get(u.String())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	want := int64(leastMaxBody)
	if resp.ContentLength >= 0 && resp.ContentLength < want {
		want = resp.ContentLength
	}
	if err := c.budget.Acquire(context.Background(), max(want, 1)); err != nil {
		return err
	}
	defer c.budget.Release(max(want, 1))
	buf := bodyPool.Get().(*bytes.Buffer)
	defer bodyPool.Put(buf)
	buf.Reset()
	buf.Grow(int(want) + bytes.MinRead) // one allocation, reused through the pool, not a doubling series
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, want)); err != nil {
		return err
	}
	use(resp.StatusCode, resp.Header, buf.Bytes())
	return nil
}

var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// fetch fetches one URL and queues its links; it reports whether the URL should be tried again.
func (c *least) fetch(lu leastURL) (retry bool) {
	err := c.get(lu.u, func(status int, hdr http.Header, body []byte) {
		c.pages.Add(1)
		c.last.Store(time.Now().UnixNano())
		c.prog.note()
		switch {
		case status >= 300 && status < 400:
			if loc, err := lu.u.Parse(hdr.Get("Location")); err == nil {
				c.add(loc)
			}
		case status >= 500 || status == http.StatusTooManyRequests:
			retry = lu.tries < leastRetries
		case status/100 == 2:
			for _, l := range links.Extract(lu.u, body, links.Options{MaxLinks: 10_000}) {
				if u, err := url.Parse(l.URL); err == nil {
					c.add(u)
				}
			}
		}
	})
	if err != nil {
		c.errs.Add(1)
		return lu.tries < leastRetries
	}
	return retry
}

// crawlLeast crawls from the seed file with the least crawler.
func crawlLeast(spec crawlSpec) (crawlResult, error) {
	seeds, err := readSeeds(spec.Seeds)
	if err != nil {
		return crawlResult{}, err
	}
	c := newLeast(spec.Delay, len(seeds))
	start := time.Now()
	c.prog = &arrivals{start: start}
	for _, s := range seeds {
		c.add(s)
	}
	done := make(chan struct{})
	go func() { c.pending.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(spec.Timeout):
		return crawlResult{}, errTimeout(spec.Timeout)
	}
	return crawlResult{Responses: c.pages.Load(), Errors: c.errs.Load(), Wall: time.Duration(c.last.Load() - start.UnixNano()),
		Quantiles: c.prog.quantiles()}, nil
}

// readSeeds reads a seed file: one URL a line.
func readSeeds(path string) ([]*url.URL, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*url.URL
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		u, err := url.Parse(line)
		if err != nil {
			return nil, fmt.Errorf("seed %q: %w", line, err)
		}
		out = append(out, u)
	}
	return out, nil
}

func errTimeout(d time.Duration) error { return fmt.Errorf("the crawl did not finish in %v", d) }
