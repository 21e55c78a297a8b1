// Package scope decides which discovered URLs a crawl may follow, and defends it against URL spaces that never
// end (calendars, session ids in URLs, relative links that nest a path forever). It is the `scope` section of
// every role's configuration; the strategy worker applies it to every link and redirect target before the
// strategy sees them, so no strategy can wander off the seeds' sites or into a trap.
//
// A URL is dropped, and the drop counted by reason (Reasons), when:
//   - its scheme is not in Schemes (http and https by default): reason "scheme";
//   - it is longer than MaxURLBytes (2,048): "url_length";
//   - its path ends in an extension of DenyExtensions (images, audio, video, archives, executables, fonts,
//     stylesheets and scripts: files a crawl of pages has no use for): "extension";
//   - it matches an Exclude pattern, or Include patterns are given and it matches none: "exclude", "include";
//   - a path segment occurs more than MaxRepeatedSegments times (/a/b/a/b/a/b/…): "repeated_segments";
//   - its path has more than MaxPathSegments segments: "path_depth";
//   - it is deeper than MaxDepth links from a seed (a redirect does not add depth): "depth";
//   - its host is outside the seeds' hosts (Follow "hosts") or the seeds' registered domains (Follow "domains",
//     the default: www.example.com and blog.example.com both belong to a seed http://example.com/):
//     "out_of_scope";
//   - its host already has HostBudget URLs scheduled (a generous but finite default: 100,000): "host_budget";
//   - its host and path already have MaxQueryVariants distinct query strings scheduled: "query_variants";
//   - its host already has TemplateBudget URLs of its template scheduled (Template: /cal/1, /cal/2, … are one
//     template, and so are ?date=2026-11-25 and the day after): "template_budget".
//
// The first rules need only the URL (Filter.Check). The seed rule needs the seeds, which reach the strategy
// worker that owns each seed's host as add_seeds: that worker records the seed's host and registered domain in
// the domain metadata store (shared by every worker, HBase or Pebble), and a worker that meets a host it does
// not know reads the store. The budgets count what the worker schedules (the host and template budgets in the
// domain metadata store, so they survive restarts; the query variants per path in memory, bounded by
// MaxTrackedPaths, so a restart allows each path another MaxQueryVariants).
//
// # Traps end by default
//
// A trap is a page that links a new URL of its own kind, forever: /cal/1 links /cal/2, which links /cal/3, or
// ?date=2026-11-25 links the next day. No rule on the URL alone catches it (no query string, no repeated
// segment, a constant depth), and the host budget ends it only after 100,000 pages. The template budget does:
// such URLs differ only in numbers, dates or ID-like tokens, which Template collapses, so a trap is one
// template and gets TemplateBudget fetches (500 by default) on each host. A deep real site whose pages have
// distinct paths (/articles/apple-pie, /articles/plum-jam, … linked one from the next) is many templates and
// is crawled whole however deep it goes.
//
// The trade-off: a real site whose pages differ only by a number (/post/1 … /post/N) is one template too, and
// past TemplateBudget of them the rest are dropped (counted as "template_budget"). A 300-post /post/N blog is
// crawled whole under the default; a 5,000-post one loses 4,500 posts. URLs that carry a slug besides the
// number (/questions/123/how-to-x, /2024/05/12/title) are distinct templates again, which is what most large
// sites publish. A crawl that wants every numbered page of a few known large sites raises template_budget
// (or sets it to 0, no limit) and relies on the host budget and the other rules instead. The default, 500,
// sits above the numbered sections of most small sites and keeps a host's traps to hundreds of fetches each.
//
// scope sits at level L1: it imports the standard library and golang.org/x/net/publicsuffix only.
package scope

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Follow modes: which hosts a crawl follows links to.
const (
	FollowDomains = "domains" // the seeds' registered domains (public suffix + 1)
	FollowHosts   = "hosts"   // the seeds' host names exactly
	FollowAny     = "any"     // everywhere
)

// Reasons a URL is dropped (the reason label of the drop counter).
const (
	ReasonScheme           = "scheme"
	ReasonURLLength        = "url_length"
	ReasonExtension        = "extension"
	ReasonExclude          = "exclude"
	ReasonInclude          = "include"
	ReasonRepeatedSegments = "repeated_segments"
	ReasonPathDepth        = "path_depth"
	ReasonDepth            = "depth"
	ReasonOutOfScope       = "out_of_scope"
	ReasonHostBudget       = "host_budget"
	ReasonQueryVariants    = "query_variants"
	ReasonTemplateBudget   = "template_budget"
)

