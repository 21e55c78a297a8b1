package spider

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
)

// TestTrackerBounds: MaxPending bounds the open requests, MaxUncommitted the offsets from the watermark on; a
// request that stays open holds the watermark, not the reading, until the second bound.
func TestTrackerBounds(t *testing.T) {
	type step struct {
		name        string
		add         int   // entries read (offsets follow on)
		done        []int // offsets whose outcome becomes durable
		wantFree    int
		wantOpen    int
		wantTracked int
		wantCommit  int64 // -1: nothing to commit
	}
	steps := []step{
		{name: "empty", wantFree: 4, wantCommit: -1},
		{name: "four read: MaxPending reached", add: 4, wantFree: 0, wantOpen: 4, wantTracked: 4, wantCommit: -1},
		{name: "three behind the first done: room for three, the watermark held", done: []int{1, 2, 3}, wantFree: 3, wantOpen: 1, wantTracked: 4, wantCommit: -1},
		{name: "three more read", add: 3, wantFree: 0, wantOpen: 4, wantTracked: 7, wantCommit: -1},
		{name: "done again: bounded by MaxUncommitted now", done: []int{4, 5, 6}, wantFree: 1, wantOpen: 1, wantTracked: 7, wantCommit: -1},
		{name: "one more: the offsets' bound reached", add: 1, wantFree: 0, wantOpen: 2, wantTracked: 8, wantCommit: -1},
		{name: "a second done of one entry changes nothing", done: []int{4}, wantFree: 0, wantOpen: 2, wantTracked: 8, wantCommit: -1},
		{name: "the slow one done: the watermark jumps", done: []int{0}, wantFree: 3, wantOpen: 1, wantTracked: 1, wantCommit: 6},
		{name: "the last done", done: []int{7}, wantFree: 4, wantOpen: 0, wantTracked: 0, wantCommit: 7},
	}
	tr := newTrackerBounded(4, 8)
	var entries []*entry
	for _, s := range steps {
		for range s.add {
			off := int64(len(entries))
			entries = append(entries, tr.add(bus.Message{Offset: off, Value: []byte("request")}))
		}
		for _, off := range s.done {
			tr.done(entries[off])
			for i, e := range tr.q {
				if e == entries[off] {
					t.Fatalf("%s: done entry %d still held at %d", s.name, off, i)
				}
			}
		}
		commit := int64(-1)
		if m, ok := tr.toCommit(); ok {
			commit = m.Offset
		}
		if got := [4]int64{int64(tr.free()), int64(tr.len()), int64(tr.tracked()), commit}; got != [4]int64{int64(s.wantFree), int64(s.wantOpen), int64(s.wantTracked), s.wantCommit} {
			t.Fatalf("%s: free, open, tracked, commit = %v, want %v", s.name, got, [4]int64{int64(s.wantFree), int64(s.wantOpen), int64(s.wantTracked), s.wantCommit})
		}
	}
	if newTrackerBounded(10, 3).maxTracked != 10 {
		t.Error("MaxUncommitted below MaxPending is not raised to it")
	}
}

// flowSpider runs a spider on h's feed that dials ls for every host name, with cfg changed by mod (when not
// nil). The function it returns stops the spider.
func flowSpider(t *testing.T, h *harness, ls *leaseSite, mod func(*Config)) (*Spider, func()) {
	t.Helper()
	cfg := testConfig(t)
	cfg.Delay = 0
	if mod != nil {
		mod(&cfg)
	}
	deps := h.deps
	addr := ls.srv.Listener.Addr().String()
	deps.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	deps.Feed = h.feed.consumer()
	deps.Registerer = prometheus.NewRegistry()
	s, err := New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	return s, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

// reportedURLs counts the distinct URLs with an outcome on the spider log.
func reportedURLs(h *harness) int {
	seen := map[string]bool{}
	for _, r := range h.log.records() {
		switch m := r.msg.(type) {
		case *frontier.PageCrawled:
			seen[m.Response.URL] = true
		case *frontier.RequestError:
			seen[m.Request.URL] = true
		}
	}
	return len(seen)
}

// TestSlowRequestHoldsCommitNotFeed: a request still running holds the feed's commit, but the requests read
// after it are read, fetched and reported past MaxPending (the requests open are what it bounds), up to
// MaxUncommitted offsets; the commit passes them only once the slow one is reported.
func TestSlowRequestHoldsCommitNotFeed(t *testing.T) {
	for _, tc := range []struct {
		name        string
		uncommitted int
		wantFast    int // fast requests reported while the slow one runs
	}{
		{"room for all", 1000, 40},
		{"MaxUncommitted bounds the reading", 10, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ls := newLeaseSite(t)
			urls := []string{ls.url("slow.test", "/slow")}
			for i := range 40 {
				urls = append(urls, ls.url(fmt.Sprintf("fast%d.test", i%4), "/p"+strconv.Itoa(i)))
			}
			h := newHarness(t, nil, urls)
			s, stop := flowSpider(t, h, ls, func(c *Config) { c.MaxPending, c.MaxUncommitted, c.FetchBatch = 4, tc.uncommitted, 2 })
			defer stop()
			waitFor(t, "the fast requests to be reported", func() bool { return reportedURLs(h) == tc.wantFast })
			if got := s.tracker.tracked(); got > tc.uncommitted {
				t.Errorf("%d offsets tracked, above MaxUncommitted %d", got, tc.uncommitted)
			}
			if tc.wantFast < 40 && s.tracker.free() != 0 {
				t.Errorf("free %d with MaxUncommitted reached", s.tracker.free())
			}
			if c := h.feed.Committed(); c != 0 {
				t.Errorf("committed %d while the first request runs", c)
			}
			ls.unblock()
			waitFor(t, "the commit of every request", func() bool { return h.feed.Committed() == int64(len(urls)) })
			if n := reportedURLs(h); n != len(urls) {
				t.Errorf("%d reported, want %d", n, len(urls))
			}
		})
	}
}

