package urlfrontier

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/identity"
	"github.com/frontiercrawl/frontier/spider"
)

// Meta keys a Gateway adds to the requests it publishes, so that the URLFrontier view of a URL (its crawl, its
// queue key, its metadata) rides with it through the strategy worker, the queue and the spider feed and comes
// back when the feed hands it to the gateway that owns its host. Frontera ignores them.
const (
	// MetaKeyCrawl is the URLFrontier crawl ID (str); absent for DefaultCrawl.
	MetaKeyCrawl = "frontier_uf_crawl"
	// MetaKeyQueue is the client's queue key (str); absent when it is the URL's host.
	MetaKeyQueue = "frontier_uf_key"
	// MetaKeyMetadata is the client's metadata: a map of str to a list of str.
	MetaKeyMetadata = "frontier_uf_meta"
)

// GatewayPutBatch is the Server's batch over a Gateway (ServerDeps.PutBatch): a Put waits for the spider log's
// acknowledgement, so a stream's throughput is its batch over a round trip to Kafka.
const GatewayPutBatch = 16384

// GatewayConfig configures a Gateway.
type GatewayConfig struct {
	// Store is the local store of the queues, leases, delays, blocks and limits (its Dir is required).
	Store StoreConfig
	// Partitions are the spider-feed partitions the gateway owns, each through the spiders' ownership group
	// of that partition (spider.Owners): a spider or another gateway started for the same partition waits as
	// its standby, and the other way round.
	Partitions []int
	// MaxHeld bounds the URLs the gateway holds not done (queued or leased): it stops reading the feed at
	// that many, so the feed's lag (which the DB worker's flow control reads) grows instead. Default 100,000.
	MaxHeld int
	// FetchBatch is how many feed messages one read takes. Default 512.
	FetchBatch int
	// Remember is how many discovered URLs the gateway remembers having published (see Gateway.Put).
	// Default 65,536.
	Remember int
}

// DefaultGatewayConfig returns the defaults documented on GatewayConfig, with DefaultStoreConfig.
func DefaultGatewayConfig() GatewayConfig {
	return GatewayConfig{Store: DefaultStoreConfig(), MaxHeld: 100_000, FetchBatch: 512, Remember: 1 << 16}
}

// GatewayDeps are what a Gateway is built from.
type GatewayDeps struct {
	// Bus carries the spider feed (read) and the spider log (written). Required.
	Bus bus.Bus
	// Codec encodes and decodes the streams' messages, as the spiders' does. Required.
	Codec codec.Codec
	// Identity gives the fingerprints and domain meta of the URLs clients put; nil is spider.SimpleIdentity.
	// It must be the crawl's (the one the spiders and strategy workers use), or the URL-seen test breaks.
	Identity spider.Identity
	Logger   *slog.Logger
	// Registerer receives the frontier_urlfrontier_gateway_* metrics; nil registers none.
	Registerer prometheus.Registerer
	// Control is the crawl's run-time control state (pause, blocked hosts; see Control); nil obeys none.
	Control Control
	// Crawl are the crawl's stores GetURLStatus reads for a URL the gateway does not hold (Gateway.URLStatus);
	// nil answers from the gateway's store only.
	Crawl *CrawlStores
}

// Gateway is the Backend that stands where a spider stands (docs/urlfrontier.md, "On the cluster"). It owns
// spider-feed partitions, takes their requests into a local Store (a queue per host, or per the client's key
// when the URL was put with one; the crawl the client named), and leases them to GetURLs exactly as the
// standalone's Store does. What clients report goes on the spider log, keyed and encoded as a spider's
// reports (bus.OpenProducer): a known put is a page_crawled of the request the feed brought (a URL the feed
// never brought gets one built as a spider would), a discovered URL a links_extracted, so the strategy
// workers score them and the URL-seen test stays theirs and exact.
//
// Every other call (leases, delays, blocks, limits, listings, deletes) is the local Store's, and survives a
// restart of the gateway like the standalone's.
type Gateway struct {
	*Store
	cfg  GatewayConfig
	deps GatewayDeps
	log  *slog.Logger
	id   spider.Identity
	out  bus.Producer // the spider log

	mu     sync.Mutex
	recent map[string]*publication // discovered URLs published (nil) or being published, by crawl\0key\0url
	ring   []string                // the same, in publishing order, to forget the oldest
	next   int

	pub *publisher // the spider-log sends of every Put, grouped

	doms *identity.DomainCache // hosts' domain meta, shared by the requests built for them (Gateway.domain)

	m *gatewayMetrics
}

type gatewayMetrics struct {
	feed      *prometheus.CounterVec // feed requests taken, by outcome
	published *prometheus.CounterVec // spider-log messages published, by kind
}

