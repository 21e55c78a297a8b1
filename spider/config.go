package spider

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Config configures a spider. Start from DefaultConfig.
type Config struct {
	// UserAgent is sent with every request; its product token ("FrontierBot" in "FrontierBot/0.1 (+url)")
	// selects the robots.txt group.
	UserAgent string `mapstructure:"user_agent"`
	// ConnsPerHost is the most requests (and connections) a host gets at once. Default 1.
	ConnsPerHost int `mapstructure:"conns_per_host"`
	// Delay is the least time between the starts of two requests to one host (robots.txt included). A
	// robots.txt Crawl-delay longer than Delay replaces it for that host, up to MaxCrawlDelay. Default 1s.
	Delay time.Duration `mapstructure:"delay"`
	// MaxCrawlDelay caps the Crawl-delay a robots.txt may ask for. Default 60s.
	MaxCrawlDelay time.Duration `mapstructure:"max_crawl_delay"`
	// ObeyRobots makes the spider fetch robots.txt before any other URL of a host and obey it. Default true.
	ObeyRobots bool `mapstructure:"obey_robots"`
	// RobotsTTL is how long a fetched robots.txt (2xx or 4xx) is trusted: at most 24h (RFC 9309 §2.4).
	// Default 24h.
	RobotsTTL time.Duration `mapstructure:"robots_ttl"`
	// RobotsErrorTTL is how long a robots.txt that answered 5xx, or could not be fetched, keeps the host closed
	// before it is fetched again; it doubles with each failure in a row, up to RobotsTTL. Default 10m.
	RobotsErrorTTL time.Duration `mapstructure:"robots_error_ttl"`
	// RobotsGiveUp is how long robots.txt may keep failing (5xx or unreachable) before it is treated as absent
	// (allow all), as RFC 9309 §2.3.1.4 permits; 0 keeps the host closed for as long as it fails. Default
	// 720h (30 days).
	RobotsGiveUp time.Duration `mapstructure:"robots_give_up"`
	// Sitemaps (or seeds.sitemaps in the configuration) sends the Sitemap lines of every robots.txt fetched (those of the host's registered domain) to
	// the crawl as sitemap seeds: the sitemaps, and the pages they list, are crawled (see sitemaps.go).
	// Default false: a crawl opts in.
	Sitemaps bool `mapstructure:"sitemaps"`
	// Politeness is "ip" (the default: the delay is also kept per IP address the host name resolves to, so
	// many names on one server share one budget) or "host" (per host name only). See politeness.go.
	Politeness string `mapstructure:"politeness"`
	// DNSTTL is how long a resolved address is used for politeness (Go's resolver hides the record's TTL).
	// Default 5m.
	DNSTTL time.Duration `mapstructure:"dns_ttl"`
	// DNSErrorTTL is how long a failed lookup is remembered before the name is resolved again. Default 30s.
	DNSErrorTTL time.Duration `mapstructure:"dns_error_ttl"`
	// DNSCacheSize bounds the names whose address is cached. Default 100,000.
	DNSCacheSize int `mapstructure:"dns_cache_size"`
	// RobotsCacheSize bounds the number of origins whose robots.txt is kept. Default 100,000.
	RobotsCacheSize int `mapstructure:"robots_cache_size"`
	// ConnectTimeout bounds DNS lookup plus TCP connect (and the TLS handshake separately). Default 10s.
	ConnectTimeout time.Duration `mapstructure:"connect_timeout"`
	// RequestTimeout bounds one whole request: connect, headers, body, for every hop of a redirect chain
	// together. Default 60s.
	RequestTimeout time.Duration `mapstructure:"request_timeout"`
	// MaxBodyBytes is the most decoded body bytes kept of one response; a longer body is truncated there and the
	// page marked (meta "frontier_truncated"). Default 8 MiB.
	MaxBodyBytes int64 `mapstructure:"max_body_bytes"`
	// BodyBudgetBytes bounds the response-body bytes the process's spiders hold in memory over all their
	// fetches (a semaphore on bytes): a fetch reserves what it keeps before keeping it and gives it back once
	// the outcome is reported, so peak memory follows this setting, not the web (1,000 hosts each serving a
	// 15 MB page at once would otherwise hold up to MaxBodyBytes each). It is one budget per process: a spider
	// process has one spider, and the spiders of a standalone process share one budget (Deps.BodyBudget).
	// 0 (the default) is DefaultBodyBudgetBytes in a spider process; the standalone derives it from
	// standalone.memory_limit instead (package standalone, "Memory").
	BodyBudgetBytes int64 `mapstructure:"body_budget_bytes"`
	// SpillBytes is the most body bytes one fetch keeps in memory while it reads: past it (or when the budget
	// has no room) the body goes to a temporary file, unlinked at once, in StateDir (the system's temporary
	// directory when StateDir is ""), and comes back into memory, under the budget, only to be parsed and
	// handed to the handler. Default 64 KiB (Heritrix keeps 64 KB per fetch in memory and spills the rest).
	// When nothing reads bodies after the fetch, the rest is parsed as it streams in instead (see the package
	// doc, "Memory").
	SpillBytes int64 `mapstructure:"spill_bytes"`
	// MaxRedirects is the longest redirect chain: the hop that would make it longer is reported as
	// TooManyRedirects. Default 20 (Scrapy's REDIRECT_MAX_TIMES).
	MaxRedirects int `mapstructure:"max_redirects"`
	// HostFailures is how many transient failures in a row of first attempts (500, 502, 503, 504, 522, 524,
	// 408, 429, timeouts, resets, refused connections; a retry's failure is the URL's, not the host's) back a
	// host off as a whole: its next request waits HostBackoff, doubled at each further failure up to
	// HostBackoffMax, so a failing host is not hammered while its URLs wait in the queue for their retries; a
	// Retry-After longer than the wait is honoured. A success resets the count. Default 3; 0 disables.
	HostFailures int `mapstructure:"host_failures"`
	// HostBackoff is the first whole-host wait. Default 5s.
	HostBackoff time.Duration `mapstructure:"host_backoff"`
	// HostBackoffMax caps the whole-host wait (and a Retry-After). Default 5m.
	HostBackoffMax time.Duration `mapstructure:"host_backoff_max"`
	// MaxInFlight bounds the fetches running at once over all hosts. Default 2,048: on the real web a fetch
	// takes 100-500 ms, so throughput comes from many hosts in flight at once.
	MaxInFlight int `mapstructure:"max_in_flight"`
	// MaxPending bounds the requests the spider holds: read from the feed and not yet reported (queued at
	// their hosts, in flight, or being reported). It is the memory bound of the per-host queues; when it is
	// reached the spider stops reading the feed until a request is reported. Default 20,000.
	MaxPending int `mapstructure:"max_pending"`
	// MaxUncommitted bounds the feed offsets read but not yet committed, reported ones included: a request
	// still running holds the commit (the feed offset cannot move past it) but not the reading, so up to this
	// many requests are read, fetched and reported past it. A reported one costs 16 bytes (its offset) until
	// the commit passes it. Default 250,000: a fetch that hangs for the whole RequestTimeout (60 s) does not
	// stop a crawl of 4,000 pages/s, for 8 MB at most. Raised to MaxPending when smaller.
	MaxUncommitted int `mapstructure:"max_uncommitted"`
	// FetchBatch is the most feed messages read by one Fetch. Default 512.
	FetchBatch int `mapstructure:"fetch_batch"`
	// ReportBatch is the most spider-log messages sent by one Send. Default 512.
	ReportBatch int `mapstructure:"report_batch"`
	// CommitInterval is how often the feed offset is committed while work completes. Default 100ms. The DB
	// worker sends a partition its next batch only once the committed offset shows room, so this interval is
	// part of every round of the crawl loop.
	CommitInterval time.Duration `mapstructure:"commit_interval"`
	// HonourNoFollow drops links marked rel=nofollow (or on pages with <meta name=robots content=nofollow>).
	// Default false: Frontera and Scrapy follow them.
	HonourNoFollow bool `mapstructure:"honour_nofollow"`
	// MaxLinksPerPage bounds the links extracted from one page. Default 10,000.
	MaxLinksPerPage int `mapstructure:"max_links_per_page"`
	// SendBody puts the response body into page_crawled (Frontera's SEND_BODY). Default false.
	SendBody bool `mapstructure:"send_body"`
	// HTTP2 lets the transport negotiate HTTP/2 over TLS (ALPN). Default true.
	HTTP2 bool `mapstructure:"http2"`
	// StateDir holds the spider's small local state: markers of the seed files already injected (seeds/,
	// one file per content hash, so re-running with the same file injects nothing) and, after a clean stop,
	// the feed offsets reported beyond the committed one (spider-feed-<partition>.json, so a restart does not
	// fetch them again). "" disables both (seeds are then deduplicated only by the strategy worker's
	// URL-seen test). Default ".frontier".
	StateDir string `mapstructure:"state_dir"`
	// StatsInterval is how often the stats line is logged. Default 30s. Not a key of the spider section: the
	// main sets it from the common stats_interval.
	StatsInterval time.Duration `mapstructure:"-"`
	// ShutdownTimeout bounds reporting finished work and the last commit after the context ends. Default 30s.
	// Not a key of the spider section: the main sets it from the common shutdown_timeout.
	ShutdownTimeout time.Duration `mapstructure:"-"`
}

