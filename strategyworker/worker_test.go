package strategyworker

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/membus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/scope"
	"github.com/frontiercrawl/frontier/state"
	_ "github.com/frontiercrawl/frontier/strategy/depth"
	_ "github.com/frontiercrawl/frontier/strategy/discovery"
	_ "github.com/frontiercrawl/frontier/strategy/revisit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func sha(u string) frontier.Fingerprint { s := sha1.Sum([]byte(u)); return s[:] }

func req(u string, depth int64) *frontier.Request {
	r := &frontier.Request{URL: u, Method: "GET"}
	r.SetMetaFingerprint(sha(u))
	if depth >= 0 {
		r.SetMetaDepth(depth)
	}
	return r
}

type rig struct {
	bus    *membus.Bus
	codec  codec.Codec
	states *state.Memory
	// optional: the worker's configuration, counter store and clock (defaults otherwise)
	cfg     *Config
	domains metadata.Domains
	now     func() time.Time
}

func newRig(t *testing.T) *rig {
	t.Helper()
	b, err := membus.New(membus.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return &rig{bus: b, codec: codec.Msgpack{}, states: state.NewMemory()}
}

func (r *rig) publish(t *testing.T, msgs ...frontier.Message) {
	t.Helper()
	p, err := r.bus.Producer(t.Context(), bus.SpiderLog, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, m := range msgs {
		v, err := r.codec.EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Send(t.Context(), bus.Message{Value: v}); err != nil {
			t.Fatal(err)
		}
	}
}

func (r *rig) publishRaw(t *testing.T, v []byte) {
	t.Helper()
	p, _ := r.bus.Producer(t.Context(), bus.SpiderLog, nil)
	defer p.Close()
	if err := p.Send(t.Context(), bus.Message{Value: v}); err != nil {
		t.Fatal(err)
	}
}

// runUntilIdle runs a worker until the spider log is fully committed, then stops it.
func (r *rig) runUntilIdle(t *testing.T) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Scope.Follow = scope.FollowAny // these tests publish links without seeds (scope_test.go tests the scope)
	if r.cfg != nil {
		cfg = *r.cfg
	}
	w, err := New(cfg, Deps{Bus: r.bus, Codec: r.codec, States: r.states, Domains: r.domains, Now: r.now,
		Fingerprint: func(u string) (frontier.Fingerprint, error) { return sha(u), nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	for {
		lag, err := r.bus.Lag(t.Context(), bus.SpiderLog, bus.GroupStrategyWorkerSpiderLog)
		if err != nil {
			t.Fatal(err)
		}
		if lag[0] == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// scores reads every update_score on the scoring log, committing nothing.
func (r *rig) scores(t *testing.T) []*frontier.UpdateScore {
	t.Helper()
	c, err := r.bus.Consumer(t.Context(), bus.ScoringLog, "test-reader", []int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out []*frontier.UpdateScore
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		msgs, err := c.Fetch(ctx, 1000)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			d, err := r.codec.DecodeMessage(m.Value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, d.(*frontier.UpdateScore))
		}
	}
}

func (r *rig) state(t *testing.T, u string) frontier.State {
	t.Helper()
	out := make([]state.Entry, 1)
	if err := r.states.Get(t.Context(), []frontier.Fingerprint{sha(u)}, out, make([]bool, 1)); err != nil {
		t.Fatal(err)
	}
	return out[0].State
}

func TestURLSeenTestAndScores(t *testing.T) {
	r := newRig(t)
	r.publish(t,
		&frontier.AddSeeds{Seeds: []*frontier.Request{req("http://a.test/", -1)}},
		&frontier.PageCrawled{Response: &frontier.Response{URL: "http://a.test/", Status: 200, Request: req("http://a.test/", 0)}},
		&frontier.LinksExtracted{Request: req("http://a.test/", 0), Links: []*frontier.Request{
			req("http://a.test/1", -1), req("http://a.test/", -1), req("http://a.test/1", -1)}},
		&frontier.RequestError{Request: req("http://a.test/gone", 1), Error: "DNSLookupError"},
	)
	r.publishRaw(t, []byte("\xc1 not msgpack")) // malformed: counted and skipped
	r.publish(t, &frontier.LinksExtracted{Request: req("http://a.test/1", 1), Links: []*frontier.Request{req("http://a.test/2", -1)}})
	r.runUntilIdle(t)

	got := r.scores(t)
	want := []struct {
		url   string
		score float64
	}{{"http://a.test/", 1}, {"http://a.test/1", 0.5}, {"http://a.test/2", 1.0 / 3}}
	if len(got) != len(want) {
		t.Fatalf("got %d update_score messages, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Request.URL != w.url || got[i].Score != w.score || !got[i].Schedule {
			t.Errorf("update_score %d = %s %v %v, want %s %v", i, got[i].Request.URL, got[i].Score, got[i].Schedule, w.url, w.score)
		}
	}
	for u, s := range map[string]frontier.State{"http://a.test/": frontier.Crawled, "http://a.test/1": frontier.Queued,
		"http://a.test/2": frontier.Queued, "http://a.test/gone": frontier.Error} {
		if got := r.state(t, u); got != s {
			t.Errorf("state of %s = %v, want %v", u, got, s)
		}
	}
	if r.bus.Malformed() != 1 {
		t.Errorf("malformed count = %d, want 1", r.bus.Malformed())
	}

	// A second worker (a restart) sees the same links again: nothing is scheduled twice, except a request
	// that opts out of the URL-seen test with dont_filter.
	again := req("http://a.test/2", -1)
	again.SetDontFilter(true)
	r.publish(t, &frontier.LinksExtracted{Request: req("http://a.test/", 0), Links: []*frontier.Request{req("http://a.test/1", -1), req("http://a.test/3", -1), again}})
	r.runUntilIdle(t)
	got = r.scores(t)
	if len(got) != 5 || got[3].Request.URL != "http://a.test/3" || got[4].Request.URL != "http://a.test/2" {
		var urls []string
		for _, u := range got {
			urls = append(urls, u.Request.URL)
		}
		t.Errorf("after the restart: %v; want two more, /3 and the dont_filter /2", urls)
	}
}

func TestNewRejectsBadSetups(t *testing.T) {
	if _, err := New(Config{}, Deps{}); err == nil {
		t.Error("zero config accepted")
	}
	cfg := DefaultConfig()
	cfg.Strategy = "nope"
	r := newRig(t)
	_, err := New(cfg, Deps{Bus: r.bus, Codec: r.codec, States: r.states, Fingerprint: func(string) (frontier.Fingerprint, error) { return nil, nil }})
	if err == nil {
		t.Error("unknown strategy accepted")
	}
}

// BenchmarkLinksExtracted measures a batch as the worker handles it: 512 links_extracted events of 10 new
// links each (one state read and one write per link, the strategy, one update_score encoded per link), over
// the in-memory state store and bus.
func BenchmarkLinksExtracted(b *testing.B) { benchLinks(b, "bfs", nil) }

// BenchmarkLinksExtractedDiscovery is the same batch under discovery with a domain budget: two counters read
// per link (the domain's pages and whether it is dead) and one added, from the worker's counter cache over
// the in-memory domain store.
func BenchmarkLinksExtractedDiscovery(b *testing.B) {
	benchLinks(b, "discovery", map[string]any{"max_pages": 1 << 30, "domain_budget": 1 << 30})
}

func benchLinks(b *testing.B, name string, opts map[string]any) {
	bb, err := membus.New(membus.DefaultConfig(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bb.Close()
	cfg := DefaultConfig()
	cfg.Scope.Follow = scope.FollowAny // no seeds: every link counts
	cfg.Strategy, cfg.Options = name, opts
	w, err := New(cfg, Deps{Bus: bb, Codec: codec.Msgpack{}, States: state.NewMemory(),
		Fingerprint: func(u string) (frontier.Fingerprint, error) { return sha(u), nil }})
	if err != nil {
		b.Fatal(err)
	}
	out, _ := bb.Producer(b.Context(), bus.ScoringLog, nil)
	defer out.Close()
	n := 0
	batch := func() []frontier.Message {
		events := make([]frontier.Message, 512)
		for i := range events {
			links := make([]*frontier.Request, 10)
			for j := range links {
				n++
				links[j] = req(fmt.Sprintf("http://h%d.test/p%d", n%100, n), -1)
			}
			events[i] = &frontier.LinksExtracted{Request: req("http://h.test/", 0), Links: links}
		}
		return events
	}
	links := 0
	for b.Loop() {
		b.StopTimer()
		events := batch()
		b.StartTimer()
		if err := w.handle(b.Context(), events, out); err != nil {
			b.Fatal(err)
		}
		links += 512 * 10
	}
	b.ReportMetric(float64(links)/b.Elapsed().Seconds(), "links/s")
}

// TestCountersAndRevisitSurviveRestarts: the discovery budget's counters live in the domain store and a
// revisit's due time beside the state, so a second worker (a restart) goes on where the first stopped.
func TestCountersAndRevisitSurviveRestarts(t *testing.T) {
	r := newRig(t)
	r.domains = metadata.NewMemoryDomains()
	cfg := DefaultConfig()
	cfg.Strategy, cfg.Options = "discovery", map[string]any{"max_pages": 3}
	cfg.Scope.Follow = scope.FollowAny // discovery goes to new domains
	r.cfg = &cfg
	r.publish(t, &frontier.AddSeeds{Seeds: []*frontier.Request{req("http://a.test/", -1)}},
		&frontier.LinksExtracted{Request: req("http://a.test/", 0), Links: []*frontier.Request{req("http://a.test/1", -1)}})
	r.runUntilIdle(t)
	r.publish(t, &frontier.LinksExtracted{Request: req("http://a.test/", 0), Links: []*frontier.Request{
		req("http://www.a.test/2", -1), req("http://a.test/3", -1), req("http://other.test/x", -1)}})
	r.runUntilIdle(t)
	var urls []string
	for _, u := range r.scores(t) {
		urls = append(urls, u.Request.URL)
	}
	if fmt.Sprint(urls) != "[http://a.test/ http://a.test/1 http://www.a.test/2 http://other.test/ http://other.test/x]" {
		t.Errorf("scheduled %v: want a.test's budget of 3 kept across the restart", urls)
	}
	if n, _ := r.domains.Get(t.Context(), "discovery_pages", []string{"a.test", "other.test"}); fmt.Sprint(n) != "[3 2]" {
		t.Errorf("stored counters %v, want [3 2]", n)
	}

	now := time.Unix(2_000_000_000, 0)
	cfg.Strategy, cfg.Options = "revisit", map[string]any{"min_interval": "1h", "initial_interval": "2h", "max_interval": "8h"}
	r.now = func() time.Time { return now }
	r.publish(t, &frontier.PageCrawled{Response: &frontier.Response{URL: "http://a.test/1", Status: 200, Request: req("http://a.test/1", 1)}})
	r.runUntilIdle(t)
	out := make([]state.Entry, 1)
	if err := r.states.Get(t.Context(), []frontier.Fingerprint{sha("http://a.test/1")}, out, make([]bool, 1)); err != nil {
		t.Fatal(err)
	}
	if want := (state.Entry{State: frontier.Crawled, RevisitAt: now.Add(2 * time.Hour).Unix()}); out[0] != want {
		t.Errorf("stored entry %+v, want %+v", out[0], want)
	}
	got := r.scores(t)
	last := got[len(got)-1]
	if nb, _ := last.Request.MetaNotBefore(); last.Request.URL != "http://a.test/1" || nb != now.Add(2*time.Hour).Unix() {
		t.Errorf("revisit %s due %d, want http://a.test/1 due %d", last.Request.URL, nb, now.Add(2*time.Hour).Unix())
	}
}
