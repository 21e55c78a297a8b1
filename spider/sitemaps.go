package spider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/scope"
	"github.com/frontiercrawl/frontier/sitemap"
)

// Sitemaps (package sitemap) as a source of URLs. A request whose meta MetaKeySitemap is set is a sitemap: the
// spider fetches it as a stream (never whole in memory), reports it as page_crawled without links of its
// own, and reports its entries as links_extracted: pages of a urlset with their lastmod, changefreq and
// priority in meta (MetaKeyLastMod, MetaKeyChangeFreq, MetaKeyPriority), sitemaps of an index with
// MetaKeySitemap one deeper. Sitemaps enter a crawl as seeds: InjectSitemaps (frontierctl seeds add
// --sitemap), or, with Config.Sitemaps, the Sitemap lines of every robots.txt the spider fetches.
const (
	// MetaKeySitemap marks a sitemap request: int64 1 for one named by a seed or robots.txt, 2 for one listed
	// in an index (Frontier's key).
	MetaKeySitemap = "frontier_sitemap"
	// MetaKeySitemapOwner is the host whose robots.txt listed the sitemap (string): the sitemap may list any
	// URL of that host (sitemap.Options.Owner).
	MetaKeySitemapOwner = "frontier_sitemap_owner"
	// MetaKeyLastMod is a sitemap entry's lastmod in Unix milliseconds (int64), when it had a valid one.
	MetaKeyLastMod = "sitemap_lastmod"
	// MetaKeyChangeFreq is a sitemap entry's changefreq (string: always, hourly, …, never).
	MetaKeyChangeFreq = "sitemap_changefreq"
	// MetaKeyPriority is a sitemap entry's priority in [0, 1] (float64), when it had a valid one.
	MetaKeyPriority = "sitemap_priority"
	// MetaKeySitemapFinalURL is, on a sitemap's page_crawled, the URL it was read from after redirects.
	MetaKeySitemapFinalURL = "frontier_sitemap_final_url"
)

// sitemapsPerMessage bounds the links of one links_extracted reporting sitemap entries.
const sitemapsPerMessage = 1000

// maxSitemapRedirects is how many redirects a sitemap fetch follows (each hop checked against robots.txt).
const maxSitemapRedirects = 5

// sitemapDepth returns r's MetaKeySitemap, 0 when r is no sitemap.
func sitemapDepth(r *frontier.Request) int64 {
	v, ok := r.Meta.Get(MetaKeySitemap)
	if !ok {
		return 0
	}
	switch v := v.(type) {
	case int64:
		return v
	case uint64:
		return int64(v)
	case float64:
		return int64(v)
	case bool:
		if v {
			return 1
		}
	}
	return 0
}

