package web

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Hostile adds to the site what a crawler meets on a real web and must survive without fetching a page twice,
// losing one, or running forever. Every field is off by default, so the default site's graph does not change.
type Hostile struct {
	// Redirects is the fraction of a regular page's random links written through a redirect to their target:
	// /moved/HOST/PATH answers 301 to the page (root-relative Location on the same host, absolute to another
	// host), and one in three such links goes through /via/HOST/PATH first (302 to /moved/...). The target is
	// also linked directly from other pages, so a crawler discovers some redirect sources before their
	// targets and some after. In [0, 1].
	Redirects float64
	// Failing is the fraction of regular pages (home pages excepted) that fail transiently before answering
	// 200: 500 once, 502 once, 503 twice (Retry-After: 1), 504 once, or 429 once (Retry-After: 1). A crawler
	// that retries twice gets every one of them. In [0, 1].
	Failing float64
	// Traps gives every content host infinite URL spaces, linked from its home page: a calendar
	// (/calendar?month=YYYY-MM, linking the months before and after), a session-id shop (/shop?sid=N and
	// /shop/item?sid=N, each linking sid N+1), a relative-link loop (/s/x/, linking "x/": /s/x/x/, /s/x/x/x/, ...)
	// and an ever deeper path (/deep/1/, linking "N+1/"). Trap pages are not in the graph: Reachable never
	// lists them, and TrapFetches counts what a crawler asked for.
	Traps bool
	// Chains gives every content host an endless calendar by path (/cal/1 links /cal/2, …) and host1.test one
	// by query string (/events?date=2026-11-25 links the next day), linked from the home pages: traps no URL
	// rule sees (see chains.go). Trap pages, counted by TrapFetches.
	Chains bool
	// DeepPages adds to the last content host that many regular pages /articles/<word-slug> chained from its
	// home page, so the last is DeepPages links deep (at most 576; see chains.go). 0: none.
	DeepPages int
	// SitemapPages adds to host1.test that many pages no page links to, listed only in its sitemaps, which its
	// robots.txt names (see sitemaps.go); host1.test serves the standard robots.txt then, even on a Plain site.
	// 0: none.
	SitemapPages int
}

func (h Hostile) validate() error {
	var errs []error
	if h.Redirects < 0 || h.Redirects > 1 {
		errs = append(errs, fmt.Errorf("web: hostile redirect fraction = %v, want 0..1", h.Redirects))
	}
	if h.Failing < 0 || h.Failing > 1 {
		errs = append(errs, fmt.Errorf("web: hostile failing fraction = %v, want 0..1", h.Failing))
	}
	if h.SitemapPages < 0 || h.SitemapPages > maxDeepPages {
		errs = append(errs, fmt.Errorf("web: hostile sitemap pages = %d, want 0..%d", h.SitemapPages, maxDeepPages))
	}
	if h.DeepPages < 0 || h.DeepPages > maxDeepPages {
		errs = append(errs, fmt.Errorf("web: hostile deep pages = %d, want 0..%d", h.DeepPages, maxDeepPages))
	}
	return errors.Join(errs...)
}

// redirectTo returns the redirect page on host h that leads to t, creating it (and, one time in three, a
// /via/ hop before it) on first use.
func redirectTo(g *graph, rng *rand.Rand, h *Host, t *Page) *Page {
	moved := "/moved/" + t.host.Name + t.key
	m := h.pages[moved]
	if m == nil {
		m = g.add(h, moved, kindRedirect, http.StatusMovedPermanently)
		m.Location, m.location = t.URL, t.URL
		if t.host == h {
			m.location = t.key
		}
	}
	if rng.IntN(3) != 0 {
		return m
	}
	via := "/via/" + t.host.Name + t.key
	v := h.pages[via]
	if v == nil {
		v = g.add(h, via, kindRedirect, http.StatusFound)
		v.Location, v.location = m.URL, m.key
	}
	return v
}

// failModes are the transient failures of Hostile.Failing: status and how many requests get it.
var failModes = []struct{ status, n int }{{500, 1}, {502, 1}, {503, 2}, {504, 1}, {429, 1}}