// OpenGateway opens the local store and the spider-log producer. Run reads the feed; the Backend methods work
// from the start.
func OpenGateway(ctx context.Context, cfg GatewayConfig, deps GatewayDeps) (*Gateway, error) {
	var errs []error
	if deps.Bus == nil {
		errs = append(errs, errors.New("urlfrontier: GatewayDeps.Bus is nil"))
	}
	if deps.Codec == nil {
		errs = append(errs, errors.New("urlfrontier: GatewayDeps.Codec is nil"))
	}
	if len(cfg.Partitions) == 0 {
		errs = append(errs, errors.New("urlfrontier: the gateway owns no spider-feed partition"))
	}
	if deps.Bus != nil {
		if err := bus.CheckPartitions(bus.SpiderFeed, cfg.Partitions, deps.Bus.Partitions(bus.SpiderFeed)); err != nil && len(cfg.Partitions) > 0 {
			errs = append(errs, err)
		}
	}
	if cfg.MaxHeld <= 0 || cfg.FetchBatch <= 0 || cfg.Remember < 0 {
		errs = append(errs, fmt.Errorf("urlfrontier: gateway max_held %d and fetch_batch %d must be > 0, remember %d >= 0", cfg.MaxHeld, cfg.FetchBatch, cfg.Remember))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := OpenStore(cfg.Store, log)
	if err != nil {
		return nil, err
	}
	out, err := bus.OpenProducer(ctx, deps.Bus, bus.SpiderLog)
	if err != nil {
		st.Close()
		return nil, err
	}
	st.hold = holdFunc(deps.Control)
	g := &Gateway{Store: st, cfg: cfg, deps: deps, log: log, id: deps.Identity, out: out,
		recent: map[string]*publication{}, ring: make([]string, cfg.Remember)}
	g.pub = newPublisher(out, GatewayPublishMax, st.Put, g.published)
	if g.id == nil {
		g.id = spider.SimpleIdentity{}
	}
	g.doms = identity.NewDomainCache(g.id.Domain, domainCacheMax)
	g.m = &gatewayMetrics{
		feed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "frontier_urlfrontier_gateway_feed_requests_total",
			Help: "Spider-feed requests the gateway took, by outcome: queued, duplicate (held already, or a replay), invalid."}, []string{"outcome"}),
		published: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "frontier_urlfrontier_gateway_published_total",
			Help: "Messages the gateway published on the spider log for what clients reported, by kind."}, []string{"kind"}),
	}
	if deps.Registerer != nil {
		deps.Registerer.MustRegister(g.m.feed, g.m.published)
	}
	return g, nil
}

// Close closes the spider-log producer and the store; call it once, after Run and every call have returned.
func (g *Gateway) Close() error {
	g.pub.close()
	return errors.Join(g.out.Close(), g.Store.Close())
}

// Run owns the gateway's feed partitions and takes their requests into the store until ctx ends (nil then),
// or returns the error that stopped it. Each partition is owned through bus.Own in the spiders' ownership
// group, so a second owner waits as a standby and takes over at the committed offset.
//
// A feed message is committed once its request is durable in the store (the put is synced when
// StoreConfig.Sync is set): from there the store holds it, leases it, takes it back when a lease ends, and
// keeps it across restarts. So the feed's lag is what the gateway has not taken yet, and MaxHeld bounds what
// it holds.
func (g *Gateway) Run(ctx context.Context) error {
	eg, ctx := errgroup.WithContext(ctx)
	for _, p := range g.cfg.Partitions {
		eg.Go(func() error {
			return bus.Own(ctx, g.deps.Bus, bus.SpiderFeed, spider.Owners(p), []int{p}, g.term)
		})
	}
	return eg.Wait()
}

// term reads the owned partitions for one term of ownership.
func (g *Gateway) term(ctx context.Context, parts []int) error {
	feed, err := g.deps.Bus.Consumer(ctx, bus.SpiderFeed, bus.GroupSpiderFeed, parts)
	if err != nil {
		return err
	}
	defer feed.Close()
	g.log.Info("gateway owns spider-feed partitions", "partitions", parts)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	dec := newFeedDecoder(g.deps.Codec)
	for {
		for g.held() >= uint64(g.cfg.MaxHeld) {
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
		}
		msgs, err := feed.Fetch(ctx, g.cfg.FetchBatch)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("urlfrontier: read the spider feed: %w", err)
		}
		if len(msgs) == 0 {
			continue
		}
		if err := g.take(ctx, feed, dec, msgs); err != nil {
			return err
		}
		if err := feed.Commit(ctx, msgs); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("urlfrontier: commit the spider feed: %w", err)
		}
	}
}

