package web

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/idna"
)

// Names of the special hosts (present unless Config.Plain).
const (
	SlowHost      = "slow.test"      // answers every request after Config.SlowDelay
	BlackholeHost = "blackhole.test" // accepts connections and never answers
	RefusedHost   = "refused.test"   // resolves to an address where nothing listens
	NXDomainHost  = "nxdomain.test"  // does not resolve
	// WWWHost and BlogHost are subdomains of host1.test: other hosts of the same registrable domain.
	WWWHost  = "www.host1.test"
	BlogHost = "blog.host1.test"
	// IDNHost is bücher.test in IDNA form; host1.test links it by its Unicode name.
	IDNHost = "xn--bcher-kva.test"
)

type hostKind int

const (
	hostContent hostKind = iota
	hostSlow
	hostBlackhole
	hostRefused
	hostNXDomain
	hostSubdomain
)

// Host is one host of the site: its name, where it listens, and what the server measured. The measurement
// methods are safe for concurrent use while the site runs; the fields never change after Start.
type Host struct {
	// Name is the host name: host1.test … hostN.test, or one of the special host names.
	Name string
	// Addr is where the host listens (for RefusedHost: an address where nothing listens; for NXDomainHost:
	// the zero AddrPort).
	Addr netip.AddrPort
	// Origin is the scheme and host of the host's page URLs: http://host3.test, or http://127.0.0.4:40123 with
	// Config.UseIPs.
	Origin string
	// Robots is what the host answers for /robots.txt.
	Robots Robots

	host   string // the URL host: Name, or Addr with UseIPs
	scheme string // http, or https with Config.TLS
	kind   hostKind
	site   *Site
	// latency is waited before every answer, late leaves the host out of Seeds (Config.Timing).
	latency time.Duration
	late    bool
	pages   map[string]*Page // by escaped path?query
	srv     *http.Server
	ln      net.Listener

	mu struct {
		sync.Mutex
		conns, maxConns       int
		inFlight, maxInFlight int
		accepted, requests    int
		log                   []*Request
		held                  map[net.Conn]struct{} // blackhole connections
	}
}

// Request is one request as the server saw it.
type Request struct {
	Host           string    // the Host's Name
	Start          time.Time // when the handler started (headers read)
	End            time.Time // when the answer was complete; zero while in flight
	Conn           uint64    // connection id, unique within the site, in accept order
	Remote         string    // the client's address (ip:port) as the server saw it
	Method         string
	Target         string // the request target as sent (path?query)
	HostHeader     string
	UserAgent      string
	Proto          string // HTTP/1.1 or HTTP/2.0
	AcceptEncoding string
	Status         int    // 0 until the header is written (or if the handler gave up)
	Encoding       string // Content-Encoding served
	Bytes          int64  // body bytes written
}

// Site is a running synthetic web. Its methods are safe for concurrent use. Stop it (Start registers Stop with
// tb.Cleanup) to close every listener and connection and wait for every goroutine it started.
type Site struct {
	cfg      Config
	content  []*Host
	special  []*Host
	byHost   map[string]*Host // by URL host and by Name, lower case
	g        *graph
	sharedIP bool
	tls      *tls.Config    // server side, with Config.TLS
	pool     *x509.CertPool // trusts the site's certificate, with Config.TLS
	dialer   net.Dialer
	connID   atomic.Uint64
	stopping chan struct{}
	serveWG  sync.WaitGroup // Serve and blackhole goroutines
	handlers sync.WaitGroup
	mu       struct {
		sync.Mutex
		stopped bool
	}
}

