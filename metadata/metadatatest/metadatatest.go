// Package metadatatest is the conformance suite every metadata.Store and metadata.Domains passes (memory,
// Pebble, HBase).
//
//	func TestConformance(t *testing.T) {
//		metadatatest.Run(t, newEmptyStore, reopenStore)      // reopen may be nil
//		metadatatest.RunDomains(t, newEmptyDomains, reopenDomains)
//	}
//
// The constructors must return empty stores each call; close them with t.Cleanup. A reopen func closes the
// store and returns a new handle on the same data; nil skips the restart test.
//
// It imports metadata, frontier, go-cmp and the standard library (testing).
package metadatatest

import (
	"context"
	"crypto/sha1"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
)

// FP returns a deterministic 20-byte fingerprint of s.
func FP(s string) frontier.Fingerprint {
	h := sha1.Sum([]byte(s))
	return h[:]
}

// Run runs the page-store suite.
func Run(t *testing.T, newStore func(t *testing.T) metadata.Store, reopen func(t *testing.T, s metadata.Store) metadata.Store) {
	t.Run("Missing", func(t *testing.T) {
		s := newStore(t)
		p, ok, err := s.Get(t.Context(), FP("nothing"))
		if err != nil || ok || !cmp.Equal(p, metadata.Page{}) {
			t.Fatalf("Get of an unknown page = %+v, %v, %v", p, ok, err)
		}
		if err := s.Put(t.Context(), nil); err != nil {
			t.Fatalf("Put of nothing: %v", err)
		}
	})
	t.Run("RoundTripAndMerge", func(t *testing.T) { testMerge(t, newStore(t)) })
	t.Run("Batch", func(t *testing.T) { testBatch(t, newStore(t)) })
	t.Run("NoFingerprint", func(t *testing.T) {
		s := newStore(t)
		if err := s.Put(t.Context(), []metadata.Page{{URL: "http://a/"}}); err == nil {
			t.Fatal("Put of a page without a fingerprint: no error")
		}
	})
	t.Run("Reopen", func(t *testing.T) {
		if reopen == nil {
			t.Skip("metadatatest: no reopen func given")
		}
		s := newStore(t)
		want := full("http://a.example/")
		put(t, s, want)
		s = reopen(t, s)
		get(t, s, want)
	})
}

func full(url string) metadata.Page {
	return metadata.Page{Fingerprint: FP(url), URL: url, FirstSeen: 1_700_000_000, LastFetched: 1_700_000_100,
		Status: 301, Depth: 3, ContentType: "text/html; charset=utf-8", Error: "", RedirectTo: FP(url + "x")}
}

func put(t *testing.T, s metadata.Store, pages ...metadata.Page) {
	t.Helper()
	if err := s.Put(t.Context(), pages); err != nil {
		t.Fatalf("Put: %v", err)
	}
}