// take puts the feed's requests into the store.
func (g *Gateway) take(ctx context.Context, feed bus.Consumer, dec feedDecoder, msgs []bus.Message) error {
	type req struct {
		m bus.Message
		r *frontier.Request
	}
	reqs := bus.Decode(feed, msgs, func(m bus.Message) (req, error) {
		r, err := dec(m.Value)
		if err == nil && r.URL == "" {
			err = errors.New("request without a URL")
		}
		return req{m, r}, err
	})
	if n := len(msgs) - len(reqs); n > 0 {
		g.m.feed.WithLabelValues("invalid").Add(float64(n))
	}
	puts := make([]Put, 0, len(reqs))
	for _, q := range reqs {
		info, due := feedInfo(q.r)
		puts = append(puts, Put{Info: info, feed: &feedEntry{src: q.m.Value, part: int32(q.m.Partition), off: q.m.Offset + 1, due: due}})
	}
	st, err := g.Store.Put(ctx, puts)
	if err != nil {
		return fmt.Errorf("urlfrontier: store the spider feed's requests: %w", err)
	}
	for i, s := range st {
		switch {
		case s == OK:
			g.m.feed.WithLabelValues("queued").Inc()
		case puts[i].Info.URL != "" && validFeed(puts[i].Info):
			g.m.feed.WithLabelValues("duplicate").Inc()
		default:
			g.m.feed.WithLabelValues("invalid").Inc()
		}
	}
	return nil
}

func validFeed(i URLInfo) bool {
	if i.Key != "" {
		return true
	}
	_, err := HostKey(i.URL)
	return err == nil
}

// feedInfo is the URLFrontier view of a feed request: its crawl, queue and metadata from the gateway's meta
// keys, and when it is due (unix ms; 0 = now).
func feedInfo(r *frontier.Request) (URLInfo, int64) {
	info := URLInfo{URL: r.URL, CrawlID: metaStr(r.Meta, MetaKeyCrawl), Key: metaStr(r.Meta, MetaKeyQueue)}
	if v, ok := r.Meta.Get(MetaKeyMetadata); ok {
		if m, ok := v.(frontier.Map); ok {
			info.Metadata = make(map[string][]string, len(m))
			for _, e := range m {
				k := valueStr(e.Key)
				l, _ := e.Value.([]frontier.Value)
				vs := make([]string, 0, len(l))
				for _, x := range l {
					vs = append(vs, valueStr(x))
				}
				info.Metadata[k] = vs
			}
		}
	}
	var due int64
	if nb, err := r.MetaNotBefore(); err == nil && nb > 0 {
		due = nb * 1000
	}
	return info, due
}

// feedDecoder decodes a spider-feed request for take, keeping at least the meta entries feedInfo reads.
type feedDecoder func(p []byte) (*frontier.Request, error)

// newFeedDecoder returns a feedDecoder for one goroutine (term's): with a codec.RequestSkimDecoder (from
// codec.NewMessageDecoder), keeping only the meta entries feedInfo reads (the rest is checked as DecodeRequest
// checks it, not built), cut from the decoder's slabs and borrowing the message's bytes, which take keeps
// unchanged (the feed entry's source) and feedInfo copies its strings out of; with a codec.RequestMetaDecoder,
// likewise but each request on its own copy; otherwise whole (issue 23: the copy and a map slab per request
// were ~900 bytes per URL put).
func newFeedDecoder(c codec.Decoder) feedDecoder {
	if d, ok := codec.NewMessageDecoder(c).(codec.RequestSkimDecoder); ok {
		return func(p []byte) (*frontier.Request, error) { return d.DecodeRequestSkim(p, feedMetaKey, true) }
	}
	if d, ok := c.(codec.RequestMetaDecoder); ok {
		return func(p []byte) (*frontier.Request, error) { return d.DecodeRequestMeta(p, feedMetaKey) }
	}
	return c.DecodeRequest
}

// feedMetaKey accepts the meta keys feedInfo reads.
func feedMetaKey(k []byte) bool {
	switch string(k) {
	case MetaKeyCrawl, MetaKeyQueue, MetaKeyMetadata, frontier.MetaKeyNotBefore:
		return true
	}
	return false
}

func metaStr(m frontier.Map, key string) string {
	v, _ := m.Get(key)
	return valueStr(v)
}

func valueStr(v frontier.Value) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// fingerprint is the fingerprint of u in crawl: the identity's for the default crawl; for another crawl, the
// SHA-1 of the crawl ID and that fingerprint, so that each crawl is a frontier of its own in the strategy
// workers' URL-seen test too (the same URL in two crawls is two URLs, as the API wants).
func (g *Gateway) fingerprint(crawl, u string) (frontier.Fingerprint, error) {
	fp, err := g.id.Fingerprint(u)
	if err != nil || crawl == DefaultCrawl {
		return fp, err
	}
	h := sha1.New()
	h.Write([]byte(crawl))
	h.Write([]byte{0})
	h.Write(fp)
	return frontier.Fingerprint(h.Sum(nil)), nil
}

