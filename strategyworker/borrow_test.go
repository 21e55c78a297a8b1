package strategyworker

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/scope"
	"github.com/frontiercrawl/frontier/state"
)

// TestBorrowedDecodeKeepsNothing checks that nothing the worker keeps past a batch refers to the batch's
// message bytes, which its decoder borrows (newDecoder: codec.Skim{Borrow: true}): a worker that decodes
// through newDecoder and has each batch's bytes overwritten once handle returns schedules, stores and counts
// what a worker decoding private copies does, batch after batch. The batches name the same hosts and URLs
// again (state cache keys, the decoder's shared domain maps, domainHosts, counters, the scope's seeds and
// budgets) and hold retries (page_crawled 503, request_error), a redirect target and a redirect chain.
func TestBorrowedDecodeKeepsNothing(t *testing.T) {
	now := time.Unix(1_795_000_000, 0)
	build := func() (*Worker, *state.Memory) {
		cfg := DefaultConfig()
		cfg.Scope = scope.DefaultConfig()
		cfg.Scope.HostBudget, cfg.Scope.MaxQueryVariants = 12, 3
		states := state.NewMemory()
		w, err := New(cfg, Deps{Bus: noBus{}, Codec: codec.Msgpack{}, States: states, Domains: metadata.NewMemoryDomains(),
			Now: func() time.Time { return now }, Fingerprint: func(u string) (frontier.Fingerprint, error) { return sha(u), nil }})
		if err != nil {
			t.Fatal(err)
		}
		return w, states
	}
	borrowed, bStates := build()
	private, pStates := build()
	decode := borrowed.newDecoder()

	hosts := []string{"a.example.com", "b.example.com", "c.example.org"}
	request := func(u, host string, depth int64) *frontier.Request {
		r := req(u, depth)
		r.SetMetaDomain(benchDomain(host))
		return r
	}
	var urls []string
	batch := func(k int) []frontier.Message {
		var ms []frontier.Message
		if k == 0 {
			seeds := &frontier.AddSeeds{}
			for _, h := range hosts {
				seeds.Seeds = append(seeds.Seeds, request("http://"+h+"/", h, 0))
			}
			ms = append(ms, seeds)
		}
		for i, h := range hosts {
			page := request(fmt.Sprintf("http://%s/p/%d", h, k), h, int64(k))
			le := &frontier.LinksExtracted{Request: page}
			for j := range 6 {
				u := fmt.Sprintf("http://%s/p/%d?q=%d", h, (k+j)%5, j%4) // seen again in later batches
				le.Links = append(le.Links, request(u, h, -1))
				urls = append(urls, u)
			}
			other := hosts[(i+1)%len(hosts)]
			le.Links = append(le.Links, request(fmt.Sprintf("http://%s/from/%s/%d", other, h, k), other, -1))
			target := request(fmt.Sprintf("http://%s/moved/%d", h, k), h, -1)
			target.Meta.Set(metaRedirectTimes, int64(1))
			target.Meta.Set(metaRedirectURLs, []frontier.Value{page.URL})
			le.Links = append(le.Links, target)
			urls = append(urls, page.URL, target.URL)
			ms = append(ms, le,
				&frontier.PageCrawled{Response: &frontier.Response{URL: page.URL, Status: 200, Request: page,
					Headers: frontier.Headers{{Name: []byte("Content-Type"), Values: [][]byte{[]byte("text/html")}}}}},
				&frontier.PageCrawled{Response: &frontier.Response{URL: page.URL + "/busy", Status: 503,
					Request: request(page.URL+"/busy", h, 1), Headers: frontier.Headers{{Name: []byte("Retry-After"), Values: [][]byte{[]byte("3")}}}}},
				&frontier.RequestError{Request: request(page.URL+"/slow", h, 1), Error: "TimeoutError"})
			chained := request(fmt.Sprintf("http://%s/final/%d", h, k), h, 2)
			hop := fmt.Sprintf("http://%s/hop/%d", h, k)
			chained.Meta.Set(metaRedirectURLs, []frontier.Value{hop, chained.URL})
			chained.Meta.Set(metaRedirectFingerprints, []frontier.Value{[]byte(sha(hop).Hex()), []byte(sha(chained.URL).Hex())})
			ms = append(ms, &frontier.PageCrawled{Response: &frontier.Response{URL: chained.URL, Status: 200, Request: chained}})
			urls = append(urls, page.URL+"/busy", page.URL+"/slow", chained.URL, hop)
		}
		return ms
	}
	scheduled := 0
	for k := range 4 {
		var bEvents, pEvents []frontier.Message
		var raws [][]byte
		for _, m := range batch(k) {
			v, err := codec.Msgpack{}.EncodeMessage(m)
			if err != nil {
				t.Fatal(err)
			}
			raws = append(raws, v)
			bm, err := decode(v)
			if err != nil {
				t.Fatal(err)
			}
			pm, err := codec.Msgpack{}.DecodeMessage(bytes.Clone(v))
			if err != nil {
				t.Fatal(err)
			}
			bEvents, pEvents = append(bEvents, bm), append(pEvents, pm)
		}
		bOut, pOut := &recorder{}, &recorder{}
		if err := borrowed.handle(t.Context(), bEvents, bOut); err != nil {
			t.Fatal(err)
		}
		for _, v := range raws { // the batch's bytes go (a bus reuses them): anything kept now reads garbage
			for i := range v {
				v[i] = 0xc1 // never used in msgpack
			}
		}
		if err := private.handle(t.Context(), pEvents, pOut); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(pOut.msgs, bOut.msgs); d != "" {
			t.Fatalf("batch %d: scores differ when decoding borrows (-private +borrowed):\n%s", k, d)
		}
		scheduled += len(bOut.msgs)
		if d := cmp.Diff(private.counters.values, borrowed.counters.values); d != "" {
			t.Fatalf("batch %d: counters differ (-private +borrowed):\n%s", k, d)
		}
	}
	if scheduled == 0 {
		t.Fatal("nothing scheduled")
	}
	if bStates.Len() != pStates.Len() || bStates.Len() == 0 {
		t.Fatalf("%d states stored when decoding borrows, %d with private copies", bStates.Len(), pStates.Len())
	}
	for _, u := range urls {
		fps := []frontier.Fingerprint{sha(u)}
		be, pe := make([]state.Entry, 1), make([]state.Entry, 1)
		bf, pf := make([]bool, 1), make([]bool, 1)
		if err := bStates.Get(t.Context(), fps, be, bf); err != nil {
			t.Fatal(err)
		}
		if err := pStates.Get(t.Context(), fps, pe, pf); err != nil {
			t.Fatal(err)
		}
		if be[0] != pe[0] || bf[0] != pf[0] {
			t.Errorf("%s: state %v (stored %v) when decoding borrows, %v (%v) with private copies", u, be[0], bf[0], pe[0], pf[0])
		}
	}
}