// hostile adds the Hostile features that need the regular pages: failing pages and the traps' entry links.
func hostile(g *graph, cfg Config, content []*Host, regular [][]*Page) {
	hc := cfg.Hostile
	chains(g, cfg, content, regular)
	sitemapPages(g, cfg, content, regular)
	for i := range content {
		rng := rand.New(rand.NewPCG(cfg.Seed^0x5eed, uint64(i)))
		if hc.Failing > 0 {
			for _, p := range regular[i][1:] {
				if rng.Float64() < hc.Failing {
					m := failModes[rng.IntN(len(failModes))]
					p.failStatus, p.failN = m.status, m.n
				}
			}
		}
		if hc.Traps {
			home := regular[i][0]
			for _, href := range []string{"calendar?month=2026-11", "/shop?sid=1", "/s/x/", "/deep/1/"} {
				home.raw(fmt.Sprintf(`<p><a href="%s">trap</a></p>`, href))
			}
		}
	}
}

// serveFailure answers a transient failure if p is still failing; it reports whether it did.
func (p *Page) serveFailure(w http.ResponseWriter) bool {
	if p.failN == 0 || p.requests.Add(1) > int64(p.failN) {
		return false
	}
	if p.failStatus == http.StatusServiceUnavailable || p.failStatus == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(p.failStatus)
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html><body><p>try again later (%d)</p></body></html>\n", p.failStatus)
	return true
}

var (
	trapS    = regexp.MustCompile(`^/s/(x/)+$`)
	trapDeep = regexp.MustCompile(`^/deep/([0-9]+/)+$`)
)

// isTrap reports whether key (escaped path?sorted query) is a trap page.
func isTrap(key string) bool {
	if isChain(key) {
		return true
	}
	path, _, _ := strings.Cut(key, "?")
	return path == "/calendar" || path == "/shop" || path == "/shop/item" || trapS.MatchString(path) || trapDeep.MatchString(path)
}

// serveTrap answers a trap page; it reports false when key is none.
func (h *Host) serveTrap(w http.ResponseWriter, key string) bool {
	if h.serveSitemap(w, key) {
		return true
	}
	if h.site.cfg.Hostile.Chains && h.serveChain(w, key) {
		return true
	}
	if !h.site.cfg.Hostile.Traps {
		return false
	}
	path, rawQuery, _ := strings.Cut(key, "?")
	q, _ := url.ParseQuery(rawQuery)
	var links []string
	switch {
	case path == "/calendar":
		var y, m int
		if _, err := fmt.Sscanf(q.Get("month"), "%d-%d", &y, &m); err != nil || m < 1 || m > 12 {
			return false
		}
		prev, next := fmt.Sprintf("%04d-%02d", y, m-1), fmt.Sprintf("%04d-%02d", y, m+1)
		if m == 1 {
			prev = fmt.Sprintf("%04d-12", y-1)
		}
		if m == 12 {
			next = fmt.Sprintf("%04d-01", y+1)
		}
		links = []string{"?month=" + prev, "/calendar?month=" + next}
	case path == "/shop" || path == "/shop/item":
		sid, err := strconv.Atoi(q.Get("sid"))
		if err != nil {
			return false
		}
		links = []string{fmt.Sprintf("/shop?sid=%d", sid+1), fmt.Sprintf("/shop/item?sid=%d", sid+1)}
	case trapS.MatchString(path):
		links = []string{"x/"}
	case trapDeep.MatchString(path):
		segs := strings.Split(strings.Trim(path, "/"), "/")
		n, _ := strconv.Atoi(segs[len(segs)-1])
		links = []string{strconv.Itoa(n+1) + "/"}
	default:
		return false
	}
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html><head><title>trap</title></head><body>\n<p><a href=\"/\">home</a></p>\n")
	for _, l := range links {
		fmt.Fprintf(&b, "<p><a href=\"%s\">more</a></p>\n", htmlEscape(l))
	}
	b.WriteString("</body></html>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(http.StatusOK)
	w.Write(b.Bytes())
	return true
}

// TrapFetches counts the requests for trap pages (Hostile.Traps), per host name.
func (s *Site) TrapFetches() map[string]int {
	out := map[string]int{}
	for _, h := range s.content {
		h.mu.Lock()
		for _, r := range h.mu.log {
			if isTrap(targetKey(r.Target)) {
				out[h.Name]++
			}
		}
		h.mu.Unlock()
	}
	return out
}

// Served counts, per normalised URL, the answers with a status below 400 (pages and redirects, not errors):
// a URL served twice was fetched twice for nothing, while an error may be retried.
func (s *Site) Served() map[string]int {
	return s.countURLs(func(r *Request) bool { return r.Status != 0 && r.Status < 400 })
}

// targetKey is the routing key of a request target, as Host.answer computes it.
func targetKey(target string) string {
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return target
	}
	key := normEscapes(removeDots(u.EscapedPath()))
	if u.RawQuery != "" {
		key += "?" + sortQuery(u.RawQuery)
	}
	return key
}