// Start builds the site described by cfg, serves it, and registers Stop with tb.Cleanup. It calls tb.Fatal if
// cfg is invalid or a listener cannot be opened.
func Start(tb testing.TB, cfg Config) *Site {
	tb.Helper()
	s, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// New builds and serves the site described by cfg. The caller must call Stop.
func New(cfg Config) (*Site, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Site{cfg: cfg, byHost: map[string]*Host{}, stopping: make(chan struct{})}
	s.dialer.Timeout = 10 * time.Second
	ok, err := s.open(cfg)
	if !ok {
		return nil, err
	}
	if cfg.TLS {
		if err := s.makeCert(); err != nil {
			for _, h := range slices.Concat(s.content, s.special) {
				if h.ln != nil {
					h.ln.Close()
				}
			}
			return nil, err
		}
	}
	s.g = build(cfg, s.content, s.specialMap())
	for _, h := range slices.Concat(s.content, s.special) {
		s.serve(h)
	}
	return s, nil
}

func (s *Site) specialMap() map[string]*Host {
	m := map[string]*Host{}
	for _, h := range s.special {
		m[strings.TrimSuffix(h.Name, ".test")] = h
	}
	return m
}

func addIP(ip netip.Addr, n int) netip.Addr {
	a := ip.As4()
	v := int(a[1])<<16 | int(a[2])<<8 | int(a[3]) + n
	return netip.AddrFrom4([4]byte{127, byte(v >> 16), byte(v >> 8), byte(v)})
}

// open creates the hosts and their listeners. On error every listener opened so far is closed.
func (s *Site) open(cfg Config) (bool, error) {
	fail := func(err error) (bool, error) {
		for _, h := range slices.Concat(s.content, s.special) {
			if h.ln != nil {
				h.ln.Close()
			}
		}
		return false, err
	}
	// Probe the 127/8 route once; fall back to ports on 127.0.0.1.
	probe, err := listenProbe(netip.AddrPortFrom(cfg.FirstIP, 0).String())
	if err != nil {
		if !errors.Is(err, syscall.EADDRNOTAVAIL) {
			return fail(fmt.Errorf("web: listen on %v: %w", cfg.FirstIP, err))
		}
		s.sharedIP = true
	} else {
		probe.Close()
	}
	ipOf := func(i int) netip.Addr {
		if s.sharedIP {
			return netip.AddrFrom4([4]byte{127, 0, 0, 1})
		}
		return addIP(cfg.FirstIP, i)
	}
	listen := func(h *Host, ip netip.Addr) error {
		ln, err := net.Listen("tcp", netip.AddrPortFrom(ip, 0).String())
		if err != nil {
			return fmt.Errorf("web: listen for %s on %v: %w", h.Name, ip, err)
		}
		h.ln = ln
		h.Addr = ln.Addr().(*net.TCPAddr).AddrPort()
		return nil
	}
	for i := range cfg.Hosts {
		h := &Host{Name: fmt.Sprintf("host%d.test", i+1), kind: hostContent, Robots: RobotsStandard}
		switch {
		case cfg.Plain && cfg.Timing.Robots:
		case cfg.Plain && i == 0 && cfg.Hostile.SitemapPages > 0: // its robots.txt names its sitemaps
		case cfg.Plain:
			h.Robots = RobotsMissing
		case i == 1:
			h.Robots = RobotsCrawlDelay
		case i == 2:
			h.Robots = RobotsUnavailable
		case i == 3:
			h.Robots = RobotsMissing
		}
		s.content = append(s.content, h)
		if err := listen(h, ipOf(i)); err != nil {
			return fail(err)
		}
	}
	if !cfg.Plain {
		specials := []struct {
			name   string
			kind   hostKind
			robots Robots
		}{
			{SlowHost, hostSlow, RobotsMissing},
			{BlackholeHost, hostBlackhole, RobotsNoAnswer},
			{RefusedHost, hostRefused, RobotsNoAnswer},
			{NXDomainHost, hostNXDomain, RobotsNoAnswer},
			{WWWHost, hostSubdomain, RobotsMissing},
			{BlogHost, hostSubdomain, RobotsMissing},
			{IDNHost, hostSubdomain, RobotsMissing},
		}
		for j, sp := range specials {
			h := &Host{Name: sp.name, kind: sp.kind, Robots: sp.robots}
			s.special = append(s.special, h)
			if sp.kind == hostNXDomain {
				continue
			}
			if err := listen(h, ipOf(cfg.Hosts+j)); err != nil {
				return fail(err)
			}
			if sp.kind == hostRefused {
				h.ln.Close()
				h.ln = nil
			}
		}
	}
	for _, h := range slices.Concat(s.content, s.special) {
		h.site = s
		h.pages = map[string]*Page{}
		h.host = h.Name
		if cfg.UseIPs && h.kind != hostNXDomain {
			h.host = h.Addr.String()
		}
		h.scheme = "http"
		if cfg.TLS {
			h.scheme = "https"
		}
		h.Origin = h.scheme + "://" + h.host
		s.byHost[h.host] = h
		s.byHost[h.Name] = h
	}
	return true, nil
}

var discardLog = log.New(io.Discard, "", 0)

// listenProbe opens the listener that tells whether FirstIP can be bound; tests replace it to exercise the
// 127.0.0.1 fallback.
var listenProbe = func(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

type connKey struct{}

func (s *Site) serve(h *Host) {
	if h.ln == nil {
		return
	}
	ln := &trackListener{Listener: h.ln, h: h}
	if h.kind == hostBlackhole {
		h.mu.held = map[net.Conn]struct{}{}
		s.serveWG.Go(func() { s.blackhole(h, ln) })
		return
	}
	h.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          discardLog,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if tc, ok := c.(*tls.Conn); ok {
				c = tc.NetConn()
			}
			if tc, ok := c.(*trackedConn); ok {
				return context.WithValue(ctx, connKey{}, tc.id)
			}
			return ctx
		},
	}
	if s.cfg.HTTP2 {
		h.srv.Protocols = new(http.Protocols)
		h.srv.Protocols.SetHTTP1(true)
		h.srv.Protocols.SetUnencryptedHTTP2(true)
	}
	if s.tls != nil {
		h.srv.TLSConfig = s.tls.Clone()
		s.serveWG.Go(func() { h.srv.ServeTLS(ln, "", "") })
		return
	}
	s.serveWG.Go(func() { h.srv.Serve(ln) })
}

