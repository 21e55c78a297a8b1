package dbworker

import (
	"context"
	"crypto/sha1"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/membus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/partition"
	"github.com/frontiercrawl/frontier/queue"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func req(u, host string) *frontier.Request {
	r := &frontier.Request{URL: u, Method: "GET"}
	fp := sha1.Sum([]byte(u))
	r.SetMetaFingerprint(fp[:])
	r.SetMetaDomain(frontier.MetaDomain{Name: host, Netloc: host, Scheme: "http"})
	return r
}

type rig struct {
	bus   *membus.Bus
	codec codec.Codec
	queue *queue.Memory
	pages *metadata.Memory
	w     *Worker
	stop  func()
}

func start(t *testing.T, cfg Config) *rig {
	t.Helper()
	bcfg := membus.DefaultConfig()
	bcfg.Partitions[bus.SpiderFeed] = 2
	b, err := membus.New(bcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{bus: b, codec: codec.Msgpack{}, queue: queue.NewMemory(), pages: metadata.NewMemory()}
	r.w, err = New(cfg, Deps{Bus: b, Codec: r.codec, Queue: r.queue, Pages: r.pages})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.w.Run(ctx) }()
	r.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		b.Close()
	}
	t.Cleanup(r.stop)
	return r
}

func (r *rig) send(t *testing.T, s bus.Stream, msgs ...frontier.Message) {
	t.Helper()
	p, _ := r.bus.Producer(t.Context(), s, nil)
	defer p.Close()
	// One Send, so the worker sees the messages as one batch (as a strategy worker's batch arrives).
	batch := make([]bus.Message, len(msgs))
	for i, m := range msgs {
		v, err := r.codec.EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		batch[i] = bus.Message{Value: v}
	}
	if err := p.Send(t.Context(), batch...); err != nil {
		t.Fatal(err)
	}
}

