package pebblestore_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/metadata/metadatatest"
	"github.com/frontiercrawl/frontier/pebblestore"
)

// TestPagesPutMergesLikeMemory puts batches of every size Put treats differently (point lookups below 16
// pages, one sorted iterator from 16), each mixing new pages, pages stored before, pages repeated within the
// batch and records the merge leaves unchanged, and checks every record against metadata.Memory, the merge
// rule's reference. It runs with the page filter Put reads through: as it is; small enough to fill within
// the test (from then on every page is read); and loaded anew from the stored keys before every batch (the
// DB reopened); and with the page cache Put merges into: as it is, small enough that its generations turn
// within a batch, and emptied before every batch (the DB reopened).
func TestPagesPutMergesLikeMemory(t *testing.T) {
	for _, tc := range []struct {
		name               string
		firstCap, maxBytes int
		cacheBytes         int
		reopen             bool
		full               bool // the filter ends full
	}{
		{name: "filter"},
		{name: "filter fills", firstCap: 64, maxBytes: 512, full: true},
		{name: "reopened", reopen: true},
		{name: "reopened full", firstCap: 16, maxBytes: 64, reopen: true, full: true},
		{name: "small cache", cacheBytes: 2000},
		{name: "tiny cache, filter fills", firstCap: 64, maxBytes: 512, cacheBytes: 300, full: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testPagesPutMergesLikeMemory(t, tc.firstCap, tc.maxBytes, tc.cacheBytes, tc.reopen, tc.full)
		})
	}
}

func testPagesPutMergesLikeMemory(t *testing.T, firstCap, maxBytes, cacheBytes int, reopen, full bool) {
	cfg := testConfig(t, false)
	db, err := pebblestore.Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	pebblestore.SetPageFilter(db.Pages(), firstCap, maxBytes)
	pebblestore.SetPageCache(db.Pages(), cacheBytes)
	got, want := db.Pages(), metadata.NewMemory()
	ctx := t.Context()
	url := func(i int) string { return fmt.Sprintf("http://h%d.example/%d", i%5, i) }
	var urls []string
	for round, size := range []int{1, 7, 15, 16, 17, 64, 300, 5, 300} {
		var batch []metadata.Page
		for j := range size {
			i := (round*37 + j*3) % 400 // later rounds revisit earlier pages
			u := url(i)
			p := metadata.Page{Fingerprint: metadatatest.FP(u), URL: u, FirstSeen: int64(1000 + round)}
			switch j % 6 {
			case 1:
				p.LastFetched, p.Status, p.ContentType = int64(2000+round), 200+round, "text/html"
			case 2:
				p.LastFetched, p.Error = int64(2000+round), fmt.Sprintf("Err%d", round)
			case 3:
				p.Depth = round + 1
			case 4:
				p.RedirectTo = metadatatest.FP(url(i + 1))
			}
			batch = append(batch, p)
			if j%4 == 0 { // the same page again in the batch: merged in order
				q := metadata.Page{Fingerprint: p.Fingerprint, FirstSeen: 1, Status: 500 + j}
				batch = append(batch, q)
			}
			urls = append(urls, u)
		}
		if reopen {
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if db, err = pebblestore.Open(cfg, nil); err != nil {
				t.Fatal(err)
			}
			got = db.Pages()
			pebblestore.SetPageFilter(got, firstCap, maxBytes)
			pebblestore.SetPageCache(got, cacheBytes)
		}
		if err := got.Put(ctx, batch); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := want.Put(ctx, batch); err != nil {
			t.Fatal(err)
		}
		for _, u := range urls {
			g, gok, err := got.Get(ctx, metadatatest.FP(u))
			if err != nil {
				t.Fatal(err)
			}
			w, wok, _ := want.Get(ctx, metadatatest.FP(u))
			if gok != wok {
				t.Fatalf("round %d (%d pages): %s found %v, want %v", round, size, u, gok, wok)
			}
			if d := cmp.Diff(w, g); d != "" {
				t.Fatalf("round %d (%d pages): %s (-want +got):\n%s", round, size, u, d)
			}
		}
	}
	if f := pebblestore.PageFilterFull(got); f != full {
		t.Fatalf("page filter full = %v, want %v", f, full)
	}
}

// TestPagesPutUnchangedWritesNothing: a batch that changes no record (links recorded before) commits no write.
func TestPagesPutUnchangedWritesNothing(t *testing.T) {
	cfg := testConfig(t, false)
	db, err := pebblestore.Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	for _, size := range []int{3, 40} {
		var batch []metadata.Page
		for i := range size {
			u := fmt.Sprintf("http://a.example/%d/%d", size, i)
			batch = append(batch, metadata.Page{Fingerprint: metadatatest.FP(u), URL: u, FirstSeen: 7})
		}
		if err := db.Pages().Put(ctx, batch); err != nil {
			t.Fatal(err)
		}
		before := db.Pebble().Metrics().WAL.BytesIn
		for i := range batch {
			batch[i].FirstSeen = 9 // seen again later: the first time is kept
		}
		if err := db.Pages().Put(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if after := db.Pebble().Metrics().WAL.BytesIn; after != before {
			t.Fatalf("%d links recorded before, put again: %d bytes written to the WAL, want 0", size, after-before)
		}
	}
}

// TestPageBoundsFromConfig: Config.PageFilterBytes and PageCacheBytes (which the standalone derives from its
// memory limit) bound the page filter and the page cache (TestPagesPutMergesLikeMemory covers Put with small
// bounds).
func TestPageBoundsFromConfig(t *testing.T) {
	cfg := testConfig(t, false)
	cfg.PageFilterBytes, cfg.PageCacheBytes = 5<<20, 3<<20
	db, err := pebblestore.Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if f, c := pebblestore.PageBounds(db.Pages()); f != 5<<20 || c != 3<<20 {
		t.Errorf("page filter bound %d, page cache bound %d; want %d, %d", f, c, 5<<20, 3<<20)
	}
}
