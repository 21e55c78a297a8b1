package web

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Chains and deep pages (Hostile.Chains, Hostile.DeepPages): the traps a URL rule cannot see, and the real deep
// site a trap rule must not cut short.
//
// Every content host serves /cal/N, a page linking /cal/N+1 (and home): no query string, no repeated segment,
// a constant path depth, for ever. host1.test also serves /events?date=YYYY-MM-DD, linking the next day. Both
// are linked from the home page and are trap pages (TrapFetches counts them; Reachable never lists them).
//
// The last content host gets DeepPages regular pages /articles/<slug>, every slug a distinct pair of words
// without a digit: its home page links the first, and each links the next, so the last is DeepPages links
// deep and a crawl that reaches it has followed the whole chain.

// chainFirstDate is the first day of host1.test's query chain.
const chainFirstDate = "2026-11-25"

// slugWords make the deep pages' slugs: len² distinct pairs.
var slugWords = []string{"apple", "birch", "cedar", "delta", "ember", "fjord", "grove", "harbor", "iris", "juniper",
	"kelp", "lilac", "maple", "nectar", "opal", "pebble", "quartz", "raven", "sage", "thistle", "umber", "violet",
	"willow", "yarrow"}

// DeepSlug is the path of deep page k (0-based): /articles/<word>-<word>, distinct for every k below
// len(slugWords)².
func DeepSlug(k int) string {
	n := len(slugWords)
	return "/articles/" + slugWords[(k/n)%n] + "-" + slugWords[k%n]
}

// maxDeepPages is how many distinct slugs DeepSlug makes.
var maxDeepPages = len(slugWords) * len(slugWords)

// chains links the chains from the home pages and adds the deep pages.
func chains(g *graph, cfg Config, content []*Host, regular [][]*Page) {
	hc := cfg.Hostile
	if hc.Chains {
		for i := range content {
			home := regular[i][0]
			home.raw(`<p><a href="/cal/1">calendar</a></p>`)
			if i == 0 {
				home.raw(`<p><a href="/events?date=` + chainFirstDate + `">events</a></p>`)
			}
		}
	}
	if hc.DeepPages > 0 {
		h := content[len(content)-1]
		prev := regular[len(content)-1][0]
		for k := range hc.DeepPages {
			p := g.add(h, DeepSlug(k), kindHTML, 200)
			p.title = fmt.Sprintf("%s article %d", h.Name, k)
			p.pad = cfg.PageBytes
			p.link("/", regular[len(content)-1][0].URL, "home")
			prev.link(p.key, p.URL, "next article")
			prev = p
		}
	}
}

// isChain reports whether key (escaped path?sorted query) is a chain page.
func isChain(key string) bool {
	path, query, _ := strings.Cut(key, "?")
	if n, ok := strings.CutPrefix(path, "/cal/"); ok {
		_, err := strconv.Atoi(n)
		return err == nil && query == ""
	}
	return path == "/events" && strings.HasPrefix(query, "date=")
}

// serveChain answers a chain page; it reports false when key is none.
func (h *Host) serveChain(w http.ResponseWriter, key string) bool {
	path, rawQuery, _ := strings.Cut(key, "?")
	var next string
	if n, ok := strings.CutPrefix(path, "/cal/"); ok && rawQuery == "" {
		i, err := strconv.Atoi(n)
		if err != nil || i < 1 {
			return false
		}
		next = "/cal/" + strconv.Itoa(i+1)
	} else if path == "/events" && h == h.site.content[0] {
		q, _ := url.ParseQuery(rawQuery)
		d, err := time.Parse(time.DateOnly, q.Get("date"))
		if err != nil {
			return false
		}
		next = "/events?date=" + d.AddDate(0, 0, 1).Format(time.DateOnly)
	} else {
		return false
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><title>%s</title></head><body>\n<p><a href=\"/\">home</a></p>\n<p><a href=\"%s\">next</a></p>\n</body></html>\n",
		htmlEscape(key), htmlEscape(next))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(http.StatusOK)
	w.Write(b.Bytes())
	return true
}
