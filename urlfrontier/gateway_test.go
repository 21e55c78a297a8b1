package urlfrontier

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/membus"
	"github.com/frontiercrawl/frontier/codec"
)

// gwTest is a gateway on an in-memory bus, with a reader of the spider log and a writer of the feed standing
// in for the strategy workers and the DB worker.
type gwTest struct {
	t     *testing.T
	b     *membus.Bus
	fs    vfs.FS
	g     *Gateway
	stop  func()
	logC  bus.Consumer
	feed  bus.Producer
	enc   codec.Msgpack
	ctl   Control      // the gateway's run-time control state; nil: none
	crawl *CrawlStores // the crawl's stores; nil: none
	sync  bool         // the store's synced writes (StoreConfig.Sync)
}

func newGWTest(t *testing.T) *gwTest { return newGWTestFS(t, vfs.NewMem(), false) }

// newGWTestFS is newGWTest with the store on fs, its writes synced or not.
func newGWTestFS(t *testing.T, fs vfs.FS, sync bool) *gwTest {
	t.Helper()
	mcfg := membus.DefaultConfig()
	mcfg.Groups[bus.SpiderLog] = append(mcfg.Groups[bus.SpiderLog], "test")
	b, err := membus.New(mcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	w := &gwTest{t: t, b: b, fs: fs, sync: sync}
	if w.logC, err = b.Consumer(t.Context(), bus.SpiderLog, "test", []int{0}); err != nil {
		t.Fatal(err)
	}
	if w.feed, err = b.Producer(t.Context(), bus.SpiderFeed, nil); err != nil {
		t.Fatal(err)
	}
	w.start()
	t.Cleanup(func() {
		if w.stop != nil {
			w.stop()
		}
	})
	return w
}

// start opens the gateway on the test's store and runs it.
func (w *gwTest) start() {
	t := w.t
	cfg := DefaultGatewayConfig()
	cfg.Store.Dir, cfg.Store.FS, cfg.Store.Sync = "gw", w.fs, w.sync
	cfg.Partitions = []int{0}
	g, err := OpenGateway(t.Context(), cfg, GatewayDeps{Bus: w.b, Codec: w.enc, Control: w.ctl, Crawl: w.crawl})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetDelay(t.Context(), "", "", 0); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	w.g = g
	w.stop = func() {
		w.stop = nil
		cancel()
		if err := <-done; err != nil {
			t.Errorf("gateway Run: %v", err)
		}
		g.Close()
	}
}

func (w *gwTest) restart() {
	w.stop()
	w.start()
}

// published reads the next n spider-log messages.
func (w *gwTest) published(n int) []frontier.Message {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.t.Context(), 10*time.Second)
	defer cancel()
	var out []frontier.Message
	for len(out) < n {
		msgs, err := w.logC.Fetch(ctx, n-len(out))
		if err != nil {
			w.t.Fatalf("spider log: %d of %d messages: %v", len(out), n, err)
		}
		for _, m := range msgs {
			dm, err := w.enc.DecodeMessage(m.Value)
			if err != nil {
				w.t.Fatal(err)
			}
			var r *frontier.Request
			switch x := dm.(type) {
			case *frontier.LinksExtracted:
				r = x.Links[0]
			case *frontier.AddSeeds:
				r = x.Seeds[0]
			case *frontier.PageCrawled:
				r = x.Response.Request
			}
			if d, err := r.MetaDomain(); err != nil || string(m.Key) != d.Fingerprint {
				w.t.Errorf("%s keyed %q, want the domain fingerprint (%v, %v)", dm.Name(), m.Key, d, err)
			}
			out = append(out, dm)
		}
	}
	return out
}

// loop plays the strategy worker and the DB worker: every link of msgs goes to the feed.
func (w *gwTest) loop(msgs []frontier.Message) {
	w.t.Helper()
	for _, m := range msgs {
		switch x := m.(type) {
		case *frontier.LinksExtracted:
			for _, l := range x.Links {
				w.toFeed(l)
			}
		case *frontier.AddSeeds:
			for _, l := range x.Seeds {
				w.toFeed(l)
			}
		}
	}
}

func (w *gwTest) toFeed(r *frontier.Request) {
	w.t.Helper()
	v, err := w.enc.EncodeRequest(r)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.feed.Send(w.t.Context(), bus.Message{Key: []byte(r.Hostname()), Value: v, Partition: 0}); err != nil {
		w.t.Fatal(err)
	}
}

