package spider

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/spider/robots"
)

// process fetches one request and reports its outcome. When ctx ends first, nothing is reported: the request
// stays uncommitted and is fetched again after a restart.
func (s *Spider) process(ctx context.Context, h *host, it *item) {
	if s.hold(ctx, it) {
		return
	}
	if err := s.allowed(ctx, it.u); err != nil {
		if ctx.Err() == nil {
			s.reportError(ctx, it, err)
		}
		return
	}
	s.recordRobots(it)
	if sitemapDepth(it.req) > 0 {
		s.processSitemap(ctx, it)
		return
	}
	if !s.gate(ctx, it.u) || s.hold(ctx, it) {
		return
	}
	select {
	case s.inflight <- struct{}{}:
	case <-ctx.Done():
		return
	}
	s.m.inFlight.Inc()
	start := time.Now()
	if ms := discoveredAt(it.req); ms > 0 {
		s.m.discoveryToFetch.Observe(max(0, float64(start.UnixMilli()-ms)/1000))
	}
	f, err := s.fetcher.fetch(ctx, it.req, it.u, s.redirectCheck, s.answered)
	s.releaseIP(it.u.Hostname(), time.Time{}) // no answer (an error): the IP's hold ends here
	s.m.fetchSeconds.Observe(time.Since(start).Seconds())
	s.m.inFlight.Dec()
	<-s.inflight
	if f != nil {
		s.m.bytes.Add(float64(f.WireBytes))
		s.nBytes.Add(f.WireBytes)
	}
	if ctx.Err() == nil {
		s.hostOutcome(it.u, attemptOf(it.req), f, err)
	}
	defer f.releaseBody() // the body's memory budget and spill file, once the outcome is queued
	if err != nil {
		if ctx.Err() != nil {
			return // shutting down: abandon, do not report a failure we caused
		}
		s.reportError(ctx, it, errorWithHops(err, f))
		return
	}
	if err := f.loadBody(ctx); err != nil {
		if ctx.Err() != nil {
			return
		}
		s.reportError(ctx, it, err)
		return
	}
	if f.Location != "" {
		if err := s.checkRedirect(it.req, f); err != nil {
			s.reportError(ctx, it, err)
			return
		}
	}
	s.reportPage(ctx, it, f)
}

// checkRedirect ends a redirect chain that loops (the target is a URL of the chain so far, or the request
// itself) or grows longer than Config.MaxRedirects, with a named error for the hop that would extend it.
func (s *Spider) checkRedirect(req *frontier.Request, f *Fetched) error {
	chain := metaStrings(req.Meta, MetaKeyRedirectURLs)
	if len(chain)+1 > s.cfg.MaxRedirects {
		return named(ErrNameTooManyRedirects, fmt.Errorf("more than %d redirects to reach %s", s.cfg.MaxRedirects, f.Location))
	}
	target, err := s.id.Fingerprint(f.Location)
	if err != nil {
		return named(ErrNameInvalidURL, fmt.Errorf("redirect from %s to %s: %w", req.URL, f.Location, err))
	}
	for _, u := range append(chain, req.URL) {
		if fp, err := s.id.Fingerprint(u); err == nil && string(fp) == string(target) {
			return named(ErrNameRedirectLoop, fmt.Errorf("%s redirects to %s, already in its redirect chain", req.URL, f.Location))
		}
	}
	return nil
}

// hopsError carries the redirect hops walked before a failure, so that they are reported too.
type hopsError struct {
	error
	hops []Hop
}

func (e *hopsError) Unwrap() error { return e.error }

func errorWithHops(err error, f *Fetched) error {
	if f == nil || len(f.Hops) == 0 {
		return err
	}
	return &hopsError{error: err, hops: f.Hops}
}

// answered pushes the next start of u's host to at least a delay after the host answered at t. gate books
// slots by start times; this makes the gap hold as the server measures it too (a request reaches the server
// some time after its slot starts, but always before its answer reaches us).
func (s *Spider) answered(u *url.URL, t time.Time) {
	next := t.Add(s.delayFor(u))
	s.bump(u.Hostname(), next)
	s.releaseIP(u.Hostname(), next)
}

func (s *Spider) bump(hostname string, next time.Time) {
	s.hostsMu.Lock()
	h := s.hostLocked(hostname)
	if h.next.Before(next) {
		h.next = next
	}
	s.hostsMu.Unlock()
}

