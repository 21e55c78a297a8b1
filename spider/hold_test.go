package spider

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/membus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/partition"
)

// blockHost holds one host and records what it was handed.
type blockHost struct {
	host     string
	mu       sync.Mutex
	returned []string
}

func (b *blockHost) Blocked(h string) bool { return h == b.host }

func (b *blockHost) Return(_ context.Context, r *frontier.Request) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.returned = append(b.returned, r.URL)
	return nil
}

func (b *blockHost) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.returned)
}

// TestHoldBlockedHost: requests of a blocked host that are already on the feed are not fetched (the host's
// server sees no request) but handed to the Holder, and the feed is committed past them; the other hosts are
// crawled as usual.
func TestHoldBlockedHost(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Plain = true
	wcfg.Hosts, wcfg.PagesPerHost = 3, 5
	site := web.Start(t, wcfg)
	blocked := site.Hosts()[0]
	bu, _ := url.Parse(blocked.Origin)
	hold := &blockHost{host: bu.Hostname()}

	mcfg := membus.DefaultConfig()
	mb, err := membus.New(mcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	ctx := t.Context()
	enc := codec.Msgpack{}
	feedP, err := mb.Producer(ctx, bus.SpiderFeed, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer feedP.Close()
	var urls []string
	for _, p := range site.Pages() {
		urls = append(urls, p.URL)
		v, err := enc.EncodeRequest(&frontier.Request{URL: p.URL, Method: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		if err := feedP.Send(ctx, bus.Message{Key: []byte("k"), Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	logP, err := mb.Producer(ctx, bus.SpiderLog, bus.Partitioner(partition.Fingerprint))
	if err != nil {
		t.Fatal(err)
	}
	defer logP.Close()
	cons, err := mb.Consumer(ctx, bus.SpiderFeed, bus.GroupSpiderFeed, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	feed := &committedConsumer{Consumer: cons}
	cfg := testConfig(t)
	cfg.Delay = 5 * time.Millisecond
	s, err := New(cfg, Deps{Feed: feed, Log: logP, Codec: enc, Identity: newRootIdentity(t), Hold: hold,
		DialContext: site.DialContext, Logger: frontiertest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(rctx) }()
	for feed.next.Load() < int64(len(urls)) {
		select {
		case <-ctx.Done():
			t.Fatalf("feed committed up to %d of %d", feed.next.Load(), len(urls))
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(blocked.Requests()); n != 0 {
		t.Errorf("the blocked host answered %d requests", n)
	}
	if hold.count() != wcfg.PagesPerHost {
		t.Errorf("%d requests returned, want the blocked host's %d pages: %v", hold.count(), wcfg.PagesPerHost, hold.returned)
	}
	for _, h := range site.Hosts()[1:] {
		if len(h.Requests()) == 0 {
			t.Errorf("host %s was not crawled", h.Name)
		}
	}
}
