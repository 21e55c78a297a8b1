package pebblestore

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
)

// oldMerged is the record the read-modify-write Put wrote before appendMergedPage: decode the stored record
// (if any), metadata.Merge the page into it, encode.
func oldMerged(fp []byte, stored []byte, found bool, p metadata.Page) ([]byte, error) {
	var old metadata.Page
	if found {
		var err error
		if old, err = decodePage(fp, stored); err != nil {
			return nil, err
		}
	}
	return appendPage(nil, metadata.Merge(old, p)), nil
}

func newMerged(stored []byte, found bool, p metadata.Page) ([]byte, error) {
	var rec pageRec
	if found {
		var err error
		if rec, err = parsePageRecord(stored); err != nil {
			return nil, err
		}
	}
	return appendMergedPage(nil, &rec, &p), nil
}

func mergeCases() (stored []metadata.Page, pages []metadata.Page) {
	fp := frontier.Fingerprint(bytes.Repeat([]byte{7}, 20))
	rd := frontier.Fingerprint(bytes.Repeat([]byte{9}, 20))
	rd2 := frontier.Fingerprint(bytes.Repeat([]byte{3}, 20))
	stored = []metadata.Page{
		{Fingerprint: fp},
		{Fingerprint: fp, URL: "http://a.example/", FirstSeen: 100},
		{Fingerprint: fp, URL: "http://a.example/", FirstSeen: 100, LastFetched: 200, Status: 200, Depth: 3,
			ContentType: "text/html", Error: "DNSLookupError", RedirectTo: rd},
		{Fingerprint: fp, FirstSeen: -5, LastFetched: -1, Status: -3, Depth: -2},
		{Fingerprint: fp, URL: "http://a.example/", Depth: 1 << 40, Status: 1 << 62, RedirectTo: frontier.Fingerprint{}},
	}
	pages = []metadata.Page{
		{Fingerprint: fp},
		{Fingerprint: fp, FirstSeen: 50},
		{Fingerprint: fp, URL: "http://b.example/x", FirstSeen: 300},
		{Fingerprint: fp, LastFetched: 400, Status: 404, ContentType: "text/plain"},
		{Fingerprint: fp, LastFetched: 400, Error: "TimeoutError"},
		{Fingerprint: fp, Depth: 2},
		{Fingerprint: fp, RedirectTo: rd2},
		{Fingerprint: fp, URL: "u", FirstSeen: 1, LastFetched: 2, Status: 3, Depth: 4, ContentType: "c", Error: "e", RedirectTo: rd},
		{Fingerprint: fp, FirstSeen: -1, Status: -1, Depth: -7},
	}
	return stored, pages
}

// TestMergeRecordsLikeMerge: the records Put writes now (appendMergedPage on the stored record's bytes) are
// byte for byte those of the read-modify-write through metadata.Merge, for every pair of stored record (or
// none) and page, and for pages applied one after another.
func TestMergeRecordsLikeMerge(t *testing.T) {
	stored, pages := mergeCases()
	fp := stored[0].Fingerprint
	for si := -1; si < len(stored); si++ {
		var rec []byte
		found := si >= 0
		if found {
			rec = appendPage(nil, stored[si])
		}
		for pi, p := range pages {
			t.Run(fmt.Sprintf("stored%d/page%d", si, pi), func(t *testing.T) {
				want, err := oldMerged(fp, rec, found, p)
				if err != nil {
					t.Fatal(err)
				}
				got, err := newMerged(rec, found, p)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("got %x, want %x", got, want)
				}
				// Then every page again on top: a batch with the same fingerprint twice.
				for qi, q := range pages {
					w2, _ := oldMerged(fp, want, true, q)
					g2, err := newMerged(got, true, q)
					if err != nil || !bytes.Equal(g2, w2) {
						t.Fatalf("then page %d: got %x (%v), want %x", qi, g2, err, w2)
					}
				}
			})
		}
	}
}

// TestMergeOperatorAssociative: the merge operator's record merge gives the read-modify-write's record for any
// grouping of the operands (Pebble merges operands in flushes and compactions without the base).
func TestMergeOperatorAssociative(t *testing.T) {
	stored, pages := mergeCases()
	fp := stored[0].Fingerprint
	var zero pageRec
	operand := func(p metadata.Page) []byte { return appendMergedPage(nil, &zero, &p) }
	merge := func(older, newer []byte) []byte {
		o, err := parsePageRecord(older)
		if err != nil {
			t.Fatal(err)
		}
		n, err := parsePageRecord(newer)
		if err != nil {
			t.Fatal(err)
		}
		return appendMergedRecords(nil, &o, &n)
	}
	for si, s := range stored {
		base := appendPage(nil, s)
		for ai, a := range pages {
			for bi, b := range pages {
				want, _ := oldMerged(fp, base, true, a)
				want, _ = oldMerged(fp, want, true, b)
				left := merge(merge(base, operand(a)), operand(b))
				right := merge(base, merge(operand(a), operand(b)))
				if !bytes.Equal(left, want) || !bytes.Equal(right, want) {
					t.Fatalf("stored %d, pages %d, %d: (base·a)·b %x, base·(a·b) %x, want %x", si, ai, bi, left, right, want)
				}
			}
		}
	}
}

// FuzzMergedPage: on any stored bytes, parsePageRecord fails where decodePage fails, and otherwise
// appendMergedPage writes the read-modify-write's record; the merge operator's record merge never panics and
// agrees with it.
func FuzzMergedPage(f *testing.F) {
	stored, pages := mergeCases()
	for _, s := range stored {
		f.Add(appendPage(nil, s), "http://x/", int64(1), int64(2), int64(3), int64(4), "", "E", []byte{1})
	}
	f.Add([]byte{pageVersion, 0xff}, "", int64(0), int64(0), int64(0), int64(0), "", "", []byte(nil))
	_ = pages
	f.Fuzz(func(t *testing.T, rec []byte, url string, first, fetched, status, depth int64, ct, errText string, rd []byte) {
		fp := frontier.Fingerprint{1, 2, 3}
		p := metadata.Page{Fingerprint: fp, URL: url, FirstSeen: first, LastFetched: fetched, Status: int(status),
			Depth: int(depth), ContentType: ct, Error: errText, RedirectTo: rd}
		want, werr := oldMerged(fp, rec, true, p)
		got, gerr := newMerged(rec, true, p)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("decodePage error %v, parsePageRecord error %v", werr, gerr)
		}
		if werr != nil {
			return
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("got %x, want %x", got, want)
		}
		var zero pageRec
		o, _ := parsePageRecord(rec)
		n, err := parsePageRecord(appendMergedPage(nil, &zero, &p))
		if err != nil {
			t.Fatal(err)
		}
		if m := appendMergedRecords(nil, &o, &n); !bytes.Equal(m, want) {
			t.Fatalf("merge operator: got %x, want %x", m, want)
		}
	})
}