// gate waits until u's host may receive another request, and books the slot: starts of two requests to one
// host are at least the host's delay apart. It returns false if ctx ended first.
func (s *Spider) gate(ctx context.Context, u *url.URL) bool {
	delay := s.delayFor(u)
	if ip := s.ipOf(ctx, u.Hostname()); ip != "" {
		return s.gateIP(ctx, u.Hostname(), ip, delay) // politeness per IP (politeness.go)
	}
	s.hostsMu.Lock()
	h := s.hostLocked(u.Hostname())
	now := time.Now()
	t := h.next
	if t.Before(now) {
		t = now
	}
	h.next = t.Add(delay)
	s.hostsMu.Unlock()
	if d := time.Until(t); d > 0 {
		return sleepCtx(ctx, d)
	}
	return ctx.Err() == nil
}

// delayFor returns the delay of u's host: Config.Delay, or a longer robots.txt Crawl-delay (capped).
func (s *Spider) delayFor(u *url.URL) time.Duration {
	d := s.cfg.Delay
	if !s.cfg.ObeyRobots {
		return d
	}
	if e := s.robots.peek(origin(u)); e != nil {
		d = max(d, e.crawlDelay)
	}
	return d
}

// redirectCheck applies robots.txt and the target host's delay to a redirect hop.
func (s *Spider) redirectCheck(ctx context.Context, u *url.URL) error {
	if err := s.allowed(ctx, u); err != nil {
		return err
	}
	if !s.gate(ctx, u) {
		return ctx.Err()
	}
	return nil
}

// allowed checks robots.txt for u, fetching it first if needed. The error is named (RobotsDisallowed,
// RobotsUnavailable, or the network error that kept robots.txt from being fetched).
func (s *Spider) allowed(ctx context.Context, u *url.URL) error {
	if !s.cfg.ObeyRobots {
		return nil
	}
	e, err := s.robotsFor(ctx, u)
	if err != nil {
		return err
	}
	if e.err != nil && e.rules.DisallowsAll() {
		return e.err
	}
	if !e.rules.Allowed(s.agent, u.RequestURI()) {
		if e.rules.DisallowsAll() {
			return named(ErrNameRobotsUnavail, fmt.Errorf("robots.txt of %s answered %d", origin(u), e.status))
		}
		return named(ErrNameRobots, fmt.Errorf("%s is disallowed by robots.txt", u))
	}
	return nil
}

