package web

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func hostileConfig() Config {
	cfg := smallConfig()
	cfg.Hostile = Hostile{Redirects: 0.3, Failing: 0.3, Traps: true}
	return cfg
}

func TestHostileValidate(t *testing.T) {
	for _, h := range []Hostile{{Redirects: -0.1}, {Redirects: 1.5}, {Failing: -1}, {Failing: 2}} {
		cfg := DefaultConfig()
		cfg.Hostile = h
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "hostile") {
			t.Errorf("%+v: err %v, want a hostile error", h, err)
		}
	}
}

// TestHostileRedirects: redirect sources lead to regular pages (same and other hosts), reached both ways.
func TestHostileRedirects(t *testing.T) {
	s := Start(t, hostileConfig())
	reach, err := s.Reachable(s.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	var moved, via, cross int
	for _, p := range s.Pages() {
		if p.Status < 300 || p.Status >= 400 {
			continue
		}
		switch {
		case strings.Contains(p.URL, "/moved/"):
			moved++
			if s.Page(p.Location) == nil || s.Page(p.Location).Host != strings.Split(strings.TrimPrefix(p.URL[strings.Index(p.URL, "/moved/"):], "/moved/"), "/")[0] {
				t.Errorf("%s redirects to %s, not a page of the host its path names", p.URL, p.Location)
			}
			if s.Page(p.Location).Host != p.Host {
				cross++
			}
		case strings.Contains(p.URL, "/via/"):
			via++
			if !strings.Contains(p.Location, "/moved/") {
				t.Errorf("%s redirects to %s, want a /moved/ page", p.URL, p.Location)
			}
		}
		if o, ok := reach[p.URL]; ok && o != Redirect && o != RobotsDisallowed {
			t.Errorf("%s: reach outcome %q, want redirect", p.URL, reach[p.URL])
		}
	}
	if moved == 0 || via == 0 || cross == 0 {
		t.Errorf("moved %d, via %d, cross-host %d redirects: want some of each", moved, via, cross)
	}
}

// TestHostileFailingPages: a failing page answers its failure status the configured number of times, then 200.
func TestHostileFailingPages(t *testing.T) {
	s := Start(t, hostileConfig())
	c := s.Client(time.Minute)
	defer c.CloseIdleConnections()
	n := 0
	for _, p := range s.Pages() {
		if p.failN == 0 {
			continue
		}
		n++
		for i := range p.failN {
			resp := get(t, c, p.URL)
			readAll(t, resp)
			if resp.StatusCode != p.failStatus {
				t.Errorf("%s try %d: %d, want %d", p.URL, i+1, resp.StatusCode, p.failStatus)
			}
			if ra := resp.Header.Get("Retry-After"); (p.failStatus == 503 || p.failStatus == 429) != (ra == "1") {
				t.Errorf("%s: status %d with Retry-After %q", p.URL, p.failStatus, ra)
			}
		}
		resp := get(t, c, p.URL)
		readAll(t, resp)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s after %d failures: %d, want 200", p.URL, p.failN, resp.StatusCode)
		}
	}
	if n == 0 {
		t.Fatal("no failing pages")
	}
	check, err := s.CheckCrawl(s.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	if len(check.Unserved) != 0 {
		t.Errorf("unserved after every failing page was retried: %v", check.Unserved)
	}
}

// TestHostileTraps: every trap page links to a new trap page, forever, and is counted as a trap fetch.
func TestHostileTraps(t *testing.T) {
	s := Start(t, hostileConfig())
	c := s.Client(time.Minute)
	defer c.CloseIdleConnections()
	h := s.Hosts()[1]
	for _, start := range []string{"/calendar?month=2026-11", "/shop?sid=1", "/s/x/", "/deep/1/"} {
		walkTraps(t, c, h, start, 30)
	}
	if got := s.TrapFetches()[h.Name]; got != 4*30 {
		t.Errorf("trap fetches %d, want %d", got, 4*30)
	}
}

// walkTraps fetches n pages from h's page start on, each followed by the last link it holds to a trap page of
// h other than itself and the home page, and returns the URL it stopped at (the n+1st, not fetched). It fails
// the test on a page that does not answer 200 or links no such page.
func walkTraps(t *testing.T, c *http.Client, h *Host, start string, n int) string {
	t.Helper()
	u := h.Origin + start
	for range n {
		resp := get(t, c, u)
		body := readAll(t, resp)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", u, resp.StatusCode)
		}
		follow, _ := extract(t, u, body)
		var next string
		for _, l := range follow {
			if l != h.Origin+"/" && l != u && isTrap(strings.TrimPrefix(l, h.Origin)) {
				next = l
			}
		}
		if next == "" {
			t.Fatalf("%s links no new trap page: %v", u, follow)
		}
		u = next
	}
	return u
}