// blackhole accepts connections, reads and discards what they send, and never answers.
func (s *Site) blackhole(h *Host, ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		h.mu.Lock()
		if s.stopped() {
			h.mu.Unlock()
			c.Close()
			return
		}
		h.mu.held[c] = struct{}{}
		h.mu.Unlock()
		s.serveWG.Go(func() {
			io.Copy(io.Discard, c)
			c.Close()
			h.mu.Lock()
			delete(h.mu.held, c)
			h.mu.Unlock()
		})
	}
}

func (s *Site) stopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.stopped
}

// Stop closes every listener and connection and waits for every goroutine of the site. It is idempotent.
func (s *Site) Stop() {
	s.mu.Lock()
	if s.mu.stopped {
		s.mu.Unlock()
		return
	}
	s.mu.stopped = true
	close(s.stopping)
	s.mu.Unlock()
	for _, h := range slices.Concat(s.content, s.special) {
		h.Down()
	}
	s.handlers.Wait()
	s.serveWG.Wait()
}

// Down takes the host off the network for good, as a server that dies mid-crawl: its listener and its
// connections close (a blackhole's held ones too), so a request in flight fails and every later dial is
// refused (ECONNREFUSED). The request log and the counters stay readable; Stop still ends the site, and
// takes every host down this way. Down is idempotent.
func (h *Host) Down() {
	switch {
	case h.srv != nil:
		h.srv.Close()
	case h.ln != nil:
		h.ln.Close()
		h.mu.Lock()
		held := make([]net.Conn, 0, len(h.mu.held))
		for c := range h.mu.held {
			held = append(held, c)
		}
		h.mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}
}

// trackListener counts connections per host and gives each an id.
type trackListener struct {
	net.Listener
	h *Host
}

func (l *trackListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, id: l.h.site.connID.Add(1), h: l.h}
	l.h.mu.Lock()
	l.h.mu.accepted++
	l.h.mu.conns++
	l.h.mu.maxConns = max(l.h.mu.maxConns, l.h.mu.conns)
	l.h.mu.Unlock()
	return tc, nil
}

type trackedConn struct {
	net.Conn
	id   uint64
	h    *Host
	once sync.Once
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.h.mu.Lock()
		c.h.mu.conns--
		c.h.mu.Unlock()
	})
	return err
}

// SharedIP reports whether the 127/8 route was missing, so that every host listens on 127.0.0.1 (each on its
// own port) instead of on its own address.
func (s *Site) SharedIP() bool { return s.sharedIP }

// Config returns the configuration the site was built from.
func (s *Site) Config() Config { return s.cfg }