func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// robotsFor returns the robots.txt verdict for u's origin, fetching it (once, however many goroutines ask)
// when it is missing or expired. The error is ctx's if ctx ends while waiting.
func (s *Spider) robotsFor(ctx context.Context, u *url.URL) (*robotsEntry, error) {
	key := origin(u)
	for {
		e, fetch := s.robots.get(key)
		if !fetch {
			select {
			case <-e.ready:
				return e, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		s.fetchRobots(ctx, u, e)
		if ctx.Err() != nil {
			s.robots.abandon(key, e)
			return nil, ctx.Err()
		}
		return e, nil
	}
}

// fetchRobots fetches robots.txt into e and publishes it. The request goes through the host's politeness
// gate like any other.
func (s *Spider) fetchRobots(ctx context.Context, u *url.URL, e *robotsEntry) {
	ru := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/robots.txt"}
	if !s.gate(ctx, ru) {
		return
	}
	select {
	case s.inflight <- struct{}{}:
	case <-ctx.Done():
		return
	}
	s.m.inFlight.Inc()
	f, err := s.robotsF.fetch(ctx, &frontier.Request{URL: ru.String()}, ru, nil, nil)
	answeredAt := time.Now()
	s.m.inFlight.Dec()
	<-s.inflight
	if ctx.Err() != nil {
		return
	}
	now := time.Now()
	var body []byte
	switch {
	case err != nil && ClassifyError(err) == ErrNameTooManyRedirects:
		// RFC 9309 §2.3.1.2: more than five redirects: robots.txt is unavailable (allow all).
		e.rules, e.status, e.expires = robots.AllowAll, 0, now.Add(s.cfg.RobotsTTL)
		e.succeed()
		s.m.robots.WithLabelValues("missing").Inc()
	case err != nil:
		// RFC 9309 §2.3.1.4: unreachable means complete disallow; keep the network error's name so the
		// host's URLs are reported as what they are (DNSLookupError, TimeoutError, …).
		e.err = named(ClassifyError(err), fmt.Errorf("robots.txt of %s: %w", origin(u), err))
		if e.fail(now, s.cfg.RobotsErrorTTL, s.cfg.RobotsTTL, s.cfg.RobotsGiveUp) {
			s.m.robots.WithLabelValues("given_up").Inc()
		} else {
			s.m.robots.WithLabelValues("error").Inc()
		}
	default:
		e.status = f.Status
		switch {
		case f.Status >= 500:
			if e.fail(now, s.cfg.RobotsErrorTTL, s.cfg.RobotsTTL, s.cfg.RobotsGiveUp) {
				s.m.robots.WithLabelValues("given_up").Inc()
			} else {
				s.m.robots.WithLabelValues("unavailable").Inc()
			}
		case f.Status >= 400:
			e.rules, e.expires = robots.Decide(f.Status, f.Body), now.Add(s.cfg.RobotsTTL)
			e.succeed()
			s.m.robots.WithLabelValues("missing").Inc()
		default:
			body = f.Body
			e.rules, e.expires = robots.Decide(f.Status, f.Body), now.Add(s.cfg.RobotsTTL)
			e.succeed()
			s.m.robots.WithLabelValues("ok").Inc()
		}
	}
	e.setLabel(now, body)
	if cd, ok := e.rules.CrawlDelay(s.agent); ok {
		e.crawlDelay = min(cd, s.cfg.MaxCrawlDelay)
	}
	if f != nil {
		s.m.bytes.Add(float64(f.WireBytes))
		s.nBytes.Add(f.WireBytes)
	}
	s.robots.publish(origin(u), e)
	s.announceSitemaps(ctx, u, e)
	// The host's delay (now known, Crawl-delay included) runs from robots.txt's answer.
	s.answered(u, answeredAt)
}

// discoveredAt is the request's meta MetaKeyDiscovered in Unix milliseconds, or 0 (absent, or not a number).
func discoveredAt(r *frontier.Request) int64 {
	v, _ := r.Meta.Get(MetaKeyDiscovered)
	switch v := v.(type) {
	case int64:
		return v
	case uint64:
		return int64(v)
	case float64:
		return int64(v)
	}
	return 0
}

// transientStatus reports whether an HTTP status is a transient failure of the host (the strategy worker
// retries the URL; see strategyworker.RetryConfig).
func transientStatus(status int) bool {
	switch status {
	case 500, 502, 503, 504, 522, 524, 408, 429:
		return true
	}
	return false
}

// hostOutcome backs off a host that keeps failing: after Config.HostFailures transient failures in a row
// (transient statuses, timeouts, resets, refused or broken connections) its next request waits
// Config.HostBackoff, doubled at each further failure, up to Config.HostBackoffMax, or the failure's Retry-After
// (429, 503) when longer (capped the same way). A single failure holds only its URL (the strategy worker
// retries it after its backoff or Retry-After), not the host. A success resets the count.
//
// A retry's failure (attempt > 0: the request's retry_times) does not count: it says that URL is still broken,
// which its first failure already said, not that the host is. Counted, a host whose healthy pages were all
// fetched and whose few broken URLs (a 500 on every try) were retried twice each met nine failures in a row
// and waited 5 s, 10 s, … up to HostBackoffMax (5 min) between them: the crawl's end waited ten minutes.
func (s *Spider) hostOutcome(u *url.URL, attempt int64, f *Fetched, err error) {
	if s.cfg.HostFailures <= 0 {
		return
	}
	transient, wait := false, time.Duration(0)
	if err != nil {
		switch ClassifyError(err) {
		case ErrNameTimeout, ErrNameConnLost, ErrNameConnRefused, ErrNameConnection:
			transient = true
		}
	} else if f != nil && transientStatus(f.Status) {
		transient = true
		if f.Status == http.StatusTooManyRequests || f.Status == http.StatusServiceUnavailable {
			wait = retryAfter(f.Header.Get("Retry-After"), time.Now())
		}
	}
	if err != nil && !transient {
		return // DNS, TLS, robots, invalid URL: says nothing about the host's health
	}
	s.hostsMu.Lock()
	defer s.hostsMu.Unlock()
	h := s.hostLocked(u.Hostname())
	if !transient {
		h.fails = 0
		return
	}
	if attempt > 0 {
		return
	}
	h.fails++
	over := h.fails - s.cfg.HostFailures
	if over < 0 {
		return
	}
	backoff := s.cfg.HostBackoff << min(over, 30)
	if backoff <= 0 || backoff > s.cfg.HostBackoffMax {
		backoff = s.cfg.HostBackoffMax
	}
	backoff = max(backoff, min(wait, s.cfg.HostBackoffMax))
	if next := time.Now().Add(backoff); h.next.Before(next) {
		h.next = next
	}
	s.m.hostBackoffs.Inc()
	s.log.Info("host backed off", "host", h.name, "failures_in_a_row", h.fails, "for", backoff)
}

// retryAfter reads a Retry-After value (delay-seconds or an HTTP date) as a wait from now; 0 when absent or
// unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 || secs > int64(365*24*time.Hour/time.Second) {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
