package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Robots says what a host answers for /robots.txt.
type Robots int

// The robots.txt behaviours of the hosts (see the package doc for which host has which).
const (
	// RobotsStandard serves the standard rules: /private/ is disallowed except /private/open.html, and so are
	// URLs containing "sessionid=" and paths ending in ".bak"; the agent FrontierTestBadBot is disallowed everywhere.
	RobotsStandard Robots = iota
	// RobotsCrawlDelay serves the standard rules plus Crawl-delay: Config.CrawlDelay in the "*" group.
	RobotsCrawlDelay
	// RobotsUnavailable answers 503: RFC 9309 says to treat the host as fully disallowed.
	RobotsUnavailable
	// RobotsMissing answers 404: everything is allowed.
	RobotsMissing
	// RobotsNoAnswer never answers (the blackhole host).
	RobotsNoAnswer
)

func (r Robots) String() string {
	switch r {
	case RobotsStandard:
		return "standard"
	case RobotsCrawlDelay:
		return "crawl-delay"
	case RobotsUnavailable:
		return "unavailable(503)"
	case RobotsMissing:
		return "missing(404)"
	case RobotsNoAnswer:
		return "no-answer"
	}
	return fmt.Sprintf("Robots(%d)", int(r))
}

// BadBot is the user agent that the standard robots.txt disallows everywhere.
const BadBot = "FrontierTestBadBot"

type robotsRule struct {
	allow   bool
	pattern string
}

var standardRules = []robotsRule{
	{false, "/private/"},
	{true, "/private/open.html"},
	{false, "/*sessionid="},
	{false, "/*.bak$"},
}

// robotsTxt returns the body of a standard robots.txt; delay > 0 adds a Crawl-delay line.
func robotsTxt(host string, delay time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# robots.txt of %s (frontiertest/web)\n\nUser-agent: %s\nDisallow: /\n\nUser-agent: *\n", host, BadBot)
	for _, r := range standardRules {
		if r.allow {
			fmt.Fprintf(&b, "Allow: %s\n", r.pattern)
		} else {
			fmt.Fprintf(&b, "Disallow: %s\n", r.pattern)
		}
	}
	if delay > 0 {
		fmt.Fprintf(&b, "Crawl-delay: %s\n", strconv.FormatFloat(delay.Seconds(), 'f', -1, 64))
	}
	return b.String()
}

// robotsAllowed reports whether the robots.txt behaviour r lets agent fetch pathQuery (an escaped path and query).
func robotsAllowed(r Robots, agent, pathQuery string) bool {
	switch r {
	case RobotsMissing:
		return true
	case RobotsUnavailable, RobotsNoAnswer:
		return false
	}
	if pathQuery == "/robots.txt" {
		return true
	}
	token, _, _ := strings.Cut(agent, "/")
	token, _, _ = strings.Cut(strings.TrimSpace(token), " ")
	if strings.EqualFold(token, BadBot) {
		return false
	}
	best, allow := -1, true
	for _, rule := range standardRules {
		if !robotsMatch(rule.pattern, pathQuery) {
			continue
		}
		n := len(rule.pattern)
		if n > best || n == best && rule.allow {
			best, allow = n, rule.allow
		}
	}
	return allow
}

// robotsMatch matches an RFC 9309 pattern ('*' any run, trailing '$' end anchor) against the start of s.
func robotsMatch(pattern, s string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	pattern = strings.TrimSuffix(pattern, "$")
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	pos := len(parts[0])
	for i, p := range parts[1:] {
		if i == len(parts)-2 && anchored {
			return strings.HasSuffix(s[pos:], p)
		}
		j := strings.Index(s[pos:], p)
		if j < 0 {
			return false
		}
		pos += j + len(p)
	}
	return !anchored || pos == len(s)
}
