package spider

import (
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/identity"
	"github.com/frontiercrawl/frontier/spider/links"
)

// Meta keys the spider adds to the requests it reports (besides Frontera's fingerprint and domain).
const (
	// MetaKeyRedirectURLs lists, on a redirect target, the URLs of the chain before it, first the URL the
	// chain started from, as str: Scrapy's redirect middleware sets it and Frontera's canonical solvers read it
	// (meta[b'redirect_urls']).
	MetaKeyRedirectURLs = "redirect_urls"
	// MetaKeyRedirectFingerprints lists the hex fingerprints of MetaKeyRedirectURLs, as Frontera's
	// FingerprintMiddleware adds them (meta[b'redirect_fingerprints']).
	MetaKeyRedirectFingerprints = "redirect_fingerprints"
	// MetaKeyRedirectTimes is the number of redirects that led to a request (Scrapy's meta['redirect_times']):
	// the length of its MetaKeyRedirectURLs. A link that carries it is a redirect target, not a link of a page.
	MetaKeyRedirectTimes = "redirect_times"
	// MetaKeyRedirectReasons lists the 3xx statuses of the chain, parallel to MetaKeyRedirectURLs (Scrapy's
	// meta['redirect_reasons']).
	MetaKeyRedirectReasons = "redirect_reasons"
	// MetaKeyTruncated is true on a page whose body was longer than Config.MaxBodyBytes (Frontier's key).
	MetaKeyTruncated = "frontier_truncated"
	// MetaKeyDiscovered is when the spider extracted a link, in Unix milliseconds (int64; Frontier's key,
	// which Frontera ignores). It rides with the request through the strategy worker, the queue and the feed,
	// so the spider that fetches it observes the frontier's discovery-to-fetch time
	// (frontier_spider_discovery_to_fetch_seconds).
	MetaKeyDiscovered = "frontier_discovered"
)

// outcome is the spider-log messages that report one feed request.
type outcome struct {
	entry *entry
	msgs  []bus.Message
}