// Reasons lists every drop reason, for metrics and documentation.
var Reasons = []string{ReasonScheme, ReasonURLLength, ReasonExtension, ReasonExclude, ReasonInclude,
	ReasonRepeatedSegments, ReasonPathDepth, ReasonDepth, ReasonOutOfScope, ReasonHostBudget, ReasonQueryVariants,
	ReasonTemplateBudget}

// DefaultDenyExtensions are files a crawl of pages skips: images, audio, video, archives, packages and
// executables, fonts, stylesheets and scripts. Documents (pdf, doc, …) are kept: they are often wanted.
var DefaultDenyExtensions = []string{
	// images
	"mng", "pct", "bmp", "gif", "jpg", "jpeg", "png", "pst", "psp", "tif", "tiff", "ai", "drw", "dxf", "eps",
	"svg", "cdr", "ico", "webp", "avif", "heic",
	// audio
	"mp3", "wma", "ogg", "oga", "wav", "ra", "aac", "mid", "au", "aiff", "flac", "m4a", "opus",
	// video
	"3gp", "asf", "asx", "avi", "mov", "mp4", "mpg", "mpeg", "qt", "rm", "swf", "wmv", "m4v", "flv", "webm", "mkv",
	// archives, packages, executables, disk images
	"7z", "7zip", "bz2", "gz", "tgz", "rar", "tar", "xz", "zip", "zst", "exe", "msi", "bin", "dmg", "iso", "apk",
	"jar", "deb", "rpm",
	// fonts, stylesheets, scripts
	"woff", "woff2", "ttf", "otf", "eot", "css", "js",
}

// Config is the `scope` section.
type Config struct {
	// Follow is "domains" (default), "hosts" or "any".
	Follow string `mapstructure:"follow"`
	// Include, when given, keeps only URLs matching one of these regular expressions (RE2 syntax, unanchored).
	Include []string `mapstructure:"include"`
	// Exclude drops URLs matching any of these regular expressions.
	Exclude []string `mapstructure:"exclude"`
	// Schemes are the URL schemes followed. Default http, https.
	Schemes []string `mapstructure:"schemes"`
	// DenyExtensions are path extensions never queued (compared lower-cased, without the dot). Default
	// DefaultDenyExtensions; an empty list denies none.
	DenyExtensions []string `mapstructure:"deny_extensions"`
	// MaxDepth is the most links from a seed (0: no limit). Default 0.
	MaxDepth int `mapstructure:"max_depth"`
	// MaxURLBytes is the longest URL queued. Default 2,048.
	MaxURLBytes int `mapstructure:"max_url_bytes"`
	// MaxRepeatedSegments is the most times one path segment may occur in a URL's path. Default 3.
	MaxRepeatedSegments int `mapstructure:"max_repeated_segments"`
	// MaxPathSegments is the most segments of a URL's path. Default 32.
	MaxPathSegments int `mapstructure:"max_path_segments"`
	// MaxQueryVariants is the most distinct query strings scheduled for one host and path (0: no limit).
	// Default 1,000.
	MaxQueryVariants int `mapstructure:"max_query_variants"`
	// MaxTrackedPaths bounds the paths whose query variants are counted in memory; past it the counts start
	// over. Default 1,000,000.
	MaxTrackedPaths int `mapstructure:"max_tracked_paths"`
	// HostBudget is the most URLs scheduled per host (0: no limit). Default 100,000.
	HostBudget int64 `mapstructure:"host_budget"`
	// TemplateBudget is the most URLs of one template (Template) scheduled per host (0: no limit). Default
	// 500: a trap ends after 500 fetches; see the package doc for what it costs a site of numbered pages.
	TemplateBudget int64 `mapstructure:"template_budget"`
}

// DefaultTemplateBudget is Config.TemplateBudget's default.
const DefaultTemplateBudget = 500

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{Follow: FollowDomains, Schemes: []string{"http", "https"}, DenyExtensions: slices.Clone(DefaultDenyExtensions),
		MaxURLBytes: 2048, MaxRepeatedSegments: 3, MaxPathSegments: 32, MaxQueryVariants: 1000, MaxTrackedPaths: 1_000_000,
		HostBudget: 100_000, TemplateBudget: DefaultTemplateBudget}
}