// BenchmarkHostQueue is the per-host queue's hot path, without the network: a feed message is tracked, its
// fingerprint leased, the request queued on its host (one of 1,000) and taken off again, and its outcome made
// durable. Reports URLs/s through that path on one goroutine.
func BenchmarkHostQueue(b *testing.B) {
	const hosts = 1000
	s := &Spider{hosts: map[string]*host{}, tracker: newTrackerBounded(20_000, 100_000)}
	items := make([]*item, hosts*4)
	fps := make([]string, len(items))
	for i := range items {
		u, _ := url.Parse(fmt.Sprintf("http://h%d.example/p%d", i%hosts, i))
		items[i] = &item{u: u, req: &frontier.Request{URL: u.String()}}
		fps[i] = fmt.Sprintf("%040x", i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(items)
		it := items[k]
		it.entry = s.tracker.add(bus.Message{Offset: int64(i)})
		s.tracker.claim(it.entry, fps[k], 0)
		s.hostsMu.Lock()
		h := s.hostLocked(it.u.Hostname())
		h.push(it)
		got := h.pop()
		s.hostsMu.Unlock()
		s.tracker.done(got.entry)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}

// TestTrackerCompaction: done entries far behind a held watermark keep only their offsets (gaps in the offsets
// included), the watermark jumps over them once the holder is done, and entries keep their places across the
// tracker's compactions.
func TestTrackerCompaction(t *testing.T) {
	tr := newTrackerBounded(10_000, 10_000)
	var es []*entry
	for i := range 3000 {
		es = append(es, tr.add(bus.Message{Partition: 3, Offset: int64(2 * i)}))
	}
	for i := len(es) - 1; i > 0; i-- {
		tr.done(es[i])
	}
	after, done, ok := tr.beyond()
	if !ok || after != -1 || len(done) != 2999 || done[0] != 2 || done[2998] != 5998 {
		t.Fatalf("beyond = %d, %d offsets (%v…), %v; want -1, 2999 from 2", after, len(done), done[:min(3, len(done))], ok)
	}
	if _, ok := tr.toCommit(); ok {
		t.Fatal("watermark moved past the held entry")
	}
	tr.done(es[0])
	if m, ok := tr.toCommit(); !ok || m.Offset != 5998 || m.Partition != 3 || tr.tracked() != 0 {
		t.Fatalf("after the holder: commit %+v %v, tracked %d; want offset 5998 of partition 3, 0 tracked", m, ok, tr.tracked())
	}
	// Many more, done in order while one in the middle waits: compactions move the entries; done must still
	// find each one.
	es = es[:0]
	for i := range 5000 {
		es = append(es, tr.add(bus.Message{Partition: 3, Offset: int64(6000 + i)}))
	}
	base := tr.base
	for i, e := range es {
		if i != 4000 {
			tr.done(e)
		}
	}
	if tr.base == base {
		t.Fatal("no compaction while 4,000 entries passed the watermark")
	}
	if m, _ := tr.toCommit(); m.Offset != 6000+3999 || tr.tracked() != 1000 || tr.len() != 1 {
		t.Fatalf("commit %d, tracked %d, open %d; want 9999, 1000, 1", m.Offset, tr.tracked(), tr.len())
	}
	tr.done(es[4000])
	if m, _ := tr.toCommit(); m.Offset != 10999 || tr.tracked() != 0 || tr.len() != 0 {
		t.Fatalf("commit %d, tracked %d, open %d; want 10999, 0, 0", m.Offset, tr.tracked(), tr.len())
	}
}
