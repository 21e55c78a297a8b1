package urlfrontier

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus/membus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/internal/cputime"
)

// BenchmarkGatewayPut measures the gateway's own cost of a discovered put, without the crawl's loop: PutAsync
// of calls of 1,024 new URLs over 1,000 hosts (as Server.PutURLs hands them over), the store in memory, the
// spider log a membus stream that nothing reads. It reports the process's CPU and the allocations per URL.
//
//	go test -run '^$' -bench GatewayPut -benchtime 100x ./urlfrontier/
func BenchmarkGatewayPut(b *testing.B) {
	mcfg := membus.DefaultConfig()
	mb, err := membus.New(mcfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer mb.Close()
	cfg := DefaultGatewayConfig()
	cfg.Store.Dir, cfg.Store.FS, cfg.Store.Sync = "gw", vfs.NewMem(), false
	cfg.Partitions = []int{0}
	g, err := OpenGateway(context.Background(), cfg, GatewayDeps{Bus: mb, Codec: codec.Msgpack{}})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	ctx := context.Background()
	const batch = 1024
	puts := make([]Put, batch)
	var cpu time.Duration
	var urls int
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for j := range puts {
			n := i*batch + j
			puts[j] = Put{Info: URLInfo{URL: fmt.Sprintf("https://host%d.example.com/path/page-%d.html", n%1000, n)}}
		}
		c0 := cputime.Process()
		st, err := g.PutAsync(ctx, puts)()
		cpu += cputime.Process() - c0
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range st {
			if s != OK {
				b.Fatalf("status %v, want OK", s)
			}
		}
		urls += batch
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(urls), "ns/URL")
	b.ReportMetric(cpu.Seconds()/(float64(urls)/1000)*1000, "cpu-ms/1000URLs")
}

// TestGatewayRequestBytes: the requests and messages the gateway builds with shared meta keys and its arena
// encode to the bytes frontier.Map.Set, Request.SetMetaFingerprint and Codec.EncodeMessage give.
func TestGatewayRequestBytes(t *testing.T) {
	w := newGWTest(t)
	g := w.g
	for _, tc := range []struct {
		crawl, key, u string
		meta          map[string][]string
	}{
		{DefaultCrawl, "", "https://a.example.com/x", nil},
		{"c1", "mine", "https://b.example.com/y?q=1", map[string][]string{"depth": {"2"}, "src": {"a", "b"}}},
	} {
		info := URLInfo{URL: tc.u, Key: tc.key, CrawlID: tc.crawl, Metadata: tc.meta}
		crawl, key, pu, ok := g.resolveURL(info)
		if !ok {
			t.Fatalf("%s: not resolved", tc.u)
		}
		dm := g.domain(pu)
		var a arena
		got, err := g.request(crawl, key, info, pu, dm, &a)
		if err != nil {
			t.Fatal(err)
		}
		got.Meta = append(got.Meta, frontier.Entry{Key: metaKeys.discovered, Value: frontier.Value(int64(1234567890123))})
		fp, err := g.fingerprint(crawl, tc.u)
		if err != nil {
			t.Fatal(err)
		}
		want := &frontier.Request{URL: tc.u, Method: "GET", Meta: make(frontier.Map, 0, 6)}
		want.SetMetaFingerprint(fp)
		want.Meta.Set(frontier.MetaKeyDomain, dm.Value)
		if crawl != DefaultCrawl {
			want.Meta.Set(MetaKeyCrawl, crawl)
		}
		if key != pu.Hostname() {
			want.Meta.Set(MetaKeyQueue, key)
		}
		if v, ok := got.Meta.Get(MetaKeyMetadata); ok {
			want.Meta.Set(MetaKeyMetadata, v)
		} else if len(tc.meta) > 0 {
			t.Errorf("%s: no metadata", tc.u)
		}
		want.Meta.Set(string(metaKeys.discovered), int64(1234567890123))
		for _, m := range []func(r *frontier.Request) frontier.Message{
			func(r *frontier.Request) frontier.Message { return &frontier.AddSeeds{Seeds: []*frontier.Request{r}} },
			func(r *frontier.Request) frontier.Message {
				return &frontier.PageCrawled{Response: &frontier.Response{URL: r.URL, Status: 200, Request: r}}
			},
		} {
			wb, err := codec.Msgpack{}.EncodeMessage(m(want))
			if err != nil {
				t.Fatal(err)
			}
			gm, err := g.encodeIn(&a, dm.Key, got, m(got))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gm.Value, wb) {
				t.Errorf("%s: %s encodes to\n%x\nwant\n%x", tc.u, m(got).Name(), gm.Value, wb)
			}
			if !bytes.Equal(gm.Key, dm.Key) {
				t.Errorf("%s: key %q, want %q", tc.u, gm.Key, dm.Key)
			}
		}
	}
}
