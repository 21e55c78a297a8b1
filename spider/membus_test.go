package spider

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/membus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/partition"
)

// TestRestartWithMembus is the kill-mid-batch test on the real in-process bus and the msgpack codec: a spider
// is cancelled mid-batch, a second one resumes from the group's committed offset (and the saved state), and
// the server counts fetches per URL.
func TestRestartWithMembus(t *testing.T) {
	t.Run("clean stop", func(t *testing.T) { restartWithMembus(t, true) })
	// Without the saved state (as after kill -9, when nothing could be saved) the restart fetches again what
	// was not committed: at most the lag at the stop.
	t.Run("no saved state", func(t *testing.T) { restartWithMembus(t, false) })
}

func restartWithMembus(t *testing.T, keepState bool) {
	wcfg := web.DefaultConfig()
	wcfg.Plain = true
	wcfg.Hosts, wcfg.PagesPerHost = 6, 30
	site := web.Start(t, wcfg)
	var urls []string
	for _, p := range site.Pages() {
		urls = append(urls, p.URL)
	}
	mcfg := membus.DefaultConfig()
	mcfg.Groups = map[bus.Stream][]string{bus.SpiderFeed: {bus.GroupSpiderFeed}, bus.SpiderLog: {"test"}}
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
	for _, u := range urls {
		v, err := enc.EncodeRequest(&frontier.Request{URL: u, Method: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		if err := feedP.Send(ctx, bus.Message{Key: []byte("k"), Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	inner, err := mb.Producer(ctx, bus.SpiderLog, bus.Partitioner(partition.Fingerprint))
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	logP := &countingProducer{Producer: inner}

	cfg := testConfig(t)
	cfg.Delay = 40 * time.Millisecond
	if !keepState {
		cfg.StateDir = ""
	}
	run := func(until func(committed int64) bool) {
		t.Helper()
		cons, err := mb.Consumer(ctx, bus.SpiderFeed, bus.GroupSpiderFeed, []int{0})
		if err != nil {
			t.Fatal(err)
		}
		defer cons.Close()
		feed := &committedConsumer{Consumer: cons}
		s, err := New(cfg, Deps{Feed: feed, Log: logP, Codec: enc, Identity: newRootIdentity(t),
			DialContext: site.DialContext, Logger: frontiertest.Logger(t), Registerer: prometheus.NewRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- s.Run(rctx) }()
		guard := time.After(2 * time.Minute)
		for !until(feed.next.Load()) {
			select {
			case <-guard:
				t.Fatalf("stuck at committed offset %d", feed.next.Load())
			case <-time.After(5 * time.Millisecond):
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	run(func(int64) bool { return logP.n.Load() >= int64(len(urls))/2 }) // mid-batch: about a fifth of the pages
	lag, _ := mb.Lag(ctx, bus.SpiderFeed, bus.GroupSpiderFeed)
	t.Logf("first run stopped with lag %v of %d", lag, len(urls))
	if lag[0] == 0 {
		t.Skip("the first run finished everything; nothing to check")
	}
	run(func(c int64) bool { return c >= int64(len(urls)) })

	dup := refetched(t, site, urls)
	bound := int64(len(site.Hosts()) * cfg.ConnsPerHost) // the requests that can be in flight
	if !keepState {
		bound = lag[0]
	}
	t.Logf("fetched twice: %d (bound %d)", dup, bound)
	if int64(dup) > bound {
		t.Errorf("%d URLs fetched twice, want <= %d", dup, bound)
	}

	// Every URL's outcome is on the spider log, decodable by the real codec.
	logC, err := mb.Consumer(ctx, bus.SpiderLog, "test", []int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer logC.Close()
	reported := map[string]bool{}
	for len(reported) < len(urls) {
		fctx, cancel := context.WithTimeout(ctx, time.Second)
		msgs, err := logC.Fetch(fctx, 1000)
		cancel()
		if err != nil {
			t.Fatalf("spider log: %v (have %d of %d outcomes)", err, len(reported), len(urls))
		}
		for _, m := range msgs {
			dm, err := enc.DecodeMessage(m.Value)
			if err != nil {
				t.Fatalf("decode spider-log message: %v", err)
			}
			if pc, ok := dm.(*frontier.PageCrawled); ok {
				reported[pc.Response.URL] = true
			}
		}
	}
}

// countingProducer counts the messages acknowledged.
type countingProducer struct {
	bus.Producer
	n atomic.Int64
}

func (p *countingProducer) Send(ctx context.Context, msgs ...bus.Message) error {
	err := p.Producer.Send(ctx, msgs...)
	if err == nil {
		p.n.Add(int64(len(msgs)))
	}
	return err
}
