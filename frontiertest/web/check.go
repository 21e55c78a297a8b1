package web

import (
	"net"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// loopPrefix starts the paths of host1's redirect loop.
const loopPrefix = "/r/loop/"

// CrawlCheck compares what the site's servers saw with the ground truth of a crawl from some seeds.
type CrawlCheck struct {
	// Reachable counts the URLs a polite crawler asks the servers for (outcomes OK, HTTPError, Redirect, Large).
	Reachable int
	// Missing are reachable URLs that no request asked for.
	Missing []string
	// Twice maps each URL served more than once (a page or a redirect: an answer below 400; an error may be
	// retried) to its count. robots.txt files are not counted, nor the redirect loop's hops, which a crawler
	// that follows redirects itself repeats until its redirect limit.
	Twice map[string]int
	// Unserved are reachable pages (outcome OK) that never got a 2xx answer: e.g. a page that failed once
	// (Hostile.Failing) and was not retried.
	Unserved []string
	// RobotsViolations are URLs robots.txt disallows that were requested anyway.
	RobotsViolations []string
}

// OK reports whether the crawl fetched every reachable URL once and obeyed robots.txt.
func (c CrawlCheck) OK() bool {
	return len(c.Missing) == 0 && len(c.Twice) == 0 && len(c.RobotsViolations) == 0 && len(c.Unserved) == 0
}

// Coverage is the fraction of reachable URLs the crawl asked for (1 when none is missing).
func (c CrawlCheck) Coverage() float64 {
	if c.Reachable == 0 {
		return 1
	}
	return float64(c.Reachable-len(c.Missing)) / float64(c.Reachable)
}

// CheckCrawl compares the requests the servers recorded (Fetches) with what a crawler with Frontier's default
// scope reaches from seeds: links within the seeds' registered domains only (SeedDomains), so the special hosts
// other than host1.test's subdomains are out of scope. CheckCrawlWith takes any other crawler.
func (s *Site) CheckCrawl(seeds ...string) (CrawlCheck, error) {
	return s.CheckCrawlWith(ReachOptions{InScope: SeedDomains(seeds...)}, seeds...)
}

// SeedDomains returns a scope predicate: whether a URL's host belongs to the registered domain (public suffix
// + 1) of one of the seeds. www.host1.test and blog.host1.test are in host1.test's domain; slow.test is not.
func SeedDomains(seeds ...string) func(rawURL string) bool {
	domains := map[string]bool{}
	for _, s := range seeds {
		if u, err := url.Parse(s); err == nil {
			domains[registered(u.Hostname())] = true
		}
	}
	return func(raw string) bool {
		u, err := url.Parse(raw)
		return err == nil && domains[registered(u.Hostname())]
	}
}

func registered(host string) string {
	host = strings.ToLower(host)
	if net.ParseIP(host) != nil {
		return host
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return d
}

// CheckCrawlWith is CheckCrawl for a crawler described by opts (e.g. one with a scope).
func (s *Site) CheckCrawlWith(opts ReachOptions, seeds ...string) (CrawlCheck, error) {
	want, err := s.ReachableWith(opts, seeds...)
	if err != nil {
		return CrawlCheck{}, err
	}
	fetched, served := s.Fetches(), s.Served()
	c := CrawlCheck{Twice: map[string]int{}}
	reachable := want.URLs(OK, HTTPError, Redirect, Large)
	c.Reachable = len(reachable)
	for _, u := range reachable {
		if fetched[u] == 0 {
			c.Missing = append(c.Missing, u)
		}
	}
	for _, u := range want.URLs(OK) {
		if p := s.g.pages[u]; p != nil && p.Status < 300 && served[u] == 0 && fetched[u] > 0 {
			c.Unserved = append(c.Unserved, u)
		}
	}
	for u, n := range served {
		p, err := url.Parse(u)
		if err != nil || p.Path == "/robots.txt" || strings.HasPrefix(p.Path, loopPrefix) {
			continue
		}
		if n > 1 {
			c.Twice[u] = n
		}
	}
	for _, u := range want.URLs(RobotsDisallowed) {
		if fetched[u] > 0 {
			c.RobotsViolations = append(c.RobotsViolations, u)
		}
	}
	slices.Sort(c.Missing)
	slices.Sort(c.Unserved)
	return c, nil
}
