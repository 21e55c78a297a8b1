package dbworker

import (
	"context"
	"crypto/sha1"
	"fmt"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/membus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/internal/cputime"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/queue"
)

// nopPages is a metadata store that keeps nothing, so the benchmarks measure the DB worker's own work.
type nopPages struct{ n int }

func (s *nopPages) Put(_ context.Context, pages []metadata.Page) error {
	s.n += len(pages)
	return nil
}

func (*nopPages) Get(context.Context, frontier.Fingerprint) (metadata.Page, bool, error) {
	return metadata.Page{}, false, nil
}

// benchPage is a crawled page's request as a spider reports it: fingerprint, domain, score, job id, digest.
func benchPage(host string, i int) *frontier.Request {
	u := fmt.Sprintf("http://%s/p%d", host, i)
	r := &frontier.Request{URL: u, Method: "GET"}
	fp := sha1.Sum([]byte(u))
	r.SetMetaFingerprint(fp[:])
	r.SetMetaDomain(frontier.MetaDomain{Name: host, Netloc: host, Scheme: "http", SLD: host[:len(host)-5], TLD: "test", Fingerprint: fmt.Sprintf("%040x", sha1.Sum([]byte(host)))})
	r.SetMetaScore(0.5)
	r.SetMetaJobID(0)
	r.SetMetaDigest(fmt.Sprintf("%040x", fp))
	return r
}

// benchLink is an extracted link as a spider reports it: fingerprint, domain, discovery time.
func benchLink(host string, i int) *frontier.Request {
	u := fmt.Sprintf("http://%s/p%d", host, i)
	r := &frontier.Request{URL: u, Method: "GET"}
	fp := sha1.Sum([]byte(u))
	r.SetMetaFingerprint(fp[:])
	r.SetMetaDomain(frontier.MetaDomain{Name: host, Netloc: host, Scheme: "http", SLD: host[:len(host)-5], TLD: "test", Fingerprint: fmt.Sprintf("%040x", sha1.Sum([]byte(host)))})
	r.Meta.Set("frontier_discovered", int64(1_700_000_000_000))
	return r
}

// benchSpiderLog is the spider log of pages crawled on hosts hosts, as the fast web makes it: for each page a
// page_crawled and a links_extracted of 5 links to its own host, of which known are links of pages before
// (recorded already) and the rest new.
func benchSpiderLog(tb testing.TB, c codec.Codec, pages, hosts, known int) []bus.Message {
	var msgs []bus.Message
	next := make([]int, hosts) // next new page number per host
	for i := range pages {
		h := i % hosts
		host := fmt.Sprintf("h%d.test", h)
		page := benchPage(host, i/hosts)
		resp := &frontier.Response{URL: page.URL, Status: 200, Request: page,
			Headers: frontier.Headers{ // what the crawl's web server answers (net/http adds Content-Length and Date)
				{Name: []byte("Content-Length"), Values: [][]byte{[]byte("2817")}},
				{Name: []byte("Content-Type"), Values: [][]byte{[]byte("text/html; charset=utf-8")}},
				{Name: []byte("Date"), Values: [][]byte{[]byte("Sat, 28 Nov 2026 02:40:00 GMT")}}}}
		links := make([]*frontier.Request, 5)
		for k := range links {
			if k < known && next[h] > 0 {
				links[k] = benchLink(host, (i*7+k)%next[h])
			} else {
				links[k] = benchLink(host, next[h])
				next[h]++
			}
		}
		for _, m := range []frontier.Message{&frontier.PageCrawled{Response: resp}, &frontier.LinksExtracted{Request: page, Links: links}} {
			v, err := c.EncodeMessage(m)
			if err != nil {
				tb.Fatal(err)
			}
			msgs = append(msgs, bus.Message{Value: v, Partition: h % 4, Offset: int64(len(msgs))})
		}
	}
	return msgs
}

// BenchmarkLinks is the links role's CPU per spider-log message (decode and handle, the store a no-op): 4,000
// pages on 200 hosts, each a page_crawled (3 response headers) and a links_extracted of 5 links of which 4 were
// seen (the fast web's ~80% known), read in batches of 256 messages, with the flow on (the standalone's default).
//
//	go test -run '^$' -bench BenchmarkLinks -count 5 ./dbworker/
func BenchmarkLinks(b *testing.B) {
	c := codec.Msgpack{}
	msgs := benchSpiderLog(b, c, 4000, 200, 4)
	cfg := DefaultConfig()
	cfg.LinksCache = 50_000
	store := &nopPages{}
	w, err := New(cfg, Deps{Bus: benchBus(b), Codec: c, Queue: queue.NewMemory(), Pages: store, Now: func() time.Time { return time.Unix(1000, 0) }})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	l := w.newLinksRole()
	b.ReportAllocs()
	var cpu time.Duration
	n := 0
	for b.Loop() {
		l.seen = newSeenSet(cfg.LinksCache) // so that 4 of 5 links are known, as in a crawl, not all of them
		c0 := cputime.Process()
		for start := 0; start < len(msgs); start += 256 {
			batch := msgs[start:min(start+256, len(msgs))]
			events := make([]frontier.Message, 0, len(batch))
			for _, m := range batch {
				e, err := l.decode(m)
				if err != nil {
					b.Fatal(err)
				}
				events = append(events, e)
			}
			if err := l.handle(ctx, events); err != nil {
				b.Fatal(err)
			}
		}
		cpu += cputime.Process() - c0
		n += len(msgs)
	}
	b.ReportMetric(float64(n)/cpu.Seconds(), "msgs/cpu-s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/msg")
	b.ReportMetric(float64(store.n)/float64(n), "pages/msg")
}

// BenchmarkScoring is the scoring role's CPU per update_score (decode, the feed request's encoding, the queue
// item; the queue in memory): 4,096 messages on 200 hosts a batch.
//
//	go test -run '^$' -bench BenchmarkScoring -count 5 ./dbworker/
func BenchmarkScoring(b *testing.B) {
	c := codec.Msgpack{}
	var msgs []bus.Message
	for i := range 4096 {
		r := benchLink(fmt.Sprintf("h%d.test", i%200), i)
		r.SetMetaScore(0.5)
		v, err := c.EncodeMessage(&frontier.UpdateScore{Request: r, Score: 0.5, Schedule: true})
		if err != nil {
			b.Fatal(err)
		}
		msgs = append(msgs, bus.Message{Value: v})
	}
	w, err := New(DefaultConfig(), Deps{Bus: benchBus(b), Codec: c, Queue: queue.NewMemory(), Pages: &nopPages{}})
	if err != nil {
		b.Fatal(err)
	}
	decode := w.scoringDecoder()
	ctx := context.Background()
	b.ReportAllocs()
	var cpu time.Duration
	n := 0
	for b.Loop() {
		q := queue.NewMemory()
		w.deps.Queue = q
		c0 := cputime.Process()
		events := make([]frontier.Message, 0, len(msgs))
		for _, m := range msgs {
			e, err := decode(m)
			if err != nil {
				b.Fatal(err)
			}
			events = append(events, e)
		}
		if err := w.schedule(ctx, events); err != nil {
			b.Fatal(err)
		}
		cpu += cputime.Process() - c0
		n += len(msgs)
	}
	b.ReportMetric(float64(n)/cpu.Seconds(), "msgs/cpu-s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/msg")
}

func benchBus(tb testing.TB) bus.Bus {
	b, err := membus.New(membus.DefaultConfig(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	return b
}