// request builds the request a spider would report for a URL the feed did not bring: fingerprint, domain
// (dm, Gateway.domain's), and the gateway's meta keys for crawl, queue and metadata.
//
// The meta's keys are shared byte slices (metaKeys) and its fingerprint's hex comes from a, the call's arena
// (nil: its own): as frontier.Map.Set and Request.SetMetaFingerprint would write them, in the same order, with
// fewer allocations per URL.
func (g *Gateway) request(crawl, key string, info URLInfo, pu *url.URL, dm identity.DomainMeta, a *arena) (*frontier.Request, error) {
	fp, err := g.fingerprint(crawl, info.URL)
	if err != nil {
		return nil, err
	}
	if a == nil {
		a = &arena{}
	}
	// The meta's entries, and room for the one PutAsync appends to a link (discovered): a request with no more
	// than the usual three is allocated with its meta (requestBox).
	queued := key != strings.ToLower(pu.Hostname())
	n := 3
	for _, more := range []bool{crawl != DefaultCrawl, queued, len(info.Metadata) > 0} {
		if more {
			n++
		}
	}
	var r *frontier.Request
	if n <= len(requestBox{}.meta) {
		b := &requestBox{r: frontier.Request{URL: info.URL, Method: http.MethodGet}}
		b.r.Meta = b.meta[:0:len(b.meta)]
		r = &b.r
	} else {
		r = &frontier.Request{URL: info.URL, Method: http.MethodGet, Meta: make(frontier.Map, 0, n)}
	}
	h := a.alloc(hex.EncodedLen(len(fp)))
	hex.Encode(h, fp)
	r.Meta = append(r.Meta, frontier.Entry{Key: metaKeys.fingerprint, Value: h}, frontier.Entry{Key: metaKeys.domain, Value: dm.Value})
	if crawl != DefaultCrawl {
		r.Meta = append(r.Meta, frontier.Entry{Key: metaKeys.crawl, Value: crawl})
	}
	if queued {
		r.Meta = append(r.Meta, frontier.Entry{Key: metaKeys.queue, Value: key})
	}
	if len(info.Metadata) > 0 {
		m := make(frontier.Map, 0, len(info.Metadata))
		for _, k := range sortedKeys(info.Metadata) {
			vs := make([]frontier.Value, 0, len(info.Metadata[k]))
			for _, v := range info.Metadata[k] {
				vs = append(vs, v)
			}
			m = append(m, frontier.Entry{Key: k, Value: vs})
		}
		r.Meta.Set(MetaKeyMetadata, m)
	}
	return r, nil
}

// requestBox is a request the gateway builds and its meta's entries, one allocation for both.
type requestBox struct {
	r    frontier.Request
	meta [3]frontier.Entry
}

// metaKeys are the meta keys of the requests the gateway builds, shared by all of them (never written to).
var metaKeys = struct{ fingerprint, domain, crawl, queue, discovered []byte }{
	[]byte(frontier.MetaKeyFingerprint), []byte(frontier.MetaKeyDomain), []byte(MetaKeyCrawl), []byte(MetaKeyQueue),
	[]byte(spider.MetaKeyDiscovered)}

// arena hands out byte slices carved from shared chunks: the fingerprints' hex and the messages' encodings
// of one Put call, a few allocations for the call instead of one or two per URL. A chunk stays alive while
// any slice of it does.
type arena struct{ buf []byte }

const arenaChunk = 64 << 10

// alloc returns n bytes of its own (length and capacity n).
func (a *arena) alloc(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(arenaChunk, n))
	}
	i := len(a.buf)
	a.buf = a.buf[:i+n]
	return a.buf[i : i+n : i+n]
}

// appendTo appends what app writes to the arena's free tail and returns it as a slice of its own: carved from
// the chunk when it fitted, app's own allocation when it grew past the chunk (the next call starts a new one).
func (a *arena) appendTo(app func([]byte) ([]byte, error)) ([]byte, error) {
	if cap(a.buf)-len(a.buf) < arenaChunk/8 {
		a.buf = make([]byte, 0, arenaChunk)
	}
	i := len(a.buf)
	free := a.buf[i:i:cap(a.buf)]
	b, err := app(free)
	if err != nil {
		return nil, err
	}
	if cap(b) != cap(free) { // grown: b is not the chunk's
		a.buf = a.buf[:cap(a.buf)]
		return b, nil
	}
	a.buf = a.buf[:i+len(b)]
	return b[:len(b):len(b)], nil
}

// sourceKeys are the metadata keys a client names the page it found a URL on under: StormCrawler's url.path
// (the pages that led to the URL, the last one its source), or source.
var sourceKeys = []string{"url.path", "source"}

func sourceOf(meta map[string][]string) string {
	for _, k := range sourceKeys {
		if vs := meta[k]; len(vs) > 0 && vs[len(vs)-1] != "" {
			return vs[len(vs)-1]
		}
	}
	return ""
}

// sourceRequest is the page a discovered URL was found on, as a links_extracted repeats it.
func (g *Gateway) sourceRequest(crawl, src string) (*frontier.Request, error) {
	u, err := url.Parse(src)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("source %q is not an absolute URL", src)
	}
	fp, err := g.fingerprint(crawl, src)
	if err != nil {
		return nil, err
	}
	r := &frontier.Request{URL: src, Method: http.MethodGet}
	r.SetMetaFingerprint(fp)
	r.SetMetaDomain(g.id.Domain(u))
	return r, nil
}