// feed reads what is on spider-feed partition p, as the spider's group, committing nothing.
func (r *rig) feed(t *testing.T, p int, want int) []*frontier.Request {
	t.Helper()
	c, err := r.bus.Consumer(t.Context(), bus.SpiderFeed, "reader", []int{p})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out []*frontier.Request
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for len(out) < want {
		msgs, err := c.Fetch(ctx, 1000)
		if err != nil {
			t.Fatalf("feed partition %d: got %d requests, want %d: %v", p, len(out), want, err)
		}
		for _, m := range msgs {
			rq, err := r.codec.DecodeRequest(m.Value)
			if err != nil {
				t.Fatal(err)
			}
			if string(m.Key) != rq.Hostname() {
				t.Errorf("feed key %q, want the hostname %q", m.Key, rq.Hostname())
			}
			out = append(out, rq)
		}
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 1000 {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestScoringToFeedWithFlowControl(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FeedBatch, cfg.MaxLag, cfg.MinHosts, cfg.PerHost = 4, 4, 0, 0
	r := start(t, cfg)

	// 10 URLs of one host, all on one feed partition; one of them scheduled twice, one not to be scheduled.
	host := "h.test"
	p := partition.Crc32Name([]byte(host), 2)
	var msgs []frontier.Message
	for i := range 10 {
		msgs = append(msgs, &frontier.UpdateScore{Request: req(fmt.Sprintf("http://h.test/%d", i), host), Score: float64(i) / 10, Schedule: true})
	}
	msgs = append(msgs, &frontier.UpdateScore{Request: req("http://h.test/9", host), Score: 0.95, Schedule: true},
		&frontier.UpdateScore{Request: req("http://h.test/no", host), Score: 1, Schedule: false},
		&frontier.UpdateScore{Request: req("http://h.test/bad", host), Score: 1.5, Schedule: true})
	r.send(t, bus.ScoringLog, msgs...)

	// The first batch holds the best 4 and then the partition's lag (4, nobody committed) stops the generator.
	got := r.feed(t, p, 4)
	for i, want := range []string{"http://h.test/9", "http://h.test/8", "http://h.test/7", "http://h.test/6"} {
		if got[i].URL != want {
			t.Errorf("feed[%d] = %s, want %s", i, got[i].URL, want)
		}
	}
	if s, _ := got[0].MetaScore(); s != 0.95 {
		t.Errorf("meta score of the re-scheduled URL = %v, want the later 0.95", s)
	}
	for _, rq := range got {
		if jid, err := rq.MetaJobID(); err != nil || jid != 0 {
			t.Errorf("meta jid of %s = %v, %v; want Frontera's first job id 0", rq.URL, jid, err)
		}
	}
	waitFor(t, "the rest to stay queued", func() bool { n, _ := r.queue.Count(t.Context(), p); return n == 6 })
	time.Sleep(3 * cfg.PollInterval)
	if lag, _ := r.bus.Lag(t.Context(), bus.SpiderFeed, bus.GroupSpiderFeed); lag[p] != 4 {
		t.Fatalf("lag = %d after the first batch, want 4: the generator must wait for the spider", lag[p])
	}

	// The spider commits its batch: the partition is ready again and gets the next one.
	c, _ := r.bus.Consumer(t.Context(), bus.SpiderFeed, bus.GroupSpiderFeed, []int{p})
	defer c.Close()
	first, _ := c.Fetch(t.Context(), 4)
	if err := c.Commit(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second batch", func() bool { n, _ := r.queue.Count(t.Context(), p); return n == 2 })
	if other, _ := r.queue.Count(t.Context(), 1-p); other != 0 {
		t.Errorf("the other partition has %d rows", other)
	}
}

func TestLinksRecordsPages(t *testing.T) {
	r := start(t, DefaultConfig())
	page := req("http://h.test/", "h.test")
	redirected := req("http://h.test/new", "h.test") // the target of /old's 3xx, as the spider reports it
	redirected.Meta.Set("redirect_times", int64(1))
	r.send(t, bus.SpiderLog,
		&frontier.PageCrawled{Response: &frontier.Response{URL: page.URL, Status: 200, Request: page,
			Headers: frontier.Headers{{Name: []byte("Content-Type"), Values: [][]byte{[]byte("text/html")}}}}},
		&frontier.LinksExtracted{Request: page, Links: []*frontier.Request{req("http://h.test/a", "h.test")}},
		&frontier.RequestError{Request: req("http://h.test/b", "h.test"), Error: "TimeoutError"},
		&frontier.LinksExtracted{Request: req("http://h.test/old", "h.test"), Links: []*frontier.Request{redirected}})
	waitFor(t, "the spider log to be committed", func() bool {
		lag, _ := r.bus.Lag(t.Context(), bus.SpiderLog, bus.GroupDBWorkerSpiderLog)
		return lag[0] == 0
	})
	fp := func(u string) frontier.Fingerprint { s := sha1.Sum([]byte(u)); return s[:] }
	if p, ok, _ := r.pages.Get(t.Context(), fp("http://h.test/")); !ok || p.Status != 200 || p.ContentType != "text/html" || p.LastFetched == 0 {
		t.Errorf("crawled page record = %+v, %v", p, ok)
	}
	if p, ok, _ := r.pages.Get(t.Context(), fp("http://h.test/a")); !ok || p.FirstSeen == 0 || p.LastFetched != 0 {
		t.Errorf("link record = %+v, %v", p, ok)
	}
	if p, ok, _ := r.pages.Get(t.Context(), fp("http://h.test/b")); !ok || p.Error != "TimeoutError" {
		t.Errorf("error record = %+v, %v", p, ok)
	}
	if p, ok, _ := r.pages.Get(t.Context(), fp("http://h.test/old")); !ok || string(p.RedirectTo) != string(fp("http://h.test/new")) {
		t.Errorf("redirect record = %+v, %v; want RedirectTo the target's fingerprint", p, ok)
	}
}

func TestConfigValidate(t *testing.T) {
	c := DefaultConfig()
	c.Roles = []string{"scoring", "nope"}
	c.FeedBatch = 0
	err := c.Validate()
	if err == nil {
		t.Fatal("bad config accepted")
	}
	for _, w := range []string{`"nope"`, "feed_batch = 0"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%v does not mention %s", err, w)
		}
	}
}

// TestGatewayBatches: a gateway's feed partition (Config.Gateways) gets its own batch sizes, the other
// partition the common ones.
func TestGatewayBatches(t *testing.T) {
	hosts := map[int]string{}
	for i := 0; len(hosts) < 2; i++ {
		h := fmt.Sprintf("h%d.test", i)
		if p := partition.Crc32Name([]byte(h), 2); hosts[p] == "" {
			hosts[p] = h
		}
	}
	const gw = 1
	cfg := DefaultConfig()
	cfg.Flow.Enabled = false
	cfg.FeedBatch, cfg.PerHost, cfg.MinHosts = 4, 2, 0
	cfg.Gateways = GatewayBatches{Partitions: []int{gw}, PerHost: 8, FeedBatch: 16}
	if _, per := cfg.batchSizes(1 - gw); per != 2 {
		t.Fatalf("spider partition per_host = %d, want 2", per)
	}
	r := start(t, cfg)
	var msgs []frontier.Message
	for _, h := range hosts {
		for i := range 10 {
			msgs = append(msgs, &frontier.UpdateScore{Request: req(fmt.Sprintf("http://%s/%d", h, i), h), Score: float64(i) / 10, Schedule: true})
		}
	}
	r.send(t, bus.ScoringLog, msgs...)
	// One batch each (nobody reads the feed, so the lag stops the next): 2 of the spider partition's host, 8
	// of the gateway's.
	if got := r.feed(t, 1-gw, 2); len(got) != 2 {
		t.Errorf("spider partition's batch: %d requests, want 2", len(got))
	}
	if got := r.feed(t, gw, 8); len(got) != 8 {
		t.Errorf("gateway partition's batch: %d requests, want 8", len(got))
	}
	waitFor(t, "the rest to stay queued", func() bool {
		a, _ := r.queue.Count(t.Context(), 1-gw)
		b, _ := r.queue.Count(t.Context(), gw)
		return a == 8 && b == 2
	})
	time.Sleep(3 * cfg.PollInterval)
	if a, _ := r.queue.Count(t.Context(), 1-gw); a != 8 {
		t.Errorf("spider partition: %d queued after one batch, want 8", a)
	}
	if b, _ := r.queue.Count(t.Context(), gw); b != 2 {
		t.Errorf("gateway partition: %d queued after one batch, want 2", b)
	}

	bad := DefaultConfig()
	bad.Gateways = GatewayBatches{Partitions: []int{1, 1}, PerHost: -1}
	err := bad.Validate()
	for _, w := range []string{"gateways.partitions: 1", "gateways.per_host = -1"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("%v does not mention %s", err, w)
		}
	}
}
