package web

import (
	"net/url"
	"slices"
	"strings"
)

// loopPrefix starts the paths of host1's redirect loop.
const loopPrefix = "/r/loop/"

// CrawlCheck compares what the site's servers saw with the ground truth of a crawl from some seeds.
type CrawlCheck struct {
	// Reachable counts the URLs a polite crawler asks the servers for (outcomes OK, HTTPError, Redirect, Large).
	Reachable int
	// Missing are reachable URLs that no request asked for.
	Missing []string
	// Twice maps each URL requested more than once to its request count. robots.txt files are not counted,
	// nor the redirect loop's hops, which one request repeats until the crawler's redirect limit.
	Twice map[string]int
	// RobotsViolations are URLs robots.txt disallows that were requested anyway.
	RobotsViolations []string
}

// OK reports whether the crawl fetched every reachable URL once and obeyed robots.txt.
func (c CrawlCheck) OK() bool {
	return len(c.Missing) == 0 && len(c.Twice) == 0 && len(c.RobotsViolations) == 0
}

// CheckCrawl compares the requests the servers recorded (Fetches) with Reachable(seeds...).
func (s *Site) CheckCrawl(seeds ...string) (CrawlCheck, error) {
	want, err := s.Reachable(seeds...)
	if err != nil {
		return CrawlCheck{}, err
	}
	fetched := s.Fetches()
	c := CrawlCheck{Twice: map[string]int{}}
	reachable := want.URLs(OK, HTTPError, Redirect, Large)
	c.Reachable = len(reachable)
	for _, u := range reachable {
		if fetched[u] == 0 {
			c.Missing = append(c.Missing, u)
		}
	}
	for u, n := range fetched {
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
	return c, nil
}