// DefaultUserAgent is the default Config.UserAgent.
const DefaultUserAgent = "FrontierBot/0.1 (+https://github.com/frontiercrawl/frontier)"

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{
		UserAgent:       DefaultUserAgent,
		ConnsPerHost:    1,
		Delay:           time.Second,
		MaxCrawlDelay:   time.Minute,
		ObeyRobots:      true,
		RobotsTTL:       24 * time.Hour,
		RobotsErrorTTL:  10 * time.Minute,
		RobotsGiveUp:    robotsGiveUpDefault,
		Politeness:      PolitenessIP,
		DNSTTL:          5 * time.Minute,
		DNSErrorTTL:     30 * time.Second,
		DNSCacheSize:    100_000,
		RobotsCacheSize: 100_000,
		ConnectTimeout:  10 * time.Second,
		RequestTimeout:  60 * time.Second,
		MaxBodyBytes:    8 << 20,
		BodyBudgetBytes: 0, // DefaultBodyBudgetBytes, or the standalone's share of its memory limit
		SpillBytes:      64 << 10,
		MaxRedirects:    20,
		HostFailures:    3,
		HostBackoff:     5 * time.Second,
		HostBackoffMax:  5 * time.Minute,
		MaxInFlight:     2048,
		MaxPending:      20_000,
		MaxUncommitted:  250_000,
		FetchBatch:      512,
		ReportBatch:     512,
		CommitInterval:  100 * time.Millisecond,
		MaxLinksPerPage: 10_000,
		HTTP2:           true,
		StateDir:        ".frontier",
		StatsInterval:   30 * time.Second,
		ShutdownTimeout: 30 * time.Second,
	}
}