func metaString(m frontier.Map, key string) string {
	v, _ := m.Get(key)
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// processSitemap fetches the sitemap of it (robots.txt already allowed it) and reports it and its entries.
func (s *Spider) processSitemap(ctx context.Context, it *item) {
	if !s.gate(ctx, it.u) || s.hold(ctx, it) {
		return
	}
	select {
	case s.inflight <- struct{}{}:
	case <-ctx.Done():
		return
	}
	s.m.inFlight.Inc()
	status, header, final, entries, err := s.fetchSitemap(ctx, it)
	s.m.inFlight.Dec()
	<-s.inflight
	if ctx.Err() != nil {
		return
	}
	if status == 0 {
		s.m.sitemaps.WithLabelValues("file_error").Inc()
		s.reportError(ctx, it, err)
		return
	}
	if err != nil {
		// The file answered but is not (all) a sitemap, or a limit cut it: the entries before count.
		s.m.sitemaps.WithLabelValues("file_error").Inc()
		s.log.Warn("sitemap", "url", it.req.URL, "entries", len(entries), "err", err)
	} else if status >= 200 && status < 300 {
		s.m.sitemaps.WithLabelValues("file_ok").Inc()
	}
	s.nPages.Add(1)
	s.m.pages.WithLabelValues(statusClass(status)).Inc()
	page := s.reportedRequest(it.req, nil, "")
	if final != "" && final != it.req.URL {
		page.Meta.Set(MetaKeySitemapFinalURL, final)
	}
	resp := &frontier.Response{URL: it.req.URL, Status: status, Headers: toHeaders(header), Request: page}
	msgs := s.appendMsg(nil, domainKey(page), &frontier.PageCrawled{Response: resp})
	byHost := map[string][]*frontier.Request{}
	var order []string
	for _, l := range entries {
		k := string(domainKey(l))
		if _, ok := byHost[k]; !ok {
			order = append(order, k)
		}
		byHost[k] = append(byHost[k], l)
		if len(byHost[k]) == sitemapsPerMessage {
			msgs = s.appendMsg(msgs, []byte(k), &frontier.LinksExtracted{Request: page, Links: byHost[k]})
			byHost[k] = nil
		}
	}
	for _, k := range order {
		if len(byHost[k]) > 0 {
			msgs = s.appendMsg(msgs, []byte(k), &frontier.LinksExtracted{Request: page, Links: byHost[k]})
		}
	}
	s.nLinks.Add(int64(len(entries)))
	s.m.links.Add(float64(len(entries)))
	s.queue(ctx, it, msgs)
}

// fetchSitemap GETs it's sitemap and parses it as it streams in. status is 0 when no answer came (err says
// why); entries are the link requests of the entries allowed.
func (s *Spider) fetchSitemap(ctx context.Context, it *item) (status int, header http.Header, final string, entries []*frontier.Request, err error) {
	ctx, cancel := context.WithTimeout(s.withHeldIP(ctx, it.u), s.cfg.RequestTimeout)
	defer cancel()
	client := &http.Client{Transport: s.fetcher.rt, CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if len(via) > maxSitemapRedirects {
			return named(ErrNameTooManyRedirects, fmt.Errorf("sitemap %s: more than %d redirects", it.req.URL, maxSitemapRedirects))
		}
		return s.redirectCheck(r.Context(), r.URL)
	}}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, it.u.String(), nil)
	if err != nil {
		return 0, nil, "", nil, named(ErrNameInvalidURL, err)
	}
	hreq.Header.Set("User-Agent", s.cfg.UserAgent)
	hreq.Header.Set("Accept", "application/xml,text/xml,text/plain;q=0.9,*/*;q=0.8")
	resp, err := client.Do(hreq)
	s.answered(it.u, time.Now())
	if err != nil {
		var fe *fetchError
		if errors.As(err, &fe) {
			return 0, nil, "", nil, fe
		}
		return 0, nil, "", nil, named(ClassifyError(err), unwrapURLError(err))
	}
	defer resp.Body.Close()
	final = resp.Request.URL.String()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return resp.StatusCode, resp.Header, final, nil, nil
	}
	depth := sitemapDepth(it.req)
	owner := metaString(it.req.Meta, MetaKeySitemapOwner)
	parentDepth, _ := it.req.MetaDepth()
	discovered := time.Now().UnixMilli()
	body := &countingReader{r: resp.Body}
	st, perr := sitemap.Parse(body, sitemap.Options{URL: resp.Request.URL, Owner: owner, Depth: int(depth)}, func(e sitemap.Entry) error {
		u, err := url.Parse(e.Loc)
		if err != nil {
			return nil
		}
		fp, err := s.id.Fingerprint(e.Loc)
		if err != nil {
			s.m.sitemaps.WithLabelValues("entry_skipped").Inc()
			return nil
		}
		l := &frontier.Request{URL: e.Loc, Method: http.MethodGet, Meta: make(frontier.Map, 0, 6)}
		l.SetMetaFingerprint(fp)
		l.SetMetaDomain(s.id.Domain(u))
		l.Meta.Set(MetaKeyDiscovered, discovered)
		if !e.LastMod.IsZero() {
			l.Meta.Set(MetaKeyLastMod, e.LastMod.UnixMilli())
		}
		if e.ChangeFreq != "" {
			l.Meta.Set(MetaKeyChangeFreq, e.ChangeFreq)
		}
		if e.HasPriority {
			l.Meta.Set(MetaKeyPriority, e.Priority)
		}
		if e.Sitemap {
			l.Meta.Set(MetaKeySitemap, depth+1)
			if owner != "" {
				l.Meta.Set(MetaKeySitemapOwner, owner)
			}
			l.SetMetaDepth(parentDepth) // an index does not make its sitemaps deeper
		}
		entries = append(entries, l)
		return nil
	})
	s.m.sitemaps.WithLabelValues("entry").Add(float64(st.Entries))
	s.m.sitemaps.WithLabelValues("entry_skipped").Add(float64(st.Skipped))
	s.m.bytes.Add(float64(body.n))
	s.nBytes.Add(body.n)
	return resp.StatusCode, resp.Header, final, entries, perr
}

