package spider

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Politeness per server (Config.Politeness "ip", the default): many host names often live on one machine (a
// shared host, a CDN edge, a blog platform's subdomains), and a delay per host name would let a crawl of 20
// such names hit that machine 20 times as often as one. So the address its name resolves to is booked too: one
// request at a time per address (held from its start to its answer), and the next starts no sooner than the
// host's delay after that answer, as for a host. The per-host rules still apply on top (connections per host,
// Crawl-delay of the host's robots.txt, which sets the delay booked on the IP for that host's requests).
//
// Names are resolved once and cached (dnsCache): Go's resolver does not report a record's TTL, so an answer is
// kept for Config.DNSTTL, a failure for Config.DNSErrorTTL (logged once by name and counted in
// frontier_spider_dns_errors_total); the cache holds at most Config.DNSCacheSize names. A name that does not
// resolve is gated by host name only: its fetch fails on its own with the dialer's error. The dialer resolves
// again when it connects (through the system's cache), so the address booked is the one the name had when
// the request was gated. A spider given Deps.DialContext without Deps.Resolver (the tests' synthetic webs
// map names to listeners themselves) cannot know which names share an address, and falls back to "host".

// Politeness modes.
const (
	PolitenessHost = "host" // a delay per host name only
	PolitenessIP   = "ip"   // and per IP address the host name resolves to
)

// maxIPSlots bounds the per-IP booking map; past it the slots already free are forgotten.
const maxIPSlots = 100_000

// ipPoliteness is the per-IP state, built on first use.
type ipPoliteness struct {
	once sync.Once
	on   bool
	dns  *dnsCache
	next map[string]*ipState // by IP address; guarded by Spider.hostsMu
}

// ipPol returns the spider's per-IP state, building it on first use.
func (s *Spider) ipPol() *ipPoliteness {
	p := &s.perIP
	p.once.Do(func() {
		resolve := s.deps.Resolver
		if resolve == nil && s.deps.DialContext == nil && s.deps.Transport == nil {
			resolve = net.DefaultResolver.LookupNetIP
		}
		p.on = s.cfg.Politeness == PolitenessIP && resolve != nil
		if s.cfg.Politeness == PolitenessIP && !p.on {
			s.log.Info("politeness per IP needs a resolver matching Deps.DialContext; politeness is per host name")
		}
		if p.on {
			p.dns = newDNSCache(s.cfg.DNSCacheSize, s.cfg.DNSTTL, s.cfg.DNSErrorTTL, resolve, func(host string, err error) {
				s.m.dnsErrors.Inc()
				s.log.Warn("DNS lookup failed; host gated by name only", "host", host, "err", err, "retry_after", s.cfg.DNSErrorTTL)
			})
			p.next = map[string]*ipState{}
		}
	})
	return p
}

// ipOf returns the IP address host resolves to (resolving it if not cached), or "" when politeness is per
// host or the name does not resolve.
func (s *Spider) ipOf(ctx context.Context, host string) string {
	p := s.ipPol()
	if !p.on {
		return ""
	}
	return p.dns.lookup(ctx, host)
}

// cachedIPOf is ipOf without a lookup: "" when host's address is not cached.
func (s *Spider) cachedIPOf(host string) string {
	p := s.ipPol()
	if !p.on {
		return ""
	}
	return p.dns.peek(host)
}

// ipState is the booking of one IP address: the earliest start of its next request, and the request in
// flight that holds it until its answer (held; the hold lapses at until, so a fetch that ends without an
// answer and without release delays the address's next request by at most the request timeout).
type ipState struct {
	next    time.Time
	held    bool
	holder  string // the host name of the request holding the address
	until   time.Time
	release chan struct{} // closed when the hold ends
}

// ipStateLocked returns ip's booking, creating it. s.hostsMu must be held.
func (s *Spider) ipStateLocked(ip string) *ipState {
	m := s.perIP.next
	st := m[ip]
	if st == nil {
		if len(m) >= maxIPSlots {
			now := time.Now()
			for k, v := range m {
				if !v.held && v.next.Before(now) {
					delete(m, k)
				}
			}
		}
		st = &ipState{}
		m[ip] = st
	}
	return st
}

// gateIP waits until host and its address ip may receive another request and books both: the address is
// held by this request until its answer (releaseIP), and its next request starts no sooner than delay after
// that answer. It returns false if ctx ended first.
func (s *Spider) gateIP(ctx context.Context, host, ip string, delay time.Duration) bool {
	hop := ctx.Value(heldIPKey{}) == ip // a redirect hop of the request that holds ip: no hold of its own
	for {
		s.hostsMu.Lock()
		now := time.Now()
		h := s.hostLocked(host)
		st := s.ipStateLocked(ip)
		if st.held && !now.Before(st.until) {
			st.held = false // a hold that lapsed
			close(st.release)
		}
		t := now
		if t.Before(h.next) {
			t = h.next
		}
		if t.Before(st.next) {
			t = st.next
		}
		var wake <-chan struct{}
		if st.held && !hop {
			wake = st.release
			if t.Before(st.until) {
				t = st.until
			}
		}
		if wake == nil && !t.After(now) {
			h.next = now.Add(delay)
			if st.next.Before(h.next) {
				st.next = h.next
			}
			if !hop {
				st.held, st.holder, st.until, st.release = true, host, now.Add(delay+s.cfg.RequestTimeout), make(chan struct{})
			}
			s.hostsMu.Unlock()
			return true
		}
		s.hostsMu.Unlock()
		timer := time.NewTimer(t.Sub(now))
		select {
		case <-ctx.Done():
			timer.Stop()
			return false
		case <-timer.C:
		case <-wake:
			timer.Stop()
		}
	}
}

// heldIPKey is the context key of the address a request holds (its redirect hops are gated without a hold).
type heldIPKey struct{}

// withHeldIP marks ctx as the context of a request to u that holds its address.
func (s *Spider) withHeldIP(ctx context.Context, u *url.URL) context.Context {
	if ip := s.cachedIPOf(u.Hostname()); ip != "" {
		return context.WithValue(ctx, heldIPKey{}, ip)
	}
	return ctx
}

// releaseIP ends the hold of host's address by a request of host, if it still holds it; next (when not zero)
// is the earliest start of the address's next request (the answer's time plus the delay).
func (s *Spider) releaseIP(host string, next time.Time) {
	ip := s.cachedIPOf(host)
	if ip == "" {
		return
	}
	s.hostsMu.Lock()
	defer s.hostsMu.Unlock()
	st := s.ipStateLocked(ip)
	if st.next.Before(next) {
		st.next = next
	}
	if st.held && st.holder == host {
		st.held = false
		close(st.release)
	}
}

// dnsEntry is one cached answer: an address, or a failure.
type dnsEntry struct {
	ip      string
	err     error
	expires time.Time
}

// dnsCache resolves host names to one address each, caching answers and failures. Safe for concurrent use.
type dnsCache struct {
	mu             sync.Mutex
	lru            *lru.Cache[string, dnsEntry]
	ttl, errTTL    time.Duration
	resolve        func(ctx context.Context, network, host string) ([]netip.Addr, error)
	failed         func(host string, err error)
	now            func() time.Time
	inflightByHost map[string]chan struct{}
}

func newDNSCache(size int, ttl, errTTL time.Duration, resolve func(context.Context, string, string) ([]netip.Addr, error), failed func(string, error)) *dnsCache {
	c, err := lru.New[string, dnsEntry](size)
	if err != nil {
		panic(err) // size > 0 is checked by Config.Validate
	}
	return &dnsCache{lru: c, ttl: ttl, errTTL: errTTL, resolve: resolve, failed: failed, now: time.Now,
		inflightByHost: map[string]chan struct{}{}}
}

// peek returns host's cached address, or "".
func (c *dnsCache) peek(host string) string {
	if ip, ok := ipLiteral(host); ok {
		return ip
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.lru.Get(host); ok && c.now().Before(e.expires) {
		return e.ip
	}
	return ""
}

// ipLiteral is host's address when host is an IP literal: netip.ParseAddr(host).Unmap().String(), without
// printing an IPv4 address (ParseAddr takes one only in the dotted decimal form String prints, no leading
// zeros), which peek did on every answer of a host named by its address.
func ipLiteral(host string) (string, bool) {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return "", false
	}
	if a.Is4() {
		return host, true
	}
	return a.Unmap().String(), true
}

// lookup returns host's address: an IP literal as it is, a cached answer, or a new lookup (one at a time per
// name: concurrent callers wait for it). "" when the name does not resolve (or ctx ends).
func (c *dnsCache) lookup(ctx context.Context, host string) string {
	if ip, ok := ipLiteral(host); ok {
		return ip
	}
	for {
		c.mu.Lock()
		if e, ok := c.lru.Get(host); ok && c.now().Before(e.expires) {
			c.mu.Unlock()
			return e.ip
		}
		wait, busy := c.inflightByHost[host]
		if !busy {
			done := make(chan struct{})
			c.inflightByHost[host] = done
			c.mu.Unlock()
			e := c.fetch(ctx, host)
			c.mu.Lock()
			if ctx.Err() == nil {
				c.lru.Add(host, e)
			}
			delete(c.inflightByHost, host)
			close(done)
			c.mu.Unlock()
			if e.err != nil && ctx.Err() == nil {
				c.failed(host, e.err)
			}
			return e.ip
		}
		c.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ""
		}
	}
}

func (c *dnsCache) fetch(ctx context.Context, host string) dnsEntry {
	addrs, err := c.resolve(ctx, "ip", host)
	now := c.now()
	if err == nil && len(addrs) == 0 {
		err = &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	if err != nil {
		return dnsEntry{err: err, expires: now.Add(c.errTTL)}
	}
	ip := addrs[0]
	for _, a := range addrs { // the first IPv4 address, as most dialers try first
		if a.Unmap().Is4() {
			ip = a
			break
		}
	}
	return dnsEntry{ip: ip.Unmap().String(), expires: now.Add(c.ttl)}
}