// reportPage turns a fetched response into page_crawled (plus one per other host of the redirect chain) and
// links_extracted (one per link host), hands it to the handler, and queues the messages.
func (s *Spider) reportPage(ctx context.Context, it *item, f *Fetched) {
	req := it.req
	s.nPages.Add(1)
	s.m.pages.WithLabelValues(statusClass(f.Status)).Inc()
	if f.Truncated {
		s.m.truncated.Inc()
	}
	final := f.finalURL // URL's *url.URL, not parsed again
	if final == nil {
		final, _ = url.Parse(f.URL)
	}
	if f.HTML && !f.linksDone && f.Status >= 200 && f.Status < 300 && final != nil {
		f.Links = links.Extract(final, f.Body, links.Options{MaxLinks: s.cfg.MaxLinksPerPage})
	}
	if s.deps.Handler != nil {
		if err := s.deps.Handler.HandleResponse(ctx, f); err != nil {
			s.m.handlerErrors.Inc()
			s.log.Warn("response handler", "url", f.URL, "err", err)
		}
	}

	page := s.reportedRequest(req, f.Hops, f.URL)
	if f.Truncated {
		page.Meta.Set(MetaKeyTruncated, true)
	}
	if f.Status >= 200 && f.Status < 300 {
		page.SetMetaDigest(f.contentDigest()) // revisit policies compare it with the last fetch's
	}
	resp := &frontier.Response{URL: req.URL, Status: f.Status, Headers: toHeaders(f.Header), Request: page}
	if s.cfg.SendBody {
		resp.Body = f.Body
	}
	key := domainKey(page)
	// The page's messages are encoded into one buffer sized for them (appendMsgIn), page's meta and encoding
	// once for all of them (memo: page_crawled writes its meta, the first links_extracted the rest).
	enc := make([]byte, 0, encodeSizeHint(resp, len(f.Links)))
	memo := &codec.RequestMemo{Request: page}
	var msgs []bus.Message
	msgs = s.appendMsgIn(&enc, msgs, key, &frontier.PageCrawled{Response: resp}, memo)

	// A redirect chain that crosses hosts is reported to each host's owner, so each marks its own URL.
	if len(f.Hops) > 0 {
		type hop struct {
			url    string
			status int
		}
		chain := make([]hop, 0, len(f.Hops))
		for _, h := range f.Hops[1:] {
			chain = append(chain, hop{h.URL, h.Status})
		}
		chain = append(chain, hop{f.URL, f.Status})
		sent := map[string]bool{string(key): true}
		for _, h := range chain {
			u, err := url.Parse(h.url)
			if err != nil {
				continue
			}
			d := s.id.Domain(u)
			if sent[d.Fingerprint] {
				continue
			}
			sent[d.Fingerprint] = true
			r := &frontier.Request{URL: h.url, Meta: slices.Clone(page.Meta)}
			if fp, err := s.id.Fingerprint(h.url); err == nil {
				r.SetMetaFingerprint(fp)
			}
			r.SetMetaDomain(d)
			msgs = s.appendMsg(msgs, []byte(d.Fingerprint),
				&frontier.PageCrawled{Response: &frontier.Response{URL: h.url, Status: h.status, Headers: resp.Headers, Request: r}})
		}
	}

	if f.Location != "" {
		if t := s.redirectTarget(req, f); t != nil {
			msgs = s.appendMsgIn(&enc, msgs, domainKey(t), &frontier.LinksExtracted{Request: page, Links: []*frontier.Request{t}}, memo)
			s.m.redirects.Inc()
		}
	}

	if len(f.Links) > 0 {
		discovered := s.now().UnixMilli()
		n := 0
		var disc frontier.Value = discovered // boxed once for all the links
		// The page's link requests, their meta entries, hex fingerprints and group slots are carved from one
		// allocation each (3-index slices: an append to one never reaches the next).
		reqs := make([]frontier.Request, len(f.Links))
		entries := make([]frontier.Entry, 3*len(f.Links))
		hexes := make([]byte, 0, 2*sha1.Size*len(f.Links))
		group := make([]int32, len(f.Links)) // the index in hosts of reqs[i]'s link host
		var hosts linkHosts
		fa, _ := s.id.(fingerprintAppender)
		var raw, scratch []byte
		for _, l := range f.Links {
			if l.NoFollow && s.cfg.HonourNoFollow {
				continue
			}
			// The host's domain meta map, shared by every link to it (Spider.domains); a link that does not
			// parse gets none and is dropped.
			dom, ok := s.domains.GetURL(l.URL)
			if !ok {
				continue
			}
			var fp frontier.Fingerprint
			var err error
			if fa != nil {
				fp, err = fa.AppendFingerprint(raw[:0], l.URL, &scratch)
				raw = fp
			} else {
				fp, err = s.id.Fingerprint(l.URL)
			}
			if err != nil {
				continue
			}
			start := len(hexes)
			hexes = hex.AppendEncode(hexes, fp)
			lr := &reqs[n]
			*lr = frontier.Request{URL: l.URL, Method: http.MethodGet, Meta: entries[3*n : 3*n+3 : 3*n+3]}
			// What Meta.Set of the three keys on an empty map makes (SetMetaFingerprint in one allocation),
			// with the keys' bytes shared: meta entries are never written into (see reportedRequest).
			lr.Meta[0] = frontier.Entry{Key: metaKeyFingerprint, Value: hexes[start:len(hexes):len(hexes)]}
			lr.Meta[1] = frontier.Entry{Key: metaKeyDomain, Value: dom.Value}
			lr.Meta[2] = frontier.Entry{Key: metaKeyDiscovered, Value: disc}
			group[n] = hosts.add(dom)
			n++
		}
		// One links_extracted per link host, in the order of each host's first link, its links in page order.
		ptrs := make([]*frontier.Request, n)
		off := 0
		for i := range hosts.list {
			h := &hosts.list[i]
			h.links, off = ptrs[off:off:off+h.n], off+h.n
		}
		for i := range n {
			h := &hosts.list[group[i]]
			h.links = append(h.links, &reqs[i])
		}
		for _, h := range hosts.list {
			msgs = s.appendMsgIn(&enc, msgs, h.dom.Key, &frontier.LinksExtracted{Request: page, Links: h.links}, memo)
		}
		s.nLinks.Add(int64(n))
		s.m.links.Add(float64(n))
	}
	s.queue(ctx, it, msgs)
}

