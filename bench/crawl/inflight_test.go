package crawl

import (
	"context"
	"strconv"
	"testing"
	"time"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/membus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/identity"
	"github.com/frontiercrawl/frontier/partition"
	"github.com/frontiercrawl/frontier/spider"
)

// TestSpiderAloneInFlight gives one spider (default configuration, delay 0) a feed pre-filled with the pages
// of a slow simulated web (-crawl.inflight HOSTSxPAGES, -crawl.latency per fetch, 200ms if unset), so that the
// frontier's own speed plays no part, and samples every 20 ms how many fetches the web sees at once.
func TestSpiderAloneInFlight(t *testing.T) {
	hosts, pages, err := parseSize(*flagInFlight)
	if err != nil {
		t.Fatal(err)
	}
	latency := *flagLatency
	if latency == 0 {
		latency = 200 * time.Millisecond
	}
	sw := newSimWeb(hosts, pages, *flagLinks, latency)
	enc := codec.Msgpack{}
	var msgs []bus.Message
	for p := range pages { // page-major: every host appears early in the feed
		for h := range hosts {
			v, err := enc.EncodeRequest(&frontier.Request{URL: "http://h" + strconv.Itoa(h) + ".sim/p" + strconv.Itoa(p), Method: "GET"})
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, bus.Message{Key: []byte("h" + strconv.Itoa(h)), Value: v})
		}
	}
	mcfg := membus.DefaultConfig()
	mcfg.Groups = map[bus.Stream][]string{bus.SpiderFeed: {bus.GroupSpiderFeed}}
	mcfg.MaxBacklog = 0
	mb, err := membus.New(mcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	fp, _ := mb.Producer(ctx, bus.SpiderFeed, nil)
	defer fp.Close()
	if err := fp.Send(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	feed, _ := mb.Consumer(ctx, bus.SpiderFeed, bus.GroupSpiderFeed, []int{0})
	defer feed.Close()
	logp, _ := mb.Producer(ctx, bus.SpiderLog, bus.Partitioner(partition.Fingerprint))
	defer logp.Close()
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := spider.DefaultConfig()
	cfg.Delay, cfg.ObeyRobots, cfg.StateDir, cfg.StatsInterval = 0, false, "", time.Hour
	cfg.MaxPending = max(cfg.MaxPending, len(msgs))
	s, err := spider.New(cfg, spider.Deps{Feed: feed, Log: logp, Codec: enc, Identity: id, Transport: sw})
	if err != nil {
		t.Fatal(err)
	}
	m := startMeter()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	total := int64(len(msgs))
	var samples, sum, peak int64
	for tick := time.NewTicker(20 * time.Millisecond); sw.unique.Load() < total; <-tick.C {
		n := sw.inFlight.Load()
		if u := sw.unique.Load(); u > total/10 && u < total*9/10 {
			samples++
			sum += n
		}
		peak = max(peak, n)
		if time.Since(start) > *flagTimeout {
			t.Fatalf("fetched %d of %d in %v", sw.unique.Load(), total, *flagTimeout)
		}
	}
	wall := time.Duration(sw.last.Load() - start.UnixNano())
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cpu := m.done()
	mean := 0.0
	if samples > 0 {
		mean = float64(sum) / float64(samples)
	}
	reportMem(t, m, "one spider alone, pre-filled feed of "+*flagInFlight+" simulated pages at "+latency.String()+" per fetch",
		sw.unique.Load(), wall, cpu, m.peakRSS.Load(), m.load, "mean in flight (10-90%)", mean, "peak in flight", peak,
		"max_in_flight", cfg.MaxInFlight)
}