func get(t *testing.T, s metadata.Store, want metadata.Page) {
	t.Helper()
	got, ok, err := s.Get(t.Context(), want.Fingerprint)
	if err != nil || !ok {
		t.Fatalf("Get(%s) = %v, %v", want.URL, ok, err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("Get(%s) (-want +got):\n%s", want.URL, d)
	}
}

func testMerge(t *testing.T, s metadata.Store) {
	p := full("http://a.example/")
	put(t, s, p)
	get(t, s, p)

	// A link seen again: only the URL and a later first-seen time; neither overwrites.
	put(t, s, metadata.Page{Fingerprint: p.Fingerprint, URL: p.URL, FirstSeen: 1_800_000_000})
	get(t, s, p)

	// A later fetch error: the error and the fetch time change, the rest stays.
	put(t, s, metadata.Page{Fingerprint: p.Fingerprint, LastFetched: 1_700_000_500, Error: "DNSLookupError"})
	p.LastFetched, p.Error = 1_700_000_500, "DNSLookupError"
	get(t, s, p)

	// A page first known without a first-seen time gets one later.
	q := metadata.Page{Fingerprint: FP("http://b.example/"), URL: "http://b.example/", Status: 200}
	put(t, s, q)
	get(t, s, q)
	put(t, s, metadata.Page{Fingerprint: q.Fingerprint, FirstSeen: 5})
	q.FirstSeen = 5
	get(t, s, q)

	// Non-ASCII text survives.
	r := metadata.Page{Fingerprint: FP("u"), URL: "http://例え.jp/ページ?q=ü", ContentType: "text/html; charset=Shift_JIS"}
	put(t, s, r)
	get(t, s, r)
}

func testBatch(t *testing.T, s metadata.Store) {
	var pages []metadata.Page
	for i := range 500 {
		pages = append(pages, full(fmt.Sprintf("http://h%d.example/%d", i%7, i)))
	}
	put(t, s, pages...)
	for _, p := range pages {
		get(t, s, p)
	}
}

// RunDomains runs the per-domain counter suite.
func RunDomains(t *testing.T, newDomains func(t *testing.T) metadata.Domains, reopen func(t *testing.T, d metadata.Domains) metadata.Domains) {
	t.Run("AddGet", func(t *testing.T) {
		d := newDomains(t)
		ctx := t.Context()
		got, err := d.Get(ctx, "queued", []string{"a.com", "b.com"})
		if err != nil || !cmp.Equal(got, []int64{0, 0}) {
			t.Fatalf("Get of new counters = %v, %v", got, err)
		}
		got, err = d.Add(ctx, "queued", []string{"a.com", "b.com", "a.com"}, []int64{1, 5, 2})
		if err != nil || !cmp.Equal(got, []int64{1, 5, 3}) {
			t.Fatalf("Add = %v, %v, want [1 5 3] (a repeated domain sees the earlier delta)", got, err)
		}
		got, err = d.Add(ctx, "queued", []string{"b.com"}, []int64{-7})
		if err != nil || !cmp.Equal(got, []int64{-2}) {
			t.Fatalf("Add negative = %v, %v", got, err)
		}
		got, err = d.Get(ctx, "crawled", []string{"a.com"})
		if err != nil || !cmp.Equal(got, []int64{0}) {
			t.Fatalf("counters are per name: %v, %v", got, err)
		}
		got, err = d.Get(ctx, "queued", []string{"b.com", "a.com", "c.com", "例え.jp"})
		if err != nil || !cmp.Equal(got, []int64{-2, 3, 0, 0}) {
			t.Fatalf("Get = %v, %v", got, err)
		}
	})
	t.Run("BadArguments", func(t *testing.T) {
		d := newDomains(t)
		if _, err := d.Add(t.Context(), "queued", []string{"a.com"}, nil); err == nil {
			t.Error("Add with fewer deltas than domains: no error")
		}
		if _, err := d.Add(t.Context(), "", []string{"a.com"}, []int64{1}); err == nil {
			t.Error("Add to an unnamed counter: no error")
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		d := newDomains(t)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				for range 50 {
					if _, err := d.Add(context.Background(), "n", []string{"x.com", "y.com"}, []int64{1, 2}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		got, err := d.Get(t.Context(), "n", []string{"x.com", "y.com"})
		if err != nil || !cmp.Equal(got, []int64{400, 800}) {
			t.Fatalf("after concurrent adds: %v, %v, want [400 800] (no lost update)", got, err)
		}
	})
	t.Run("Reopen", func(t *testing.T) {
		if reopen == nil {
			t.Skip("metadatatest: no reopen func given")
		}
		d := newDomains(t)
		if _, err := d.Add(t.Context(), "n", []string{"x.com"}, []int64{3}); err != nil {
			t.Fatal(err)
		}
		d = reopen(t, d)
		got, err := d.Get(t.Context(), "n", []string{"x.com"})
		if err != nil || !cmp.Equal(got, []int64{3}) {
			t.Fatalf("after reopen: %v, %v", got, err)
		}
	})
	t.Run("AddOnce", func(t *testing.T) {
		e, ok := newDomains(t).(metadata.ExactDomains)
		if !ok {
			t.Skip("metadatatest: not an ExactDomains")
		}
		ctx := t.Context()
		tl := func(dom, src string, seq, delta int64) metadata.Tally {
			return metadata.Tally{Domain: dom, Delta: delta, Source: src, Seq: seq}
		}
		check := func(what string, tallies []metadata.Tally, want []int64) {
			t.Helper()
			got, err := e.AddOnce(ctx, "n", tallies)
			if err != nil || !cmp.Equal(got, want) {
				t.Fatalf("%s: AddOnce = %v, %v, want %v", what, got, err, want)
			}
		}
		batch := []metadata.Tally{tl("a.com", "p0", 10, 1), tl("b.com", "p0", 11, 5), tl("a.com", "p1", 3, 2)}
		check("first batch", batch, []int64{3, 5, 3})
		check("the same batch again (a retry or a replay)", batch, []int64{3, 5, 3})
		// A replay cut differently: offsets 10 and 11 of p0 were applied, 12 was not.
		check("replay cut differently", []metadata.Tally{tl("a.com", "p0", 10, 1), tl("b.com", "p0", 11, 5), tl("a.com", "p0", 12, 4)}, []int64{7, 5, 7})
		check("another source", []metadata.Tally{tl("b.com", "p9", 1, -2)}, []int64{3})
		got, err := e.Get(ctx, "n", []string{"a.com", "b.com"})
		if err != nil || !cmp.Equal(got, []int64{7, 3}) {
			t.Fatalf("Get after AddOnce = %v, %v, want [7 3]", got, err)
		}
		if _, err := e.Add(ctx, "n", []string{"a.com"}, []int64{1}); err != nil {
			t.Fatal(err)
		}
		check("Add and AddOnce share the counter", []metadata.Tally{tl("a.com", "p0", 12, 100)}, []int64{8})
		if _, err := e.AddOnce(ctx, "n", []metadata.Tally{{Domain: "a.com", Delta: 1}}); err == nil {
			t.Error("AddOnce of a tally without a source: no error")
		}
		got, err = e.Get(ctx, "other", []string{"a.com"})
		if err != nil || !cmp.Equal(got, []int64{0}) {
			t.Fatalf("markers are per counter name: %v, %v", got, err)
		}
	})
	t.Run("AddOnceConcurrent", func(t *testing.T) {
		e, ok := newDomains(t).(metadata.ExactDomains)
		if !ok {
			t.Skip("metadatatest: not an ExactDomains")
		}
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := range 4 {
			wg.Go(func() {
				src := fmt.Sprintf("p%d", w)
				for i := range 30 {
					tallies := []metadata.Tally{{Domain: "x.com", Delta: 1, Source: src, Seq: int64(i)}, {Domain: "y.com", Delta: 2, Source: src, Seq: int64(i)}}
					for range 2 { // every write twice, as a retry would
						if _, err := e.AddOnce(context.Background(), "n", tallies); err != nil {
							errs <- err
							return
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		got, err := e.Get(t.Context(), "n", []string{"x.com", "y.com"})
		if err != nil || !cmp.Equal(got, []int64{120, 240}) {
			t.Fatalf("after concurrent AddOnce: %v, %v, want [120 240] (no lost update, no double count)", got, err)
		}
	})
}
