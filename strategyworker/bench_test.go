package strategyworker

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/internal/cputime"
	"github.com/frontiercrawl/frontier/state"
)

// discardProducer stands in for the scoring log: it counts and drops what the worker sends.
type discardProducer struct{ n int }

func (p *discardProducer) Send(_ context.Context, msgs ...bus.Message) error {
	p.n += len(msgs)
	return nil
}
func (p *discardProducer) Close() error { return nil }

// benchDomain is the domain meta the spider gives a request of host (spider/report.go): seven bin fields.
func benchDomain(host string) frontier.MetaDomain {
	return frontier.MetaDomain{Netloc: host, Name: host, Scheme: "http", SLD: host, TLD: "", Subdomain: "",
		Fingerprint: sha(host).Hex()}
}

// benchPage returns what a spider reports for one page of the timing web (spider/report.go): a page_crawled
// whose request carries the feed's meta plus the digest, and one links_extracted per link host (here one) whose
// links carry fingerprint, domain and discovery time. The page has nLinks links (at most 10) to its own host: the
// first nSeen to pages 1 … nSeen of the host (seen after the first batch), the others new (page n of host h
// links to pages 10n+1 … 10n+10).
func benchPage(c codec.Codec, h, n, nLinks, nSeen int) ([][]byte, error) {
	host := fmt.Sprintf("127.0.%d.%d:8080", h/250, h%250+1)
	page := req(fmt.Sprintf("http://%s/p/%d", host, n), int64(n%7))
	page.Method = "GET"
	page.SetMetaDomain(benchDomain(host))
	page.Meta.Set(frontier.MetaKeyScore, 0.5)
	page.Meta.Set("frontier_digest", "da39a3ee5e6b4b0d3255bfef95601890afd80709")
	resp := &frontier.Response{URL: page.URL, Status: 200, Request: page,
		Headers: frontier.Headers{{Name: []byte("Content-Type"), Values: [][]byte{[]byte("text/html")}}}}
	links := make([]*frontier.Request, nLinks)
	for i := range links {
		target := 10*n + 1 + i
		if i < nSeen {
			target = 1 + i // the same pages of the host: seen after the first batch
		}
		l := req(fmt.Sprintf("http://%s/p/%d", host, target), -1)
		l.SetMetaDomain(benchDomain(host))
		l.Meta.Set("frontier_discovered", int64(1764100000000+n))
		links[i] = l
	}
	var out [][]byte
	for _, m := range []frontier.Message{&frontier.PageCrawled{Response: resp}, &frontier.LinksExtracted{Request: page, Links: links}} {
		v, err := c.EncodeMessage(m)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// benchSeed is what a URLFrontier gateway's put of a new URL sends (urlfrontier Gateway.PutAsync): an add_seeds
// of that one URL, with fingerprint, domain and discovery time (page n of host h).
func benchSeed(c codec.Codec, h, n int) ([][]byte, error) {
	host := fmt.Sprintf("127.0.%d.%d:8080", h/250, h%250+1)
	r := req(fmt.Sprintf("http://%s/p/%d", host, n), -1)
	r.SetMetaDomain(benchDomain(host))
	r.Meta.Set("frontier_discovered", int64(1764100000000+n))
	v, err := c.EncodeMessage(&frontier.AddSeeds{Seeds: []*frontier.Request{r}})
	return [][]byte{v}, err
}

// BenchmarkHandle is the strategy worker's cost per spider-log message: decoding a batch of page_crawled and
// links_extracted messages shaped like the spider's (10 links of the page's host each: new ones in "new",
// pages seen before in "seen"; in "mixed", 5 links of which 4 seen before, about a crawl's page on the fast web:
// ~5 links, ~80% known; in "seeds", add_seeds of one new URL each, as a URLFrontier put sends, 1,000 hosts) and
// handling it
// (states through the cache over an in-memory store, the BFS strategy, scope, update_score encoded). The
// scoring log and the state store are in memory, so what is measured is the worker's own CPU and allocations.
//
//	go test -run '^$' -bench BenchmarkHandle -benchtime 100x -count 3 ./strategyworker/
func BenchmarkHandle(b *testing.B) {
	for _, mode := range []struct {
		name         string
		links, nSeen int
	}{{"new", 10, 0}, {"seen", 10, 10}, {"mixed", 5, 4}, {"seeds", 0, 0}} {
		b.Run(mode.name, func(b *testing.B) { benchHandle(b, mode.links, mode.nSeen) })
	}
}

func benchHandle(b *testing.B, nLinks, nSeen int) {
	const hosts, pagesPerBatch = 200, 256 // a batch: 256 pages, 512 messages, 2,816 URLs
	c := codec.Msgpack{}
	cfg := DefaultConfig()
	w, err := New(cfg, Deps{Bus: noBus{}, Codec: c, States: state.NewMemory(),
		Fingerprint: func(u string) (frontier.Fingerprint, error) { return sha(u), nil }})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	out := &discardProducer{}
	// The seeds: every host in scope.
	seeds := make([]*frontier.Request, hosts)
	for h := range seeds {
		host := fmt.Sprintf("127.0.%d.%d:8080", h/250, h%250+1)
		seeds[h] = req("http://"+host+"/", 0)
		seeds[h].SetMetaDomain(benchDomain(host))
	}
	if err := w.handle(ctx, []frontier.Message{&frontier.AddSeeds{Seeds: seeds}}, out); err != nil {
		b.Fatal(err)
	}
	out.n = 0
	batch := func(i int) [][]byte {
		var raw [][]byte
		for j := range pagesPerBatch {
			k := i*pagesPerBatch + j
			var ms [][]byte
			var err error
			if nLinks == 0 {
				ms, err = benchSeed(c, k%1000, 1+k/1000)
			} else {
				ms, err = benchPage(c, k%hosts, 1+k/hosts, nLinks, nSeen)
			}
			if err != nil {
				b.Fatal(err)
			}
			raw = append(raw, ms...)
		}
		return raw
	}
	batches := make([][][]byte, b.N)
	for i := range batches {
		batches[i] = batch(i)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	m0, cpu0, msgs, links := ms.Mallocs, cputime.Process(), 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	decode := w.newDecoder() // as run decodes
	for _, raw := range batches {
		events := make([]frontier.Message, 0, len(raw))
		for _, v := range raw {
			m, err := decode(v)
			if err != nil {
				b.Fatal(err)
			}
			events = append(events, m)
			switch m := m.(type) {
			case *frontier.LinksExtracted:
				links += len(m.Links)
			case *frontier.AddSeeds:
				links += len(m.Seeds)
			}
		}
		if err := w.handle(ctx, events, out); err != nil {
			b.Fatal(err)
		}
		msgs += len(raw)
	}
	b.StopTimer()
	cpu := cputime.Process() - cpu0
	runtime.ReadMemStats(&ms)
	if out.n == 0 {
		b.Fatal("nothing scheduled")
	}
	// ns/op, allocs/op and B/op are per batch of 512 messages; per message:
	b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
	if cpu > 0 && cpu0 > 0 {
		b.ReportMetric(float64(msgs)/cpu.Seconds(), "msgs/cpu-s")                // GC workers included; the machine's load is not
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(links), "cpu-ns/link") // per seed in "seeds"
	}
	b.ReportMetric(float64(ms.Mallocs-m0)/float64(msgs), "allocs/msg")
	b.ReportMetric(float64(out.n)/float64(msgs), "scheduled/msg")
}

// noBus satisfies New's check; handle never uses the bus.
type noBus struct{ bus.Bus }