// maxCachedDomains bounds Spider.domains: past it the cache starts again empty.
const maxCachedDomains = 8192

// redirectTarget is the request for the target of req's 3xx answer: a link to the target's host owner that
// carries the chain so far (Scrapy's redirect_urls, redirect_times and redirect_reasons, with Frontera's
// redirect_fingerprints), the depth and score of req (a redirect does not make a page deeper), and req's
// method and body for 307 and 308.
func (s *Spider) redirectTarget(req *frontier.Request, f *Fetched) *frontier.Request {
	u, err := url.Parse(f.Location)
	if err != nil {
		return nil
	}
	fp, err := s.id.Fingerprint(f.Location)
	if err != nil {
		return nil
	}
	t := &frontier.Request{URL: f.Location, Method: http.MethodGet, Headers: req.Headers, Cookies: req.Cookies, Meta: make(frontier.Map, 0, 8)}
	if (f.Status == http.StatusTemporaryRedirect || f.Status == http.StatusPermanentRedirect) && req.Method != "" {
		t.Method, t.Body = req.Method, req.Body
	}
	t.SetMetaFingerprint(fp)
	t.SetMetaDomain(s.id.Domain(u))
	urls := append(metaValues(req.Meta, MetaKeyRedirectURLs), req.URL)
	fps := metaValues(req.Meta, MetaKeyRedirectFingerprints)
	if rfp, err := req.MetaFingerprint(); err == nil && len(fps) == len(urls)-1 {
		fps = append(fps, []byte(rfp.Hex()))
	} else if rfp, err := s.id.Fingerprint(req.URL); err == nil && len(fps) == len(urls)-1 {
		fps = append(fps, []byte(rfp.Hex()))
	}
	t.Meta.Set(MetaKeyRedirectURLs, urls)
	if len(fps) == len(urls) {
		t.Meta.Set(MetaKeyRedirectFingerprints, fps)
	}
	t.Meta.Set(MetaKeyRedirectTimes, int64(len(urls)))
	t.Meta.Set(MetaKeyRedirectReasons, append(metaValues(req.Meta, MetaKeyRedirectReasons), int64(f.Status)))
	if d, err := req.MetaDepth(); err == nil {
		t.SetMetaDepth(d)
	}
	if sc, err := req.MetaScore(); err == nil {
		t.SetMetaScore(sc)
	}
	return t
}

// metaValues returns a copy of the list at key in m (nil when absent or not a list).
func metaValues(m frontier.Map, key string) []frontier.Value {
	v, _ := m.Get(key)
	l, _ := v.([]frontier.Value)
	return slices.Clone(l)
}

// metaStrings returns the strings of the list at key in m (str or bin items).
func metaStrings(m frontier.Map, key string) []string {
	var out []string
	for _, v := range metaValues(m, key) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []byte:
			out = append(out, string(v))
		}
	}
	return out
}

// reportedRequest is the request as reported: the feed request with the redirect chain in its meta. Its
// meta is a copy of the entries, not of their values: the spider only sets entries of the copy (Map.Set, and
// SetMetaDomain, which copies the domain map before changing it), never writes into a value, as the codec's
// shared decoded values require anyway.
func (s *Spider) reportedRequest(req *frontier.Request, hops []Hop, final string) *frontier.Request {
	r := &frontier.Request{URL: req.URL, Method: req.Method, Headers: req.Headers, Cookies: req.Cookies, Meta: slices.Clone(req.Meta), Body: req.Body}
	if len(hops) > 0 {
		urls := make([]frontier.Value, 0, len(hops)+1)
		fps := make([]frontier.Value, 0, len(hops)+1)
		add := func(u string) {
			urls = append(urls, u)
			if fp, err := s.id.Fingerprint(u); err == nil {
				fps = append(fps, []byte(fp.Hex()))
			}
		}
		for _, h := range hops {
			add(h.URL)
		}
		if final != "" {
			add(final)
		}
		r.Meta.Set(MetaKeyRedirectURLs, urls)
		if len(fps) == len(urls) {
			r.Meta.Set(MetaKeyRedirectFingerprints, fps)
		}
	}
	return r
}

