package web

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Sitemap pages (Hostile.SitemapPages): pages no page links to, listed only in host1.test's sitemaps, which
// its robots.txt names (Sitemap: http://host1.test/sitemap_index.xml). The index lists three sitemaps, one of
// each kind: /sitemap-a.xml (a urlset with lastmod, changefreq and priority), /sitemap-b.xml.gz (a gzipped
// urlset) and /sitemap-c.txt (one URL a line); the pages, /hidden/<word-slug>.html, are split among them.
// SitemapURLs lists the pages, SitemapIndex is the index's URL. The sitemap files are not pages of the
// graph; the hidden pages are, but Reachable does not list them (no link leads to them).

// sitemapFiles are the sitemaps of the index, in order.
var sitemapFiles = []string{"/sitemap-a.xml", "/sitemap-b.xml.gz", "/sitemap-c.txt"}

// hiddenPath is the path of sitemap page k.
func hiddenPath(k int) string {
	return "/hidden" + strings.TrimPrefix(DeepSlug(k), "/articles") + ".html"
}

// sitemapPages adds the hidden pages to host1.
func sitemapPages(g *graph, cfg Config, content []*Host, regular [][]*Page) {
	for k := range cfg.Hostile.SitemapPages {
		p := g.add(content[0], hiddenPath(k), kindHTML, 200)
		p.title = fmt.Sprintf("%s hidden page %d", content[0].Name, k)
		p.pad = cfg.PageBytes
		p.link("/", regular[0][0].URL, "home")
	}
}

// SitemapIndex is the URL of host1.test's sitemap index ("" without Hostile.SitemapPages).
func (s *Site) SitemapIndex() string {
	if s.cfg.Hostile.SitemapPages == 0 {
		return ""
	}
	return s.content[0].Origin + "/sitemap_index.xml"
}

// SitemapURLs lists the pages only host1.test's sitemaps lead to.
func (s *Site) SitemapURLs() []string {
	var out []string
	for k := range s.cfg.Hostile.SitemapPages {
		out = append(out, s.content[0].Origin+hiddenPath(k))
	}
	return out
}

// robotsSitemapLines are the Sitemap lines of h's robots.txt.
func (h *Host) robotsSitemapLines() string {
	if h.site.cfg.Hostile.SitemapPages == 0 || h != h.site.content[0] {
		return ""
	}
	return "\nSitemap: " + h.Origin + "/sitemap_index.xml\n"
}

// serveSitemap answers host1's sitemap files; it reports false when key is none.
func (h *Host) serveSitemap(w http.ResponseWriter, key string) bool {
	n := h.site.cfg.Hostile.SitemapPages
	if n == 0 || h != h.site.content[0] {
		return false
	}
	var b bytes.Buffer
	ctype := "application/xml"
	part := func(i int) (from, to int) { return i * n / len(sitemapFiles), (i + 1) * n / len(sitemapFiles) }
	switch key {
	case "/sitemap_index.xml":
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
		for _, f := range sitemapFiles {
			fmt.Fprintf(&b, "  <sitemap><loc>%s%s</loc><lastmod>2026-11-20</lastmod></sitemap>\n", h.Origin, f)
		}
		b.WriteString("</sitemapindex>\n")
	case sitemapFiles[0], sitemapFiles[1]:
		i := 0
		if key == sitemapFiles[1] {
			i = 1
		}
		from, to := part(i)
		var x bytes.Buffer
		x.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
		for k := from; k < to; k++ {
			fmt.Fprintf(&x, "  <url><loc>%s%s</loc><lastmod>2026-11-%02d</lastmod><changefreq>weekly</changefreq><priority>0.%d</priority></url>\n",
				h.Origin, hiddenPath(k), 1+k%28, k%10)
		}
		x.WriteString("</urlset>\n")
		if i == 0 {
			b = x
			break
		}
		zw := gzip.NewWriter(&b)
		zw.Write(x.Bytes())
		zw.Close()
		ctype = "application/gzip"
	case sitemapFiles[2]:
		from, to := part(2)
		for k := from; k < to; k++ {
			fmt.Fprintf(&b, "%s%s\n", h.Origin, hiddenPath(k))
		}
		ctype = "text/plain; charset=utf-8"
	default:
		return false
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(http.StatusOK)
	w.Write(b.Bytes())
	return true
}