// statusKeys are the metadata keys a client reports a fetch's HTTP status under (StormCrawler's first).
var statusKeys = []string{"fetch.statusCode", "status", "http.status"}

func fetchStatus(meta map[string][]string) int {
	for _, k := range statusKeys {
		if vs := meta[k]; len(vs) > 0 {
			if n, err := strconv.Atoi(strings.TrimSpace(vs[0])); err == nil && n >= 100 && n < 600 {
				return n
			}
		}
	}
	return http.StatusOK
}

// Put implements Backend. A known put is published as page_crawled (the status the client reports in
// metadata "fetch.statusCode", else 200) of the request the feed brought, then written to the store as the
// standalone writes it (refetchable_from_date > 0 queues it again locally at that time, 0 makes it done). A
// discovered URL is SKIPPED when the gateway knows it already: its store holds it (in that crawl and queue),
// or it published it itself among the last GatewayConfig.Remember discovered URLs, or it comes twice in one
// call. Otherwise it is published, and answered OK once the spider log acknowledged it: as links_extracted of
// the page the client names in its metadata (StormCrawler's url.path, last value, or "source"), so the
// crawl's scope and the strategy's depth rules apply as to a spider's links; without one, as add_seeds, as
// frontierctl seeds add publishes a seed (a seed is in scope: the scope grows by its domain).
// OK thus means "reported to the frontier", not "new to the crawl": the strategy worker that owns the host
// makes the URL-seen test, exactly, and a URL it already knows is not fetched again. The gateway never asks the
// state store (a read there could not see what the strategy workers hold in their caches anyway).
//
// An invalid item is SKIPPED; a spider-log or store failure fails the whole call (FAIL: send it again; the
// messages are idempotent).
func (g *Gateway) Put(ctx context.Context, puts []Put) ([]Status, error) {
	return g.PutAsync(ctx, puts)()
}