// Validate reports every invalid value, naming its key.
func (c Config) Validate() error {
	var errs []error
	switch c.Follow {
	case FollowDomains, FollowHosts, FollowAny:
	default:
		errs = append(errs, fmt.Errorf("follow = %q, want %s, %s or %s", c.Follow, FollowDomains, FollowHosts, FollowAny))
	}
	for i, p := range c.Include {
		if _, err := regexp.Compile(p); err != nil {
			errs = append(errs, fmt.Errorf("include[%d] %q: %w", i, p, err))
		}
	}
	for i, p := range c.Exclude {
		if _, err := regexp.Compile(p); err != nil {
			errs = append(errs, fmt.Errorf("exclude[%d] %q: %w", i, p, err))
		}
	}
	if len(c.Schemes) == 0 {
		errs = append(errs, errors.New("schemes is empty: nothing could be followed"))
	}
	for _, s := range c.Schemes {
		if s == "" || s != strings.ToLower(s) || strings.ContainsAny(s, ":/") {
			errs = append(errs, fmt.Errorf("schemes: %q is not a lower-case scheme name", s))
		}
	}
	for _, e := range c.DenyExtensions {
		if e == "" || strings.HasPrefix(e, ".") || strings.Contains(e, "/") {
			errs = append(errs, fmt.Errorf("deny_extensions: %q, want an extension without its dot", e))
		}
	}
	neg := func(key string, v int64) {
		if v < 0 {
			errs = append(errs, fmt.Errorf("%s = %d, want >= 0", key, v))
		}
	}
	neg("max_depth", int64(c.MaxDepth))
	neg("max_query_variants", int64(c.MaxQueryVariants))
	neg("host_budget", c.HostBudget)
	neg("template_budget", c.TemplateBudget)
	if c.MaxURLBytes < 16 {
		errs = append(errs, fmt.Errorf("max_url_bytes = %d, want >= 16", c.MaxURLBytes))
	}
	if c.MaxRepeatedSegments < 1 {
		errs = append(errs, fmt.Errorf("max_repeated_segments = %d, want >= 1", c.MaxRepeatedSegments))
	}
	if c.MaxPathSegments < 1 {
		errs = append(errs, fmt.Errorf("max_path_segments = %d, want >= 1", c.MaxPathSegments))
	}
	if c.MaxTrackedPaths < 1 {
		errs = append(errs, fmt.Errorf("max_tracked_paths = %d, want >= 1", c.MaxTrackedPaths))
	}
	return errors.Join(errs...)
}

// Filter applies a Config. Check and Key are safe for concurrent use; Variants is not.
type Filter struct {
	cfg              Config
	include, exclude []*regexp.Regexp
	schemes, exts    map[string]bool
	variants         map[string]int // host + path → distinct query strings scheduled
}

// New validates cfg and compiles it.
func New(cfg Config) (*Filter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("scope: %w", err)
	}
	f := &Filter{cfg: cfg, schemes: map[string]bool{}, exts: map[string]bool{}, variants: map[string]int{}}
	for _, p := range cfg.Include {
		f.include = append(f.include, regexp.MustCompile(p))
	}
	for _, p := range cfg.Exclude {
		f.exclude = append(f.exclude, regexp.MustCompile(p))
	}
	for _, s := range cfg.Schemes {
		f.schemes[s] = true
	}
	for _, e := range cfg.DenyExtensions {
		f.exts[strings.ToLower(e)] = true
	}
	return f, nil
}

// Config returns the filter's configuration.
func (f *Filter) Config() Config { return f.cfg }

// Check applies the rules that need only the URL (everything but depth, seeds and budgets); it returns the
// reason to drop raw, or "" to keep it. raw is the URL as the spider reported it (resolved, absolute).
func (f *Filter) Check(raw string) string {
	if len(raw) > f.cfg.MaxURLBytes {
		return ReasonURLLength
	}
	u, err := url.Parse(raw)
	if err != nil {
		u = nil
	}
	return f.check(raw, u)
}

// CheckURL is Check for a caller that has parsed raw already: u is url.Parse(raw), or nil when that failed
// (u is only read). It answers what Check(raw) answers, without parsing raw again.
func (f *Filter) CheckURL(raw string, u *url.URL) string {
	if len(raw) > f.cfg.MaxURLBytes {
		return ReasonURLLength
	}
	return f.check(raw, u)
}