// announceSitemaps sends the Sitemap lines of u's robots.txt (e) as sitemap seeds, when Config.Sitemaps is on:
// those of u's registered domain only (another domain's sitemap would widen the crawl's scope). A failed send
// is logged and counted; the next fetch of robots.txt sends them again.
func (s *Spider) announceSitemaps(ctx context.Context, u *url.URL, e *robotsEntry) {
	if !s.cfg.Sitemaps || e.rules == nil || len(e.rules.Sitemap) == 0 {
		return
	}
	host := strings.ToLower(u.Host)
	var urls []string
	for _, raw := range e.rules.Sitemap {
		su, err := url.Parse(raw)
		if err != nil || !su.IsAbs() || scope.Domain(su.Hostname()) != scope.Domain(u.Hostname()) {
			s.m.sitemaps.WithLabelValues("entry_skipped").Inc()
			s.log.Warn("robots.txt Sitemap line skipped: not a URL of the host's domain", "robots", origin(u)+"/robots.txt", "sitemap", raw)
			continue
		}
		urls = append(urls, raw)
	}
	if err := s.sendSitemaps(ctx, urls, host); err != nil {
		s.m.reportErrors.Inc()
		s.log.Warn("robots.txt sitemaps not announced", "robots", origin(u)+"/robots.txt", "err", err)
	}
}

// sendSitemaps sends urls as add_seeds marked as sitemaps (owner: the host whose robots.txt listed them, or
// "").
func (s *Spider) sendSitemaps(ctx context.Context, urls []string, owner string) error {
	byKey := map[string][]*frontier.Request{}
	var order []string
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || !u.IsAbs() {
			return fmt.Errorf("spider: sitemap %q is not an absolute URL", raw)
		}
		fp, err := s.id.Fingerprint(raw)
		if err != nil {
			return fmt.Errorf("spider: sitemap %s: %w", raw, err)
		}
		r := &frontier.Request{URL: raw, Method: http.MethodGet}
		r.SetMetaFingerprint(fp)
		d := s.id.Domain(u)
		r.SetMetaDomain(d)
		r.Meta.Set(MetaKeySitemap, int64(1))
		if owner != "" {
			r.Meta.Set(MetaKeySitemapOwner, owner)
		}
		if _, ok := byKey[d.Fingerprint]; !ok {
			order = append(order, d.Fingerprint)
		}
		byKey[d.Fingerprint] = append(byKey[d.Fingerprint], r)
	}
	for _, k := range order {
		b, err := s.deps.Codec.EncodeMessage(&frontier.AddSeeds{Seeds: byKey[k]})
		if err != nil {
			return fmt.Errorf("spider: encode sitemap seeds: %w", err)
		}
		if err := s.deps.Log.Send(ctx, bus.Message{Key: []byte(k), Value: b}); err != nil {
			return fmt.Errorf("spider: send sitemap seeds: %w", err)
		}
		s.m.sitemaps.WithLabelValues("announced").Add(float64(len(byKey[k])))
	}
	return nil
}

// InjectSitemaps publishes urls as sitemap seeds on the spider log (frontierctl seeds add --sitemap): the crawl
// fetches each, and the pages (or sitemaps) it lists. The sitemaps' hosts join the seeds' scope.
func InjectSitemaps(ctx context.Context, cfg Config, deps RoleDeps, urls []string) error {
	return inject(ctx, cfg, deps, func(s *Spider) error { return s.sendSitemaps(ctx, urls, "") })
}