// PutAsync is Put in two steps, so that a caller keeps several calls in flight (Server.PutURLs does, per
// stream): it builds the call's messages and hands them to the spider log's sender before it returns, so the
// messages of successive calls reach the spider log in call order; the function it returns waits until they
// are acknowledged, then writes the known puts to the store and returns Put's answer. Call the functions in
// the order of the calls that returned them (the store's writes then keep that order too).
//
// A discovered URL that an earlier call is still publishing is SKIPPED if that call's messages are
// acknowledged, FAIL (send it again) if not: it is never answered before it is on the spider log.
func (g *Gateway) PutAsync(ctx context.Context, puts []Put) func() ([]Status, error) {
	out := make([]Status, len(puts))
	pb := &publication{done: make(chan struct{})}
	fail := func(err error) func() ([]Status, error) {
		pb.err = err
		g.forget(pb)
		close(pb.done) // a later call waiting on a URL this one claimed answers it FAIL
		return func() ([]Status, error) { return nil, err }
	}
	// Each URL is parsed once; its key names it in the store and in Gateway.recent.
	type item struct {
		crawl, key string
		pu         *url.URL
		held       bool
		earlier    *publication // a discovered URL another call is publishing
		mine       bool         // a discovered URL this call publishes
	}
	items := make([]item, len(puts))
	keys := make([][]byte, len(puts))
	for i, p := range puts {
		crawl, key, pu, ok := g.resolveURL(p.Info)
		if !ok {
			out[i] = Skipped
			continue
		}
		items[i] = item{crawl: crawl, key: key, pu: pu}
		keys[i] = urlKey(crawl, key, p.Info.URL)
	}
	// "Held already?" for the whole call, in key order with one iterator.
	order, slot, uniq := sortKeys(keys)
	held := make([]bool, len(uniq))
	recs := make([]record, len(uniq)) // a known put's stored record, when held
	known := make([]bool, len(uniq))  // a known put needs the record (its feed request)
	for i, p := range puts {
		if slot[i] >= 0 && p.Known {
			known[slot[i]] = true
		}
	}
	err := g.seekEach(uniq, func(j int, v []byte, ok bool) error {
		if !ok {
			return nil
		}
		held[j] = true
		if !known[j] {
			return nil
		}
		r, err := decodeRecord(v)
		if err != nil {
			return fmt.Errorf("%w (key %q)", err, uniq[j])
		}
		recs[j] = r
		return nil
	})
	if err != nil {
		return fail(err)
	}
	// A discovered URL is claimed by the first discovered put of it in the call (the others are SKIPPED),
	// unless the store holds it; the claims are made in call order under one lock.
	first := make([]bool, len(puts))
	for j, i := range order {
		if puts[i].Known {
			continue
		}
		first[i] = true
		for k := j - 1; k >= 0 && slot[order[k]] == slot[i]; k-- {
			if !puts[order[k]].Known {
				first[i] = false
				break
			}
		}
	}
	nmsgs := 0 // the messages this call publishes at most: one per claimed discovered URL and per known put
	g.mu.Lock()
	for i, p := range puts {
		if slot[i] < 0 {
			continue
		}
		it := &items[i]
		it.held = held[slot[i]]
		if p.Known {
			nmsgs++
			continue
		}
		if it.held || !first[i] {
			out[i] = Skipped
			continue
		}
		var claimed bool
		if it.earlier, claimed = g.claimLocked(string(keys[i]), pb); claimed {
			out[i] = Skipped
			continue
		}
		it.mine = true
		nmsgs++
	}
	g.mu.Unlock()
	pb.msgs, pb.kinds = make([]bus.Message, 0, nmsgs), make([]string, 0, nmsgs)

	type dependent struct {
		i int
		p *publication
	}
	var deps []dependent
	var localIdx []int
	var nowV frontier.Value = time.Now().UnixMilli() // boxed once for the call's links
	var ar arena
	var page struct {
		crawl, src string
		r          *frontier.Request
	}
	for i, p := range puts {
		it := &items[i]
		if slot[i] < 0 {
			continue
		}
		if !p.Known {
			if it.earlier != nil {
				deps = append(deps, dependent{i, it.earlier})
			}
			if !it.mine {
				continue
			}
			dm := g.domain(it.pu)
			link, err := g.request(it.crawl, it.key, p.Info, it.pu, dm, &ar)
			if err != nil {
				g.log.Warn("put skipped: no fingerprint", "url", p.Info.URL, "err", err)
				g.unclaim(string(keys[i]), pb)
				out[i] = Skipped
				continue
			}
			link.Meta = append(link.Meta, frontier.Entry{Key: metaKeys.discovered, Value: nowV}) // request sets no such key
			var msg frontier.Message = &frontier.AddSeeds{Seeds: []*frontier.Request{link}}
			if src := sourceOf(p.Info.Metadata); src != "" {
				if page.r == nil || page.crawl != it.crawl || page.src != src {
					page.crawl, page.src = it.crawl, src
					page.r, _ = g.sourceRequest(it.crawl, src)
				}
				if page.r != nil {
					msg = &frontier.LinksExtracted{Request: page.r, Links: []*frontier.Request{link}}
				}
			}
			m, err := g.encodeIn(&ar, dm.Key, link, msg)
			if err != nil {
				return fail(err)
			}
			pb.msgs = append(pb.msgs, m)
			pb.kinds = append(pb.kinds, msg.Name())
			continue
		}
		var req *frontier.Request
		var key []byte
		if src := recs[slot[i]].src; it.held && len(src) > 0 {
			if req, err = g.deps.Codec.DecodeRequest(src); err != nil {
				g.log.Warn("stored feed request undecodable; reporting a new one", "url", p.Info.URL, "err", err)
				req = nil
			}
		}
		if req != nil {
			if d, err := req.MetaDomain(); err != nil || d.Fingerprint == "" {
				req.SetMetaDomain(g.id.Domain(it.pu)) // a feed request from a writer that left it out
			}
		} else {
			dm := g.domain(it.pu)
			if req, err = g.request(it.crawl, it.key, p.Info, it.pu, dm, &ar); err != nil {
				g.log.Warn("put skipped: no fingerprint", "url", p.Info.URL, "err", err)
				out[i] = Skipped
				continue
			}
			key = dm.Key
		}
		m, err := g.encodeIn(&ar, key, req, &frontier.PageCrawled{Response: &frontier.Response{URL: req.URL, Status: fetchStatus(p.Info.Metadata), Request: req}})
		if err != nil {
			return fail(err)
		}
		pb.msgs = append(pb.msgs, m)
		pb.kinds = append(pb.kinds, "page_crawled")
		pb.local = append(pb.local, p)
		localIdx = append(localIdx, i)
	}
	if len(pb.msgs) > 0 {
		g.pub.submit(pb)
	} else {
		g.forget(pb)
		close(pb.done)
	}
	return func() ([]Status, error) {
		if err := pb.wait(ctx); err != nil {
			return nil, fmt.Errorf("urlfrontier: publish on the spider log: %w", err)
		}
		if pb.storeErr != nil {
			return nil, pb.storeErr
		}
		for _, d := range deps {
			if err := d.p.wait(ctx); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				out[d.i] = Fail // the call that published it failed: this one did not report it either
			}
		}
		for j, i := range localIdx {
			out[i] = pb.st[j]
		}
		return out, nil
	}
}