func (f *Filter) check(raw string, u *url.URL) string {
	if u == nil {
		return ReasonScheme // not a URL the spider could fetch
	}
	if !f.schemes[u.Scheme] && !f.schemes[strings.ToLower(u.Scheme)] {
		return ReasonScheme
	}
	p := u.EscapedPath()
	if ext := path.Ext(p); len(ext) > 1 && f.denied(ext[1:]) {
		return ReasonExtension
	}
	for _, re := range f.exclude {
		if re.MatchString(raw) {
			return ReasonExclude
		}
	}
	if len(f.include) > 0 && !slices.ContainsFunc(f.include, func(re *regexp.Regexp) bool { return re.MatchString(raw) }) {
		return ReasonInclude
	}
	// The segments of the path without its outer slashes, empty ones included (strings.Split's count), walked
	// in place: no slice and, for the usual short paths, no map.
	trimmed := strings.Trim(p, "/")
	n := strings.Count(trimmed, "/") + 1
	if n > f.cfg.MaxPathSegments {
		return ReasonPathDepth
	}
	if n > f.cfg.MaxRepeatedSegments && repeated(trimmed, n, f.cfg.MaxRepeatedSegments) {
		return ReasonRepeatedSegments
	}
	return ""
}

// denied reports whether ext (without its dot) is a denied extension, compared lower-cased; the usual
// lower-case extension is looked up without a conversion.
func (f *Filter) denied(ext string) bool {
	if len(f.exts) == 0 {
		return false
	}
	return f.exts[ext] || f.exts[strings.ToLower(ext)]
}

// repeated reports whether a non-empty segment of trimmed (n segments separated by "/") occurs more than max
// times.
func repeated(trimmed string, n, max int) bool {
	if n > 64 {
		seen := make(map[string]int, n)
		for s := range strings.SplitSeq(trimmed, "/") {
			if s == "" {
				continue
			}
			if seen[s]++; seen[s] > max {
				return true
			}
		}
		return false
	}
	var buf [64]string
	segs := buf[:0]
	for s := range strings.SplitSeq(trimmed, "/") {
		segs = append(segs, s)
	}
	for i, s := range segs {
		if s == "" {
			continue
		}
		c := 1
		for _, t := range segs[i+1:] {
			if t == s {
				if c++; c > max {
					return true
				}
			}
		}
	}
	return false
}

// CheckDepth returns ReasonDepth when depth is past MaxDepth.
func (f *Filter) CheckDepth(depth int64) string {
	if f.cfg.MaxDepth > 0 && depth > int64(f.cfg.MaxDepth) {
		return ReasonDepth
	}
	return ""
}

// Key is what a host is in scope by: the host name (Follow "hosts"), its registered domain (Follow
// "domains"), or "" (Follow "any": every host is).
func (f *Filter) Key(host string) string {
	switch f.cfg.Follow {
	case FollowHosts:
		return strings.ToLower(host)
	case FollowDomains:
		return Domain(host)
	}
	return ""
}

// QueryVariant reports whether one more distinct query string may be scheduled for u's host and path; call
// AddVariant once it is. URLs without a query always may.
func (f *Filter) QueryVariant(u *url.URL) bool {
	if f.cfg.MaxQueryVariants == 0 || u.RawQuery == "" {
		return true
	}
	return f.variants[u.Host+u.EscapedPath()] < f.cfg.MaxQueryVariants
}

// AddVariant counts one more distinct query string scheduled for u's host and path.
func (f *Filter) AddVariant(u *url.URL) {
	if f.cfg.MaxQueryVariants == 0 || u.RawQuery == "" {
		return
	}
	if len(f.variants) >= f.cfg.MaxTrackedPaths {
		clear(f.variants)
	}
	f.variants[u.Host+u.EscapedPath()]++
}

// Domain returns the registered domain of a host name (public suffix + 1: www.example.co.uk → example.co.uk);
// an IP address, a bare suffix or a name the list cannot place is its own domain.
func Domain(host string) string {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "" || net.ParseIP(strings.Trim(host, "[]")) != nil {
		return host
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return d
}

// InScope returns a predicate for tools and tests: whether a URL passes Check and belongs to the scope of the
// given seeds (depth and budgets aside).
func InScope(cfg Config, seeds []string) (func(rawURL string) bool, error) {
	f, err := New(cfg)
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for _, s := range seeds {
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("scope: seed %q: %w", s, err)
		}
		keys[f.Key(u.Hostname())] = true
	}
	return func(raw string) bool {
		if f.Check(raw) != "" {
			return false
		}
		u, err := url.Parse(raw)
		return err == nil && keys[f.Key(u.Hostname())]
	}, nil
}