// reportError queues a request_error for it.
func (s *Spider) reportError(ctx context.Context, it *item, err error) {
	name := ClassifyError(err)
	s.nErrors.Add(1)
	s.errMu.Lock()
	s.errByName[name]++
	s.errMu.Unlock()
	s.m.errors.WithLabelValues(name).Inc()
	s.log.Debug("request error", "url", it.req.URL, "error", name, "err", err)
	var hops []Hop
	if he, ok := err.(*hopsError); ok {
		hops = he.hops
	}
	r := s.reportedRequest(it.req, hops, "")
	s.queue(ctx, it, s.appendMsg(nil, domainKey(r), &frontier.RequestError{Request: r, Error: name}))
}

// domainKey is the spider-log key of a request: the hex fingerprint of its domain (Frontera's
// get_host_fprint), or nil when the request carries none.
func domainKey(r *frontier.Request) []byte {
	fp := r.MetaDomainFingerprint() // MetaDomain().Fingerprint without converting the other six fields
	if fp == "" {
		return nil
	}
	return []byte(fp)
}

// The meta keys of a link request, as Map.Set writes them (bin), shared by all the links.
var (
	metaKeyFingerprint frontier.Value = []byte(frontier.MetaKeyFingerprint)
	metaKeyDomain      frontier.Value = []byte(frontier.MetaKeyDomain)
	metaKeyDiscovered  frontier.Value = []byte(MetaKeyDiscovered)
)

func (s *Spider) appendMsg(msgs []bus.Message, key []byte, m frontier.Message) []bus.Message {
	b, err := s.deps.Codec.EncodeMessage(m)
	if err != nil {
		s.log.Error("encode spider-log message; dropped", "message", m.Name(), "err", err)
		return msgs
	}
	return append(msgs, bus.Message{Key: key, Value: b})
}

// MessageAppender is an optional capability of Deps.Codec: AppendMessage appends the encoding of m to dst,
// as append does (the same bytes as EncodeMessage), so that the spider encodes a page's messages into one
// buffer. codec.Msgpack gets it from the spider (codec.AppendMessage); a codec that wraps another (one that
// counts what it encodes) implements it to keep it.
type MessageAppender interface {
	AppendMessage(dst []byte, m frontier.Message) ([]byte, error)
}

// appendMessageOf is the codec's AppendMessage, nil when it has none.
func appendMessageOf(c Codec) func([]byte, frontier.Message) ([]byte, error) {
	switch c := c.(type) {
	case codec.Msgpack:
		return codec.AppendMessage
	case MessageAppender:
		return c.AppendMessage
	}
	return nil
}

// appendMsgIn is appendMsg with the message encoded into buf's free capacity when the codec can append
// (appendMessageOf), and buf advanced past it: a page's messages share one allocation, each a 3-index slice
// of it. A message that does not fit gets its own, and buf is left for the next. With codec.Msgpack, memo's
// request is encoded once for the messages that carry it (codec.AppendMessageMemo, the same bytes): the
// memo points into earlier messages' bytes, which are never written again (a dropped message's bytes may
// be, but a failed encoding leaves the memo as it was).
func (s *Spider) appendMsgIn(buf *[]byte, msgs []bus.Message, key []byte, m frontier.Message, memo *codec.RequestMemo) []bus.Message {
	app := appendMessageOf(s.deps.Codec)
	if app == nil {
		return s.appendMsg(msgs, key, m)
	}
	_, msgpack := s.deps.Codec.(codec.Msgpack)
	i := len(*buf)
	free := (*buf)[i:i:cap(*buf)]
	var b []byte
	var err error
	if msgpack {
		b, err = codec.AppendMessageMemo(free, m, memo)
	} else {
		b, err = app(free, m)
	}
	if err != nil {
		s.log.Error("encode spider-log message; dropped", "message", m.Name(), "err", err)
		return msgs
	}
	if cap(b) == cap(free) && cap(free) > 0 { // not grown: b is buf's
		*buf = (*buf)[:i+len(b)]
		b = b[:len(b):len(b)]
	}
	return append(msgs, bus.Message{Key: key, Value: b})
}