// resolveURL parses a put's URL once and returns its crawl and queue (the host when it names no key), false
// with a log line when the URL is not absolute or the key or crawl ID cannot be held.
func (g *Gateway) resolveURL(info URLInfo) (crawl, key string, pu *url.URL, ok bool) {
	pu, err := url.Parse(info.URL)
	if err != nil || pu.Hostname() == "" {
		g.log.Warn("put skipped: not an absolute URL", "url", info.URL, "err", err)
		return "", "", nil, false
	}
	crawl, key = NormCrawl(info.CrawlID), info.Key
	if key == "" {
		key = strings.ToLower(pu.Hostname())
	}
	if checkName("crawl ID", crawl) != nil || checkName("queue key", key) != nil {
		g.log.Warn("put skipped: invalid key or crawl ID", "url", info.URL, "key", key, "crawl", crawl)
		return "", "", nil, false
	}
	return crawl, key, pu, true
}

// domainCacheMax bounds Gateway.doms: past it, the cache starts again empty.
const domainCacheMax = 1 << 14

// domain returns u's domain meta, computed once per host while it is in the gateway's cache (Gateway.doms); a
// URL with user info gets its own.
func (g *Gateway) domain(u *url.URL) identity.DomainMeta { return g.doms.Get(u) }

// GatewayPublishMax bounds the messages of one spider-log Send of the gateway: what the calls of every stream
// handed over while the previous Send was in flight, grouped.
const GatewayPublishMax = 65536

// publication is one Put call's spider-log messages and the known puts it writes to the store once they are
// acknowledged, from the moment the call builds them until the spider log acknowledged them and the store
// wrote the puts (done closed; st holds the puts' statuses) or either failed (err: the Send; storeErr: the
// store's write, after the messages were acknowledged).
type publication struct {
	msgs     []bus.Message
	kinds    []string // each message's name, for the metric
	keys     []string // the discovered URLs it publishes (Gateway.recent)
	local    []Put    // the known puts, written to the store after the Send
	st       []Status // their statuses
	done     chan struct{}
	err      error
	storeErr error
}

func (p *publication) wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// publisher sends the publications handed to it on the spider log, in the order they were handed over: one
// Send at a time, each carrying every publication that waits (up to max messages), so the produce requests of
// the gateway's calls, every stream's and every acknowledgement's, are as large as the spider log's round trip
// lets them grow, and a partition's messages stay in call order (one Send at a time; within a Send, kafka-go
// keeps a partition's order). A Put's caller keeps building its next call meanwhile.
//
// Once a Send is acknowledged, a second goroutine writes the known puts of its publications to the store, with
// those of every other acknowledged publication waiting, in one store call (one synced write) in the same
// order, while the next Send is in flight: a client's known put is acknowledged only once its page_crawled is
// on the spider log and the URL is done in the store, as before, but neither the Sends nor the store's writes
// wait for each other any more.
type publisher struct {
	out   bus.Producer
	max   int
	store func(context.Context, []Put) ([]Status, error)
	done  func(*publication) // called once a publication is settled, before its waiters wake

	mu      sync.Mutex
	queue   []*publication // to send
	written []*publication // sent, their known puts to write
	closed  bool
	wake    chan struct{}
	wakeW   chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	stopped sync.WaitGroup
}

func newPublisher(out bus.Producer, max int, store func(context.Context, []Put) ([]Status, error), done func(*publication)) *publisher {
	ctx, cancel := context.WithCancel(context.Background())
	p := &publisher{out: out, max: max, store: store, done: done, wake: make(chan struct{}, 1), wakeW: make(chan struct{}, 1),
		ctx: ctx, cancel: cancel}
	p.stopped.Add(2)
	go p.run()
	go p.runStore()
	return p
}

func (p *publisher) submit(pb *publication) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.settle([]*publication{pb}, bus.ErrClosed)
		return
	}
	p.queue = append(p.queue, pb)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// take removes the publications of the next Send from the queue: at least one, then as many as fit in max.
func (p *publisher) take() []*publication {
	p.mu.Lock()
	defer p.mu.Unlock()
	n, size := 0, 0
	for n < len(p.queue) && (n == 0 || size+len(p.queue[n].msgs) <= p.max) {
		size += len(p.queue[n].msgs)
		n++
	}
	batch := slices.Clone(p.queue[:n])
	p.queue = slices.Delete(p.queue, 0, n)
	return batch
}

func (p *publisher) run() {
	defer p.stopped.Done()
	var msgs []bus.Message
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-p.wake:
		}
		for batch := p.take(); len(batch) > 0; batch = p.take() {
			msgs = msgs[:0]
			for _, pb := range batch {
				msgs = append(msgs, pb.msgs...)
			}
			err := p.out.Send(p.ctx, msgs...)
			clear(msgs) // drop the references to the messages' bytes
			if err != nil {
				p.settle(batch, err)
				continue
			}
			p.mu.Lock()
			if p.closed {
				p.mu.Unlock()
				p.settle(batch, bus.ErrClosed)
				continue
			}
			p.written = append(p.written, batch...)
			p.mu.Unlock()
			select {
			case p.wakeW <- struct{}{}:
			default:
			}
		}
	}
}