// Hosts returns the content hosts host1.test … hostN.test, in order.
func (s *Site) Hosts() []*Host { return slices.Clone(s.content) }

// Special returns the special hosts (slow, blackhole, refused, nxdomain, the subdomains www and blog of
// host1.test, and the IDN host bücher.test); none with Config.Plain.
func (s *Site) Special() []*Host { return slices.Clone(s.special) }

// Host returns the host with the given name or URL host (host3.test, HOST3.test:80, 127.0.0.4:40123, or a
// whole URL), or nil.
func (s *Site) Host(name string) *Host {
	if strings.Contains(name, "://") {
		if u, err := url.Parse(name); err == nil {
			name = u.Host
		}
	}
	name = strings.ToLower(name)
	if h := s.byHost[name]; h != nil {
		return h
	}
	if hn, port, err := net.SplitHostPort(name); err == nil && ":"+port == defaultPort(s.scheme()) {
		return s.byHost[hn]
	}
	return nil
}

// Seeds returns the home page URL of every content host but the late ones (Timing.Late).
func (s *Site) Seeds() []string {
	out := make([]string, 0, len(s.content))
	for _, h := range s.content {
		if !h.late {
			out = append(out, h.Origin+"/")
		}
	}
	return out
}

// Pages returns every page of the site, sorted by URL.
func (s *Site) Pages() []*Page {
	out := make([]*Page, 0, len(s.g.pages))
	for _, p := range s.g.pages {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *Page) int { return strings.Compare(a.URL, b.URL) })
	return out
}

// Page returns the page that rawURL (in any of its variant forms) names, or nil.
func (s *Site) Page(rawURL string) *Page {
	u, err := Normalize("", rawURL)
	if err != nil {
		return nil
	}
	return s.g.pages[u]
}

// Links returns the followable links of the page that rawURL names (see Page.Links), or nil.
func (s *Site) Links(rawURL string) []string {
	if p := s.Page(rawURL); p != nil {
		return slices.Clone(p.Links)
	}
	return nil
}

// Reachable predicts a crawl from seeds by a crawler that obeys robots.txt as the generic agent "*" and honours
// nofollow: every URL it learns about, with what it sees. A seed that does not parse is an error.
func (s *Site) Reachable(seeds ...string) (Reach, error) {
	return s.ReachableWith(ReachOptions{}, seeds...)
}

// ReachableWith is Reachable for the crawler that opts describe.
func (s *Site) ReachableWith(opts ReachOptions, seeds ...string) (Reach, error) {
	return s.g.reach(s.byHost, opts, seeds)
}

// Requests returns the request log of every host, ordered by start time.
func (s *Site) Requests() []Request {
	var out []Request
	for _, h := range slices.Concat(s.content, s.special) {
		out = append(out, h.Requests()...)
	}
	slices.SortStableFunc(out, func(a, b Request) int { return a.Start.Compare(b.Start) })
	return out
}

// Fetches counts the logged requests per page URL (normalised: every variant of a page counts for the page;
// robots.txt counts as a URL of its own), over every host. Use it to assert that a crawl fetched each URL once.
func (s *Site) Fetches() map[string]int {
	return s.countURLs(func(*Request) bool { return true })
}

// countURLs counts the logged requests that keep accepts per normalised URL (a target that does not normalise
// counts as written), over every host.
func (s *Site) countURLs(keep func(*Request) bool) map[string]int {
	out := map[string]int{}
	for _, h := range slices.Concat(s.content, s.special) {
		h.mu.Lock()
		for _, r := range h.mu.log {
			if !keep(r) {
				continue
			}
			out[h.URL(r.Target)]++
		}
		h.mu.Unlock()
	}
	return out
}

func (s *Site) scheme() string {
	if s.cfg.TLS {
		return "https"
	}
	return "http"
}

// CertPool returns a pool that trusts the site's certificate (nil without Config.TLS).
func (s *Site) CertPool() *x509.CertPool { return s.pool }