// encodeSizeHint is the buffer a page's messages usually fit in: its page_crawled (headers and body
// included) and about 320 bytes a link (a link request is some 290 with its domain map).
func encodeSizeHint(resp *frontier.Response, links int) int {
	n := 512 + 2*len(resp.URL) + len(resp.Body) + 320*links
	for _, h := range resp.Headers {
		n += 8 + len(h.Name)
		for _, v := range h.Values {
			n += 4 + len(v)
		}
	}
	return n
}

// linkHosts groups a page's links by host (domain fingerprint), in the order of each host's first link.
type linkHosts struct {
	list  []linkHost
	index map[string]int32 // fingerprint → index in list, once list is too long to scan
}

type linkHost struct {
	dom   identity.DomainMeta
	n     int
	links []*frontier.Request
}

// linkHostsScan is how many hosts linkHosts finds by scanning its list before it builds an index.
const linkHostsScan = 8

// add counts one more link to dom's host and returns the host's index.
func (hs *linkHosts) add(dom identity.DomainMeta) int32 {
	if hs.index == nil {
		for i := range hs.list {
			if hs.list[i].dom.Fingerprint == dom.Fingerprint {
				hs.list[i].n++
				return int32(i)
			}
		}
		if len(hs.list) == linkHostsScan {
			hs.index = make(map[string]int32, 2*linkHostsScan)
			for i, h := range hs.list {
				hs.index[h.dom.Fingerprint] = int32(i)
			}
		}
	}
	if hs.index != nil {
		if i, ok := hs.index[dom.Fingerprint]; ok {
			hs.list[i].n++
			return i
		}
		hs.index[dom.Fingerprint] = int32(len(hs.list))
	}
	hs.list = append(hs.list, linkHost{dom: dom, n: 1})
	return int32(len(hs.list) - 1)
}

// queue hands an outcome to the reporter.
func (s *Spider) queue(ctx context.Context, it *item, msgs []bus.Message) {
	if len(msgs) == 0 {
		s.tracker.done(it.entry)
		return
	}
	s.reports <- &outcome{entry: it.entry, msgs: msgs}
}

func toHeaders(h http.Header) frontier.Headers {
	names := make([]string, 0, len(h))
	nvals, size := 0, 0
	for k, vs := range h {
		names = append(names, k)
		nvals += len(vs)
		size += len(k)
		for _, v := range vs {
			size += len(v)
		}
	}
	slices.Sort(names)
	// The names' and values' bytes and the value lists are carved from one allocation each.
	buf := make([]byte, 0, size)
	carve := func(s string) []byte {
		i := len(buf)
		buf = append(buf, s...)
		return buf[i:len(buf):len(buf)]
	}
	vals := make([][]byte, nvals)
	out := make(frontier.Headers, 0, len(names))
	for _, k := range names {
		vs := vals[:len(h[k]):len(h[k])]
		vals = vals[len(h[k]):]
		for i, v := range h[k] {
			vs[i] = carve(v)
		}
		out = append(out, frontier.Header{Name: carve(k), Values: vs})
	}
	return out
}

