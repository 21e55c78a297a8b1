package web

import (
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// Config describes the site to build. Start from DefaultConfig and change what the test needs; the same Config
// (including Seed) always yields the same pages, links and robots.txt files.
type Config struct {
	// Hosts is the number of content hosts, host1.test … hostN.test. Default 20.
	Hosts int
	// PagesPerHost is the number of regular pages of each content host, its home page included. Default 50.
	PagesPerHost int
	// LinksPerPage is the number of links on a regular page (one to the next page, the rest random). Default 5.
	LinksPerPage int
	// CrossHostLinks is the fraction of random links that point to another content host, in [0, 1]. Default 0.2.
	CrossHostLinks float64
	// Seed makes the link graph; the same seed gives the same graph. Default 1.
	Seed uint64
	// PageBytes is the approximate size of a regular page's HTML (padding text is added). Default 2048.
	PageBytes int

	// Plain leaves out everything but regular pages: robots.txt answers 404 everywhere, there are no feature
	// pages (redirects, errors, variants, PDF, large page, ...) and no special hosts (slow, blackhole, refused,
	// nxdomain). Use it for throughput benchmarks.
	Plain bool
	// UseIPs names hosts by IP and port in page URLs (http://127.0.0.4:40123/) instead of by name
	// (http://host3.test/). With UseIPs a stock http.Transport reaches the site; without it, use the Site's
	// DialContext or Transport. The URL variants that need a name (upper-case host, explicit :80) are left out.
	UseIPs bool
	// FirstIP is the loopback address of host1; host i listens on FirstIP+i-1, and the special hosts follow the
	// content hosts. Default 127.0.0.2. If that address cannot be bound (a system without the 127/8 route), every
	// host listens on 127.0.0.1 on its own port instead; Site.SharedIP reports it.
	FirstIP netip.Addr

	// CrawlDelay is the Crawl-delay that host2.test's robots.txt asks for. Default 2s.
	CrawlDelay time.Duration
	// SlowDelay is how long slow.test waits before answering each request (robots.txt included). Default 2s.
	SlowDelay time.Duration
	// LargeBytes is the size of host1.test/large.html, streamed without being held in memory. Default 50 MiB.
	LargeBytes int64
	// TLS serves every host over HTTPS (page URLs are https://…) with a self-signed certificate made at Start
	// for all the host names and addresses; HTTP/2 is offered through ALPN besides HTTP/1.1. Clients trust it
	// through Site.CertPool (Site.Transport does).
	TLS bool
	// HTTP2 makes every host also speak HTTP/2 over cleartext (prior knowledge, "h2c"), besides HTTP/1.1.
	HTTP2 bool
	// Hostile adds what a crawler meets on a real web (see hostile.go and the package doc, "Hostile web").
	Hostile Hostile
	// Timing gives the site the real web's timing and shape (see timing.go and the package doc, "Timing").
	Timing Timing

	// DisableRequestLog stops the per-request log (counters and maxima are still kept). Use it for long
	// benchmarks, where the log would grow without bound.
	DisableRequestLog bool
}

// DefaultConfig returns the default site: 20 hosts of 50 pages, every feature on.
func DefaultConfig() Config {
	return Config{
		Hosts:          20,
		PagesPerHost:   50,
		LinksPerPage:   5,
		CrossHostLinks: 0.2,
		Seed:           1,
		PageBytes:      2048,
		FirstIP:        netip.AddrFrom4([4]byte{127, 0, 0, 2}),
		CrawlDelay:     2 * time.Second,
		SlowDelay:      2 * time.Second,
		LargeBytes:     50 << 20,
	}
}

// specialHosts bounds the addresses the special hosts take after the content hosts.
const specialHosts = 8

// maxHosts keeps every address inside 127.0.0.0/8 and the graph small enough to build at once.
const maxHosts = 60000

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	if c.Hosts < 1 || c.Hosts > maxHosts {
		errs = append(errs, fmt.Errorf("web: hosts = %d, want 1..%d", c.Hosts, maxHosts))
	}
	if c.PagesPerHost < 1 {
		errs = append(errs, fmt.Errorf("web: pages per host = %d, want >= 1", c.PagesPerHost))
	}
	if c.LinksPerPage < 1 {
		errs = append(errs, fmt.Errorf("web: links per page = %d, want >= 1", c.LinksPerPage))
	}
	if c.CrossHostLinks < 0 || c.CrossHostLinks > 1 {
		errs = append(errs, fmt.Errorf("web: cross-host link fraction = %v, want 0..1", c.CrossHostLinks))
	}
	if c.PageBytes < 0 {
		errs = append(errs, fmt.Errorf("web: page bytes = %d, want >= 0", c.PageBytes))
	}
	if !c.FirstIP.Is4() || !c.FirstIP.IsLoopback() {
		errs = append(errs, fmt.Errorf("web: first IP %v is not an IPv4 loopback address", c.FirstIP))
	} else if a := c.FirstIP.As4(); int(a[1])<<16|int(a[2])<<8|int(a[3])+c.Hosts+specialHosts > 1<<24-1 {
		errs = append(errs, fmt.Errorf("web: %d hosts from %v run past 127.255.255.254", c.Hosts, c.FirstIP))
	}
	if c.CrawlDelay < 0 {
		errs = append(errs, errors.New("web: crawl delay must not be negative"))
	}
	if c.SlowDelay < 0 {
		errs = append(errs, errors.New("web: slow delay must not be negative"))
	}
	if err := c.Hostile.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Timing.validate(); err != nil {
		errs = append(errs, err)
	}
	if c.LargeBytes < 0 {
		errs = append(errs, errors.New("web: large page size must not be negative"))
	}
	return errors.Join(errs...)
}