// Validate reports every invalid value, each named by its key.
func (c Config) Validate() error {
	var errs []error
	bad := func(key string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("spider: "+key+": "+format, args...))
	}
	if strings.TrimSpace(c.UserAgent) == "" || strings.ContainsAny(c.UserAgent, "\r\n") {
		bad("user_agent", "%q is not a usable User-Agent", c.UserAgent)
	}
	positive := map[string]int{
		"conns_per_host": c.ConnsPerHost, "robots_cache_size": c.RobotsCacheSize, "max_in_flight": c.MaxInFlight,
		"max_pending": c.MaxPending, "fetch_batch": c.FetchBatch, "report_batch": c.ReportBatch,
		"max_links_per_page": c.MaxLinksPerPage,
	}
	if c.MaxUncommitted < 0 {
		bad("max_uncommitted", "%d, want >= 0", c.MaxUncommitted)
	}
	for _, k := range []string{"conns_per_host", "robots_cache_size", "max_in_flight", "max_pending", "fetch_batch", "report_batch", "max_links_per_page"} {
		if positive[k] <= 0 {
			bad(k, "%d, want > 0", positive[k])
		}
	}
	if c.Delay < 0 {
		bad("delay", "%v, want >= 0", c.Delay)
	}
	if c.MaxCrawlDelay < 0 {
		bad("max_crawl_delay", "%v, want >= 0", c.MaxCrawlDelay)
	}
	durations := map[string]time.Duration{
		"robots_ttl": c.RobotsTTL, "robots_error_ttl": c.RobotsErrorTTL, "connect_timeout": c.ConnectTimeout,
		"request_timeout": c.RequestTimeout, "commit_interval": c.CommitInterval, "stats_interval": c.StatsInterval,
		"shutdown_timeout": c.ShutdownTimeout,
	}
	for _, k := range []string{"robots_ttl", "robots_error_ttl", "connect_timeout", "request_timeout", "commit_interval", "stats_interval", "shutdown_timeout"} {
		if durations[k] <= 0 {
			bad(k, "%v, want > 0", durations[k])
		}
	}
	if c.Politeness != PolitenessHost && c.Politeness != PolitenessIP {
		bad("politeness", "%q, want %s or %s", c.Politeness, PolitenessHost, PolitenessIP)
	}
	if c.DNSTTL <= 0 || c.DNSErrorTTL <= 0 {
		bad("dns_ttl", "%v with dns_error_ttl %v, want both > 0", c.DNSTTL, c.DNSErrorTTL)
	}
	if c.DNSCacheSize <= 0 {
		bad("dns_cache_size", "%d, want > 0", c.DNSCacheSize)
	}
	if c.RobotsTTL > 24*time.Hour {
		bad("robots_ttl", "%v, want <= 24h (RFC 9309 §2.4: a cached robots.txt is not used for longer)", c.RobotsTTL)
	}
	if c.RobotsGiveUp < 0 {
		bad("robots_give_up", "%v, want >= 0", c.RobotsGiveUp)
	}
	if c.MaxBodyBytes <= 0 {
		bad("max_body_bytes", "%d, want > 0", c.MaxBodyBytes)
	}
	if c.BodyBudgetBytes < 0 {
		bad("body_budget_bytes", "%d, want >= 0 (0: the default)", c.BodyBudgetBytes)
	}
	if c.SpillBytes <= 0 {
		bad("spill_bytes", "%d, want > 0", c.SpillBytes)
	}
	if c.HostFailures < 0 {
		bad("host_failures", "%d, want >= 0", c.HostFailures)
	}
	if c.HostFailures > 0 && (c.HostBackoff <= 0 || c.HostBackoffMax < c.HostBackoff) {
		bad("host_backoff", "%v with host_backoff_max %v, want 0 < host_backoff <= host_backoff_max", c.HostBackoff, c.HostBackoffMax)
	}
	if c.MaxRedirects < 0 {
		bad("max_redirects", "%d, want >= 0", c.MaxRedirects)
	}
	return errors.Join(errs...)
}