// reporter sends outcomes to the spider log in batches and marks them reported. A failed send is retried
// until ctx ends; what is not sent then stays uncommitted.
func (s *Spider) reporter(ctx context.Context) {
	var batch []*outcome
	var msgs []bus.Message
	for o := range s.reports {
		batch = append(batch[:0], o)
		msgs = append(msgs[:0], o.msgs...)
	drain:
		for len(msgs) < s.cfg.ReportBatch {
			select {
			case o, ok := <-s.reports:
				if !ok {
					break drain
				}
				batch = append(batch, o)
				msgs = append(msgs, o.msgs...)
			default:
				break drain
			}
		}
		if ctx.Err() != nil {
			continue // shutdown timed out: drop (uncommitted, so fetched again)
		}
		backoff := 100 * time.Millisecond
		for {
			err := s.deps.Log.Send(ctx, msgs...)
			if err == nil {
				s.m.messagesReport.Add(float64(len(msgs)))
				s.m.nMessages.Add(int64(len(msgs)))
				s.reported(batch)
				break
			}
			s.m.reportErrors.Inc()
			if ctx.Err() != nil {
				break
			}
			s.log.Warn("spider log send; retrying", "messages", len(msgs), "err", err, "retry_in", backoff)
			if !sleepCtx(ctx, backoff) {
				break
			}
			backoff = min(2*backoff, 10*time.Second)
		}
		s.m.pending.Set(float64(s.tracker.len()))
		s.m.uncommitted.Set(float64(s.tracker.tracked()))
	}
}

// entry is one feed message between Fetch and commit.
type entry struct {
	msg     bus.Message
	seq     int64 // its place in the tracker (tracker.base counts from it)
	done    bool
	fp      string // the request's fingerprint, while this entry holds its lease
	attempt int64  // the attempt the lease is for (the request's retry_times; 0 for a first try)
}

// tracker keeps the feed messages in offset order and finds the contiguous watermark: the last message
// whose outcome, and every earlier one's, is reported. It also holds the fetch leases: a request's
// fingerprint is leased by the entry fetching it from claim until its outcome is durable (done), and released
// then, whatever the watermark does. Safe for concurrent use.
//
// Why a lease per attempt and not per watermark: a transient failure is reported, the strategy worker
// schedules a retry a second later, and the retry comes back on the feed while an earlier, slow request still
// holds the watermark. Released by the watermark, the first attempt's fingerprint was still held then, the
// retry was dropped as a duplicate, and the URL stayed QUEUED with no queue row (lost).
//
// Two bounds, because the watermark and the work are decoupled (see "Flow" in the package doc): open counts the
// requests not done (queued at their hosts, in flight, being reported), bounded by Config.MaxPending; the
// offsets tracked from the watermark to the newest read, done ones included, are bounded by
// Config.MaxUncommitted. A request that is slow (or waits out a long Crawl-delay or a back-off) holds the
// watermark, not the reading, until the second bound. A done entry is dropped at once (q[i] = nil); only its
// offset stays (offs[i]), 16 bytes until the watermark passes it.
type tracker struct {
	mu         sync.Mutex
	q          []*entry    // the entries from the watermark on, nil once done
	offs       []int64     // their offsets
	head       int         // q[head] is the first entry after the watermark
	base       int64       // the seq of q[0]
	seq        int64       // the seq of the next entry added
	part       int         // the feed partition (one per spider)
	open       int         // entries not done
	max        int         // bound on open
	maxTracked int         // bound on len(q)-head
	last       bus.Message // the watermark
	pending    bool        // last is not committed yet
	signal     chan struct{}
	leases     map[string]*entry // fingerprint → the entry whose fetch of it has no durable outcome yet
}

func newTracker(maxOpen int) *tracker { return newTrackerBounded(maxOpen, maxOpen) }

// newTrackerBounded is a tracker of at most maxOpen open entries and maxTracked entries from the watermark on.
func newTrackerBounded(maxOpen, maxTracked int) *tracker {
	return &tracker{max: maxOpen, maxTracked: max(maxOpen, maxTracked), signal: make(chan struct{}, 1), leases: map[string]*entry{}}
}

