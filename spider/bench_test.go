package spider

import (
	"context"
	"github.com/frontiercrawl/frontier/identity"
	"net/url"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/membus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/internal/cputime"
	"github.com/frontiercrawl/frontier/partition"
)

// rootIdentity is the identity package's layer (w3lib canonical form, sha1), as cmd/spider uses it.
type rootIdentity struct{ fp *identity.Fingerprinter }

func newRootIdentity(tb testing.TB) rootIdentity {
	fp, err := identity.ParseFingerprinter("sha1", identity.CanonOptions{}, identity.ScrapyOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return rootIdentity{fp}
}

func (i rootIdentity) Fingerprint(u string) (frontier.Fingerprint, error) { return i.fp.URL(u) }

func (i rootIdentity) Domain(u *url.URL) frontier.MetaDomain {
	d, err := identity.DomainInfo(u.String())
	if err != nil {
		d = frontier.MetaDomain{Netloc: u.Host, Name: u.Hostname(), Scheme: u.Scheme}
	}
	d.Fingerprint = identity.DomainFingerprint(d.Name).Hex()
	return d
}

// committedConsumer records the highest committed offset.
type committedConsumer struct {
	bus.Consumer
	next atomic.Int64
}

func (c *committedConsumer) Commit(ctx context.Context, msgs []bus.Message) error {
	if err := c.Consumer.Commit(ctx, msgs); err != nil {
		return err
	}
	for _, m := range msgs {
		if m.Offset+1 > c.next.Load() {
			c.next.Store(m.Offset + 1)
		}
	}
	return nil
}

// BenchmarkSpider200Hosts crawls a pre-filled feed of small HTML pages spread over 200 loopback hosts, with
// delay 0, through membus and the msgpack codec: each iteration is a whole crawl of the feed by a new spider.
// It reports pages/s and the heap+stack held per open host once every host has been fetched (client and
// server side of the loopback connections included, since the site runs in the same process).
func BenchmarkSpider200Hosts(b *testing.B) {
	wcfg := web.DefaultConfig()
	wcfg.Plain, wcfg.DisableRequestLog = true, true
	wcfg.Hosts, wcfg.PagesPerHost = 200, 50
	site := web.Start(b, wcfg)
	var urls []string
	for _, p := range site.Pages() {
		urls = append(urls, p.URL)
	}
	enc := codec.Msgpack{}
	feedMsgs := make([]bus.Message, len(urls))
	for i, u := range urls {
		v, err := enc.EncodeRequest(&frontier.Request{URL: u, Method: "GET"})
		if err != nil {
			b.Fatal(err)
		}
		feedMsgs[i] = bus.Message{Key: []byte("k"), Value: v}
	}
	id := newRootIdentity(b)
	var pages, logMsgs int64
	var perHost float64
	var cpuUsed time.Duration
	for b.Loop() {
		b.StopTimer()
		mcfg := membus.DefaultConfig()
		mcfg.Groups = map[bus.Stream][]string{bus.SpiderFeed: {bus.GroupSpiderFeed}}
		mcfg.MaxBacklog = 0
		mb, err := membus.New(mcfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(b.Context())
		fp, _ := mb.Producer(ctx, bus.SpiderFeed, nil)
		if err := fp.Send(ctx, feedMsgs...); err != nil {
			b.Fatal(err)
		}
		cons, _ := mb.Consumer(ctx, bus.SpiderFeed, bus.GroupSpiderFeed, []int{0})
		feed := &committedConsumer{Consumer: cons}
		logp, _ := mb.Producer(ctx, bus.SpiderLog, bus.Partitioner(partition.Fingerprint))
		cfg := DefaultConfig()
		cfg.Delay, cfg.StateDir, cfg.StatsInterval = 0, "", time.Hour
		cfg.CommitInterval = 50 * time.Millisecond
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		s, err := New(cfg, Deps{Feed: feed, Log: logp, Codec: enc, Identity: id, DialContext: site.DialContext})
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		b.StartTimer()
		start := time.Now()
		cpu0 := cputime.Process()
		go func() { done <- s.Run(ctx) }()
		for feed.next.Load() < int64(len(urls)) {
			time.Sleep(5 * time.Millisecond)
		}
		elapsed := time.Since(start)
		cpuUsed += cputime.Process() - cpu0
		b.StopTimer()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		perHost = float64(int64(after.HeapInuse+after.StackInuse)-int64(before.HeapInuse+before.StackInuse)) / float64(wcfg.Hosts)
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		fp.Close()
		cons.Close()
		logp.Close()
		mb.Close()
		pages += int64(len(urls))
		logMsgs += int64(s.m.messagesReportValue())
		b.ReportMetric(float64(len(urls))/elapsed.Seconds(), "pages/s")
		b.StartTimer()
	}
	b.ReportMetric(perHost/1024, "KiB/open-host")
	b.ReportMetric(float64(cpuUsed.Microseconds())/float64(pages), "CPU-µs/page")
	b.ReportMetric(float64(logMsgs)/float64(pages), "logmsgs/page")
}