// runStore writes the known puts of the publications that were sent, every waiting one's in one store call.
func (p *publisher) runStore() {
	defer p.stopped.Done()
	var local []Put
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-p.wakeW:
		}
		for {
			p.mu.Lock()
			batch := p.written
			p.written = nil
			p.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			local = local[:0]
			for _, pb := range batch {
				local = append(local, pb.local...)
			}
			var st []Status
			var err error
			if len(local) > 0 {
				st, err = p.store(p.ctx, local)
			}
			clear(local)
			for _, pb := range batch {
				if err != nil {
					pb.storeErr = err
				} else {
					pb.st, st = st[:len(pb.local):len(pb.local)], st[len(pb.local):]
				}
				pb.local = nil
			}
			p.settle(batch, nil)
		}
	}
}

func (p *publisher) settle(batch []*publication, err error) {
	for _, pb := range batch {
		pb.err = err
		p.done(pb)
		pb.msgs = nil
		close(pb.done)
	}
}

// close fails what waits and stops the sender; a Send in flight ends with the context. The publications that
// were sent and not yet written to the store fail as the store's (their messages are on the spider log).
func (p *publisher) close() {
	p.mu.Lock()
	p.closed = true
	q, w := p.queue, p.written
	p.queue, p.written = nil, nil
	p.mu.Unlock()
	p.cancel()
	p.stopped.Wait()
	p.settle(q, bus.ErrClosed)
	for _, pb := range w {
		pb.storeErr = bus.ErrClosed
	}
	p.settle(w, nil)
}

// published settles a publication's discovered URLs in Gateway.recent (published, or forgotten when the Send
// failed) and counts its messages.
func (g *Gateway) published(pb *publication) {
	if pb.err != nil {
		g.forget(pb)
		return
	}
	for _, k := range pb.kinds {
		g.m.published.WithLabelValues(k).Inc()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range pb.keys {
		if g.recent[k] == pb {
			g.recent[k] = nil
		}
	}
}

// encode encodes m keyed as a spider keys its reports: by the domain fingerprint of r's host (key, when the
// caller has it already).
func (g *Gateway) encode(key []byte, r *frontier.Request, m frontier.Message) (bus.Message, error) {
	return g.encodeIn(nil, key, r, m)
}

// encodeIn is encode with the bytes from a, when the codec is Msgpack (a nil: its own).
func (g *Gateway) encodeIn(a *arena, key []byte, r *frontier.Request, m frontier.Message) (bus.Message, error) {
	if _, ok := g.deps.Codec.(codec.Msgpack); ok && a != nil {
		if key == nil {
			key = g.msgKey(r)
		}
		b, err := a.appendTo(func(dst []byte) ([]byte, error) { return codec.AppendMessage(dst, m) })
		if err != nil {
			return bus.Message{}, fmt.Errorf("urlfrontier: encode %s of %s: %w", m.Name(), r.URL, err)
		}
		return bus.Message{Key: key, Value: b}, nil
	}
	if key == nil {
		key = g.msgKey(r)
	}
	b, err := g.deps.Codec.EncodeMessage(m)
	if err != nil {
		return bus.Message{}, fmt.Errorf("urlfrontier: encode %s of %s: %w", m.Name(), r.URL, err)
	}
	return bus.Message{Key: key, Value: b}, nil
}

// msgKey is the domain fingerprint of r's host: its meta's, or computed.
func (g *Gateway) msgKey(r *frontier.Request) []byte {
	if d, err := r.MetaDomain(); err == nil && d.Fingerprint != "" {
		return []byte(d.Fingerprint)
	} else if u, err := url.Parse(r.URL); err == nil {
		return []byte(g.id.Domain(u).Fingerprint)
	}
	return nil
}

// claimLocked reports whether the gateway published the discovered URL k already (earlier nil) or is
// publishing it (earlier is that publication); if neither, it records that pb publishes it (ok false). g.mu is
// held.
func (g *Gateway) claimLocked(k string, pb *publication) (earlier *publication, ok bool) {
	if e, ok := g.recent[k]; ok {
		return e, true
	}
	pb.keys = append(pb.keys, k)
	if len(g.ring) == 0 {
		return nil, false
	}
	if old := g.ring[g.next]; old != "" {
		delete(g.recent, old)
	}
	g.ring[g.next] = k
	g.recent[k] = pb
	g.next = (g.next + 1) % len(g.ring)
	return nil, false
}

// unclaim undoes claim for a URL pb will not publish after all.
func (g *Gateway) unclaim(k string, pb *publication) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.recent[k] == pb {
		delete(g.recent, k)
	}
	if i := slices.Index(pb.keys, k); i >= 0 {
		pb.keys = slices.Delete(pb.keys, i, i+1)
	}
}

// forget drops the discovered URLs pb was to publish from Gateway.recent: they are not on the spider log.
func (g *Gateway) forget(pb *publication) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range pb.keys {
		if g.recent[k] == pb {
			delete(g.recent, k)
		}
	}
}

func sortedKeys(m map[string][]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