// getEventually calls Get until it returns URLs (the feed is read asynchronously) or 10 s passed.
func (w *gwTest) getEventually(p GetParams) []URLInfo {
	w.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		got, err := w.g.Get(w.t.Context(), p)
		if err != nil {
			w.t.Fatal(err)
		}
		if len(got) > 0 || time.Now().After(deadline) {
			return got
		}
		select {
		case <-tick.C:
		case <-w.t.Context().Done():
			return nil
		}
	}
}

func (w *gwTest) put(puts ...Put) []Status {
	w.t.Helper()
	st, err := w.g.Put(w.t.Context(), puts)
	if err != nil {
		w.t.Fatal(err)
	}
	return st
}

func TestGatewayRoundTrip(t *testing.T) {
	w := newGWTest(t)
	meta := map[string][]string{"depth": {"3"}, "src": {"a", "b"}}
	st := w.put(Put{Info: URLInfo{URL: "http://a.test/1", CrawlID: "c1", Key: "mine", Metadata: meta}},
		disc("http://a.test/1"), disc("http://a.test/1"), disc("not a url"))
	// The first two are two URLs (another crawl and queue); the third repeats the second in the same call.
	if want := []Status{OK, OK, Skipped, Skipped}; !slices.Equal(st, want) {
		t.Fatalf("statuses %v, want %v", st, want)
	}
	msgs := w.published(2)
	l := msgs[0].(*frontier.AddSeeds).Seeds[0] // no source named: a seed
	if metaStr(l.Meta, MetaKeyCrawl) != "c1" || metaStr(l.Meta, MetaKeyQueue) != "mine" {
		t.Errorf("link meta %v: want the crawl and the queue key", l.Meta)
	}
	fp1, _ := l.MetaFingerprint()
	fp2, _ := msgs[1].(*frontier.AddSeeds).Seeds[0].MetaFingerprint()
	if fp1.Equal(fp2) {
		t.Error("the same URL in two crawls has one fingerprint: the URL-seen test would merge them")
	}
	// With the page it was found on (StormCrawler's url.path): a link of that page.
	w.put(Put{Info: URLInfo{URL: "http://c.test/x", Metadata: map[string][]string{"url.path": {"http://a.test/0", "http://a.test/1"}}}})
	if le, ok := w.published(1)[0].(*frontier.LinksExtracted); !ok || le.Request.URL != "http://a.test/1" || le.Links[0].URL != "http://c.test/x" {
		t.Errorf("a discovered URL with a source: %+v, want links_extracted of the source", le)
	}
	// Published, not back yet: a second put is SKIPPED, and nothing is handed out.
	if st := w.put(disc("http://a.test/1")); st[0] != Skipped {
		t.Errorf("a URL published a moment ago: %v, want SKIPPED", st[0])
	}
	if got, _ := w.g.Get(t.Context(), GetParams{}); len(got) != 0 {
		t.Fatalf("before the loop brought it back, Get = %v", got)
	}

	w.loop(msgs)
	got := w.getEventually(GetParams{CrawlID: "c1"})
	if len(got) != 1 || got[0].Key != "mine" || got[0].CrawlID != "c1" || !slices.Equal(got[0].Metadata["src"], []string{"a", "b"}) {
		t.Fatalf("Get(c1) = %+v", got)
	}
	if got := w.getEventually(GetParams{}); len(got) != 1 || got[0].Key != "a.test" {
		t.Fatalf("Get(DEFAULT) = %+v", got)
	}

	// Known puts: page_crawled of the request the feed brought (its fingerprint), done locally.
	st = w.put(Put{Info: URLInfo{URL: "http://a.test/1", CrawlID: "c1", Key: "mine", Metadata: map[string][]string{"fetch.statusCode": {"404"}}}, Known: true})
	if st[0] != OK {
		t.Fatalf("known put: %v", st[0])
	}
	pc := w.published(1)[0].(*frontier.PageCrawled)
	if fp, _ := pc.Response.Request.MetaFingerprint(); !fp.Equal(fp1) || pc.Response.Status != 404 || pc.Response.URL != "http://a.test/1" {
		t.Errorf("page_crawled %+v (fingerprint %v, want %v)", pc.Response, fp, fp1)
	}
	if s, err := w.g.Stats(t.Context(), "c1", ""); err != nil || s.Completed != 1 || s.Size != 0 {
		t.Errorf("Stats(c1) = %+v, %v", s, err)
	}
	// A URL the feed never brought: reported with a request built as a spider would.
	w.put(known("http://b.test/x", 0))
	pc = w.published(1)[0].(*frontier.PageCrawled)
	if d, err := pc.Response.Request.MetaDomain(); err != nil || d.Name != "b.test" {
		t.Errorf("page_crawled of an unfed URL: domain %v, %v", d, err)
	}
	// The feed is committed once its requests are in the store.
	lag, err := w.b.Lag(t.Context(), bus.SpiderFeed, bus.GroupSpiderFeed)
	if err != nil || lag[0] != 0 {
		t.Errorf("feed lag %v, %v: want 0", lag, err)
	}
}

