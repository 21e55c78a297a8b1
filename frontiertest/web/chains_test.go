package web

import (
	"strings"
	"testing"
	"time"
)

// TestChains: the path chain on every host and the query chain on host1 link a new trap page forever; the
// deep pages are regular, reachable and chained from the last host's home page with distinct digit-free paths.
func TestChains(t *testing.T) {
	cfg := smallConfig()
	cfg.Hostile = Hostile{Chains: true, DeepPages: 300}
	s := Start(t, cfg)
	c := s.Client(time.Minute)
	defer c.CloseIdleConnections()
	h0, h1 := s.Hosts()[0], s.Hosts()[1]
	walk := func(h *Host, start string, n int) {
		u := walkTraps(t, c, h, start, n)
		if want := h.Origin + start; !strings.Contains(u, "/cal/") && !strings.Contains(u, "2026-12-") {
			t.Errorf("from %s, %d hops end at %s", want, n, u)
		}
	}
	walk(h0, "/cal/1", 20)
	walk(h1, "/cal/1", 20)
	walk(h0, "/events?date=2026-11-25", 20) // ends on 2026-12-15
	if got := s.TrapFetches(); got[h0.Name] != 40 || got[h1.Name] != 20 {
		t.Errorf("trap fetches %v, want 40 on %s and 20 on %s", got, h0.Name, h1.Name)
	}
	if resp := get(t, c, h1.Origin+"/events?date=2026-11-25"); resp.StatusCode != 404 {
		t.Errorf("the query chain answers %d on %s, want 404 (host1 only)", resp.StatusCode, h1.Name)
	}

	reach, err := s.Reachable(s.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	last := s.Hosts()[len(s.Hosts())-1]
	seen := map[string]bool{}
	for k := range 300 {
		slug := DeepSlug(k)
		if strings.ContainsAny(slug, "0123456789") || seen[slug] {
			t.Fatalf("deep page %d: slug %s repeats or has a digit", k, slug)
		}
		seen[slug] = true
		p := s.Page(last.Origin + slug)
		if p == nil || reach[p.URL] != OK {
			t.Fatalf("deep page %d (%s): %v, reach %q", k, slug, p, reach[last.Origin+slug])
		}
		if k+1 < 300 && !strings.Contains(strings.Join(p.Links, " "), last.Origin+DeepSlug(k+1)) {
			t.Errorf("%s does not link the next deep page: %v", p.URL, p.Links)
		}
	}
}