// makeCert makes a self-signed certificate for every host name and address of the site.
func (s *Site) makeCert() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("web: TLS key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{Organization: []string{"frontiertest/web"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	seen := map[netip.Addr]bool{}
	for _, h := range slices.Concat(s.content, s.special) {
		tmpl.DNSNames = append(tmpl.DNSNames, h.Name)
		if a := h.Addr.Addr(); a.IsValid() && !seen[a] {
			seen[a] = true
			tmpl.IPAddresses = append(tmpl.IPAddresses, a.AsSlice())
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("web: TLS certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return fmt.Errorf("web: TLS certificate: %w", err)
	}
	s.pool = x509.NewCertPool()
	s.pool.AddCert(cert)
	s.tls = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}}}
	return nil
}

// DialContext connects to the site by name: host3.test:80 (:443 with Config.TLS) reaches host3's listener, an unknown name (or
// nxdomain.test) fails with a *net.DNSError (IsNotFound) inside a *net.OpError, as a real lookup would, and an
// IP address is dialled as given. Plug it into an http.Transport (or use Transport).
func (s *Site) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return s.dialer.DialContext(ctx, network, addr)
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if !isASCII(name) {
		if a, err := idna.Lookup.ToASCII(name); err == nil {
			name = a
		}
	}
	h := s.byHost[name]
	if h == nil || h.kind == hostNXDomain {
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}
	}
	target := h.Addr.String()
	if ":"+port != defaultPort(s.scheme()) {
		target = net.JoinHostPort(h.Addr.Addr().String(), port)
	}
	return s.dialer.DialContext(ctx, network, target)
}

// Resolve returns the address the host name (e.g. host3.test) dials to, or false.
func (s *Site) Resolve(name string) (netip.AddrPort, bool) {
	h := s.byHost[strings.ToLower(name)]
	if h == nil || h.kind == hostNXDomain {
		return netip.AddrPort{}, false
	}
	return h.Addr, true
}

// Transport returns a new transport that reaches the site by name through DialContext (HTTP/1.1; with
// Config.TLS, HTTP/2 or HTTP/1.1 through ALPN, trusting CertPool). The caller owns it (CloseIdleConnections
// when done).
func (s *Site) Transport() *http.Transport {
	t := &http.Transport{
		DialContext:         s.DialContext,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
	}
	if s.pool != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: s.pool}
		t.ForceAttemptHTTP2 = true
	}
	return t
}

// Client returns a client over a new Transport that does not follow redirects and gives up after timeout.
func (s *Site) Client(timeout time.Duration) *http.Client {
	return &http.Client{
		Transport:     s.Transport(),
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// URL is the normalised URL of a request target (path?query, as in Request.Target) on the host: every variant
// of a page gives the page's URL. A target that does not normalise is appended to Origin as written.
func (h *Host) URL(target string) string {
	u, err := Normalize(h.Origin+"/", target)
	if err != nil {
		return h.Origin + target
	}
	return u
}

// Requests returns a copy of the host's request log, in arrival order (empty with Config.DisableRequestLog).
func (h *Host) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Request, len(h.mu.log))
	for i, r := range h.mu.log {
		out[i] = *r
	}
	return out
}

// Conns returns the number of connections open now.
func (h *Host) Conns() int { h.mu.Lock(); defer h.mu.Unlock(); return h.mu.conns }

// MaxConns returns the largest number of connections that were open at once.
func (h *Host) MaxConns() int { h.mu.Lock(); defer h.mu.Unlock(); return h.mu.maxConns }

// MaxInFlight returns the largest number of requests that were being answered at once.
func (h *Host) MaxInFlight() int { h.mu.Lock(); defer h.mu.Unlock(); return h.mu.maxInFlight }

// Accepted returns the number of connections accepted.
func (h *Host) Accepted() int { h.mu.Lock(); defer h.mu.Unlock(); return h.mu.accepted }

// RequestCount returns the number of requests received (counted even with Config.DisableRequestLog).
func (h *Host) RequestCount() int { h.mu.Lock(); defer h.mu.Unlock(); return h.mu.requests }

// MinGap returns the shortest time between the starts of two consecutive logged requests of the host, counting
// only the requests keep accepts (all when keep is nil), and false when there are fewer than two.
func (h *Host) MinGap(keep func(Request) bool) (time.Duration, bool) {
	var prev time.Time
	gap, n := time.Duration(0), 0
	for _, r := range h.Requests() {
		if keep != nil && !keep(r) {
			continue
		}
		if n > 0 {
			if d := r.Start.Sub(prev); n == 1 || d < gap {
				gap = d
			}
		}
		prev = r.Start
		n++
	}
	return gap, n >= 2
}