// claim leases fingerprint fp to e for the given attempt. It returns false when the same attempt of fp is
// still running (a batch the DB worker sent again, whose first copy is being fetched): e is then a
// duplicate. Another attempt (a retry, whose retry_times differs) takes the lease over and is fetched.
func (t *tracker) claim(e *entry, fp string, attempt int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur := t.leases[fp]; cur != nil && cur.attempt == attempt {
		return false
	}
	t.leases[fp] = e
	e.fp, e.attempt = fp, attempt
	return true
}

// leased reports whether fp's lease is held (for tests and the stats).
func (t *tracker) leased(fp string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.leases[fp] != nil
}

func (t *tracker) add(msg bus.Message) *entry {
	e := &entry{msg: msg}
	t.mu.Lock()
	e.seq = t.seq
	t.seq++
	t.part = msg.Partition
	t.q = append(t.q, e)
	t.offs = append(t.offs, msg.Offset)
	t.open++
	t.mu.Unlock()
	return e
}

// done marks e's outcome durable: its lease is released now, and the watermark moves past it once every
// earlier entry is done too. It wakes the feed loop: a request is no longer open, so the feed may have room.
func (t *tracker) done(e *entry) {
	t.mu.Lock()
	if e.done {
		t.mu.Unlock()
		return
	}
	e.done = true
	t.open--
	if i := int(e.seq - t.base); i >= 0 && i < len(t.q) && t.q[i] == e {
		t.q[i] = nil
	}
	if e.fp != "" {
		if t.leases[e.fp] == e {
			delete(t.leases, e.fp)
		}
		e.fp = ""
	}
	for t.head < len(t.q) && t.q[t.head] == nil {
		t.last, t.pending = bus.Message{Partition: t.part, Offset: t.offs[t.head]}, true
		t.head++
	}
	if t.head > 1024 && t.head > len(t.q)/2 {
		n := copy(t.q, t.q[t.head:])
		clear(t.q[n:]) // drop the moved pointers from the tail so the entries can be freed
		t.q = t.q[:n]
		t.offs = t.offs[:copy(t.offs, t.offs[t.head:])]
		t.base += int64(t.head)
		t.head = 0
	}
	t.mu.Unlock()
	select {
	case t.signal <- struct{}{}:
	default:
	}
}

// len is the number of open entries: queued at their hosts, in flight, or being reported.
func (t *tracker) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.open
}

// tracked is the number of entries from the watermark to the newest read, done ones included.
func (t *tracker) tracked() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.q) - t.head
}

// free is how many more feed messages may be read now: room under both bounds.
func (t *tracker) free() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return min(t.max-t.open, t.maxTracked-(len(t.q)-t.head))
}

func (t *tracker) toCommit() (bus.Message, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last, t.pending
}

func (t *tracker) committed(msg bus.Message) {
	t.mu.Lock()
	if t.last.Offset == msg.Offset && t.last.Partition == msg.Partition {
		t.pending = false
	}
	t.mu.Unlock()
}

// bodyDigest is the content digest of a page's (decoded) body, meta frontier_digest: the hex of its 64-bit
// xxHash (XXH64, seed 0), 16 digits, big-endian.
//
// It only tells revisit policies whether a page's content changed since the last fetch (strategy/revisit
// compares it with the digest that fetch left): change detection, not integrity or security, so a fast
// non-cryptographic hash is enough. A chance collision, one in 2^64 per comparison, makes a changed page look
// unchanged once; a site that crafted one could only lengthen its own page's revisit interval, which it can
// do anyway by serving the same bytes. WARC records do not use it: package warc computes its own SHA-1 block
// and payload digests, as the WARC specification asks.
//
// Until this version it was the hex SHA-1 (40 digits), ~1 CPU-s of a fast-web crawl of ~27 (up to 8 MiB of
// every large page went through SHA-1). A digest stored by an older spider (revisit_digest in a queued
// request's meta) never equals a new one, so each such page is seen as changed once, at its first revisit
// after the upgrade, and its interval is not lengthened that time; from then on the digests compare again.
func bodyDigest(body []byte) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], xxhash.Sum64(body))
	return hex.EncodeToString(b[:])
}