func TestGatewayFeedReplayAndRevisit(t *testing.T) {
	w := newGWTest(t)
	r := &frontier.Request{URL: "http://r.test/1", Method: "GET"}
	w.toFeed(r)
	got := w.getEventually(GetParams{Lease: time.Hour})
	if len(got) != 1 {
		t.Fatalf("Get = %v", got)
	}
	// The same request again while it is leased (the DB worker sent the batch twice): not added twice.
	w.toFeed(r)
	w.toFeed(&frontier.Request{URL: "http://r.test/2", Method: "GET"})
	if got := w.getEventually(GetParams{}); len(got) != 1 || got[0].URL != "http://r.test/2" {
		t.Fatalf("after a duplicate, Get = %v", got)
	}
	// Reported done; then the strategy schedules it again (a revisit): it is handed out again.
	w.put(known("http://r.test/1", 0))
	w.published(1)
	w.toFeed(r)
	if got := w.getEventually(GetParams{}); len(got) != 1 || got[0].URL != "http://r.test/1" {
		t.Fatalf("after a revisit came on the feed, Get = %v", got)
	}
}

func TestGatewayRestartKeepsLeasesAndSettings(t *testing.T) {
	w := newGWTest(t)
	for _, u := range []string{"http://l.test/1", "http://d.test/1", "http://d.test/2", "http://b.test/1"} {
		w.toFeed(&frontier.Request{URL: u, Method: "GET"})
	}
	ctx := t.Context()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := w.g.Stats(ctx, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if s.Size == 4 || time.Now().After(deadline) {
			break
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	if err := w.g.SetDelay(ctx, "", "d.test", 3600); err != nil {
		t.Fatal(err)
	}
	if err := w.g.BlockQueue(ctx, "", "b.test", time.Now().Unix()+3600); err != nil {
		t.Fatal(err)
	}
	got, err := w.g.Get(ctx, GetParams{MaxURLsPerQueue: 1, Lease: time.Hour})
	if err != nil || len(got) != 2 {
		t.Fatalf("Get = %v, %v", got, err)
	}
	w.restart()
	if got, err := w.g.Get(ctx, GetParams{}); err != nil || len(got) != 0 {
		t.Fatalf("after the restart, Get = %v, %v: a lease, delay or block was lost", got, err)
	}
	if s, err := w.g.Stats(ctx, "", ""); err != nil || s.Size != 4 || s.InProcess != 2 {
		t.Fatalf("after the restart, Stats = %+v, %v", s, err)
	}
}

func TestGatewayConfigErrors(t *testing.T) {
	mb, err := membus.New(membus.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	cfg := DefaultGatewayConfig()
	cfg.Store.Dir = filepath.Join(t.TempDir(), "gw")
	cfg.Partitions = []int{3}
	if _, err := OpenGateway(t.Context(), cfg, GatewayDeps{Bus: mb}); err == nil {
		t.Fatal("no codec and a partition out of range: no error")
	}
}

// gatedProducer is a spider-log producer whose Sends wait for the test: each Send announces its messages on
// sending and returns what the test puts on result.
type gatedProducer struct {
	bus.Producer
	sending chan []bus.Message
	result  chan error
}

func (p *gatedProducer) Send(ctx context.Context, msgs ...bus.Message) error {
	p.sending <- slices.Clone(msgs)
	select {
	case err := <-p.result:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestGatewayPutInFlight: calls in flight at once (Server.PutURLs keeps several per stream) publish in call
// order, one Send carrying what waited; a discovered URL an earlier call is still publishing is answered only
// once that call's Send ended: SKIPPED when it was acknowledged, FAIL when not, and a failed URL can be put
// again.
func TestGatewayPutInFlight(t *testing.T) {
	w := newGWTest(t)
	gate := &gatedProducer{sending: make(chan []bus.Message, 1), result: make(chan error, 1)}
	w.g.pub.close()
	w.g.pub = newPublisher(gate, GatewayPublishMax, w.g.Store.Put, w.g.published)
	ctx := t.Context()
	type res struct {
		st  []Status
		err error
	}
	run := func(wait func() ([]Status, error)) <-chan res {
		c := make(chan res, 1)
		go func() { st, err := wait(); c <- res{st, err} }()
		return c
	}

	first := run(w.g.PutAsync(ctx, []Put{disc("http://a.test/1"), disc("http://a.test/2")}))
	if got := <-gate.sending; len(got) != 2 {
		t.Fatalf("first Send: %d messages, want 2", len(got))
	}
	// While the first Send is in flight, two more calls: one Send takes both, after the first.
	second := run(w.g.PutAsync(ctx, []Put{disc("http://a.test/1"), disc("http://a.test/3")}))
	third := run(w.g.PutAsync(ctx, []Put{disc("http://a.test/4"), disc("http://a.test/2")}))
	select {
	case r := <-second:
		t.Fatalf("the second call answered %v, %v before the first one's Send ended", r.st, r.err)
	case <-time.After(20 * time.Millisecond):
	}
	gate.result <- errors.New("broker gone")
	if r := <-first; r.err == nil {
		t.Fatalf("first call: %v, want the Send's error", r.st)
	}
	if got := <-gate.sending; len(got) != 2 {
		t.Fatalf("second Send: %d messages, want the 2 new URLs of both waiting calls", len(got))
	}
	gate.result <- nil
	if r := <-second; r.err != nil || !slices.Equal(r.st, []Status{Fail, OK}) {
		t.Errorf("second call: %v, %v; want [FAIL OK] (a/1 was the failed call's)", r.st, r.err)
	}
	if r := <-third; r.err != nil || !slices.Equal(r.st, []Status{OK, Fail}) {
		t.Errorf("third call: %v, %v; want [OK FAIL]", r.st, r.err)
	}
	// The failed URLs are not remembered: put again, they are published; a/3 is remembered.
	again := run(w.g.PutAsync(ctx, []Put{disc("http://a.test/1"), disc("http://a.test/3")}))
	if got := <-gate.sending; len(got) != 1 {
		t.Fatalf("third Send: %d messages, want a/1 alone", len(got))
	}
	gate.result <- nil
	if r := <-again; r.err != nil || !slices.Equal(r.st, []Status{OK, Skipped}) {
		t.Errorf("put again: %v, %v; want [OK SKIPPED]", r.st, r.err)
	}
}

// TestGatewayPutMany: a call of more than seekMin URLs (read in key order with one iterator, their domain meta
// built once per host) answers in call order: a repeat in the call SKIPPED, a URL the store holds SKIPPED,
// a known put of it reported with the request the feed brought, each message keyed by its domain.
func TestGatewayPutMany(t *testing.T) {
	w := newGWTest(t)
	const heldURL = "http://h0.test/held"
	w.put(disc(heldURL))
	seed := w.published(1)
	w.loop(seed)
	for {
		st, err := w.g.Stats(t.Context(), "", "")
		if err != nil {
			t.Fatal(err)
		}
		if st.Size == 1 {
			break
		}
		select {
		case <-t.Context().Done():
			t.Fatal("the feed's request never arrived")
		case <-time.After(5 * time.Millisecond):
		}
	}
	var puts []Put
	var want []Status
	for i := range 20 {
		u := fmt.Sprintf("http://h%d.test/%d", (i*3)%4, i)
		puts = append(puts, disc(u))
		want = append(want, OK)
		if i%4 == 0 {
			puts = append(puts, disc(u))
			want = append(want, Skipped)
		}
	}
	puts = append(puts, disc(heldURL), known(heldURL, 0))
	want = append(want, Skipped, OK)
	if st := w.put(puts...); !slices.Equal(st, want) {
		t.Fatalf("statuses %v, want %v", st, want)
	}
	msgs := w.published(21)
	for i, m := range msgs[:20] {
		if u := m.(*frontier.AddSeeds).Seeds[0].URL; u != fmt.Sprintf("http://h%d.test/%d", (i*3)%4, i) {
			t.Errorf("message %d is of %s", i, u)
		}
	}
	pc := msgs[20].(*frontier.PageCrawled)
	fp, _ := pc.Response.Request.MetaFingerprint()
	want0, _ := seed[0].(*frontier.AddSeeds).Seeds[0].MetaFingerprint()
	if pc.Response.URL != heldURL || !fp.Equal(want0) {
		t.Errorf("page_crawled of %s (fingerprint %v), want %s's feed request (%v)", pc.Response.URL, fp, heldURL, want0)
	}
}