// ResetStats forgets the log, the counters and the maxima (the maxima restart from what is open now).
func (h *Host) ResetStats() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mu.log = nil
	h.mu.accepted, h.mu.requests = 0, 0
	h.mu.maxConns, h.mu.maxInFlight = h.mu.conns, h.mu.inFlight
}

// String names the host and its address.
func (h *Host) String() string { return h.Name + "@" + h.Addr.String() }

func (h *Host) begin(r *http.Request) *Request {
	id, _ := r.Context().Value(connKey{}).(uint64)
	rec := &Request{
		Host: h.Name, Conn: id, Remote: r.RemoteAddr, Method: r.Method, Target: r.RequestURI, HostHeader: r.Host,
		UserAgent: r.UserAgent(), Proto: r.Proto, AcceptEncoding: r.Header.Get("Accept-Encoding"),
	}
	h.mu.Lock()
	// Start is read under the lock, so that the log's order (arrival order) is the order of the starts:
	// MinGap reads consecutive entries, and two requests that read the clock before the lock could append in
	// the other order (a negative gap, seen once in CI with 10 concurrent requests).
	rec.Start = time.Now()
	h.mu.requests++
	h.mu.inFlight++
	h.mu.maxInFlight = max(h.mu.maxInFlight, h.mu.inFlight)
	if !h.site.cfg.DisableRequestLog {
		h.mu.log = append(h.mu.log, rec)
	}
	h.mu.Unlock()
	return rec
}

func (h *Host) end(rec *Request, w *recorder) {
	h.mu.Lock()
	h.mu.inFlight--
	rec.End = time.Now()
	rec.Status = w.status
	rec.Bytes = w.bytes
	rec.Encoding = w.Header().Get("Content-Encoding")
	h.mu.Unlock()
}

// recorder notes the status and the body size of an answer.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *recorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ServeHTTP answers one request of the host.
func (h *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := h.site
	s.mu.Lock()
	if s.mu.stopped {
		s.mu.Unlock()
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()

	rec := h.begin(r)
	rw := &recorder{ResponseWriter: w}
	defer h.end(rec, rw)
	d := h.latency
	if h.kind == hostSlow {
		d += s.cfg.SlowDelay
	}
	h.wait(r, d) // drops the connection, no answer at all, if the client or the site gives up first
	h.answer(rw, r)
}

func (h *Host) answer(w http.ResponseWriter, r *http.Request) {
	key := normEscapes(removeDots(r.URL.EscapedPath()))
	if key == "" {
		key = "/"
	}
	if r.URL.RawQuery != "" {
		key += "?" + sortQuery(r.URL.RawQuery)
	}
	if key == "/robots.txt" {
		h.robots(w)
		return
	}
	p := h.pages[key]
	if p == nil && (h.site.cfg.Hostile.Traps || h.site.cfg.Hostile.Chains || h.site.cfg.Hostile.SitemapPages > 0) && h.kind == hostContent && h.serveTrap(w, key) {
		return
	}
	if p == nil {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><title>404</title></head><body><p>%s has no page %s</p></body></html>\n", h.Name, htmlEscape(r.URL.Path))
		return
	}
	if p.slow {
		h.wait(r, h.site.cfg.Timing.LatencyMax)
	}
	p.serve(w, r)
}

func (h *Host) robots(w http.ResponseWriter) {
	switch h.Robots {
	case RobotsStandard, RobotsCrawlDelay:
		var delay time.Duration
		if h.Robots == RobotsCrawlDelay {
			delay = h.site.cfg.CrawlDelay
		}
		body := robotsTxt(h.Name, delay) + h.robotsSitemapLines()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		io.WriteString(w, body)
	case RobotsUnavailable:
		w.Header().Set("Retry-After", "3600")
		http.Error(w, "robots.txt is unavailable", http.StatusServiceUnavailable)
	default:
		http.Error(w, "no robots.txt", http.StatusNotFound)
	}
}
