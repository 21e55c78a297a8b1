package pebblestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/state"
)

// The merge-operator design of Pages.Put, kept for BenchmarkPagesPut and the tests (see the package doc, "Page
// records"): the DB is opened with pageMerger and Put writes each page as a merge operand instead of reading
// the stored record.

// pageMerger is the Pebble merge operator of the page records (appendMergedRecords), for putMerge.
var pageMerger = &pebble.Merger{Name: "frontier.pages.v1", Merge: newPageValueMerger}

type pageValueMerger struct{ acc, tmp []byte }

func newPageValueMerger(key, value []byte) (pebble.ValueMerger, error) {
	if len(key) == 0 || key[0] != pfxPage {
		return nil, fmt.Errorf("pebblestore: merge on key %x outside the page records", key)
	}
	if _, err := parsePageRecord(value); err != nil {
		return nil, err
	}
	return &pageValueMerger{acc: append(make([]byte, 0, len(value)+16), value...)}, nil
}

func (m *pageValueMerger) merge(older, newer []byte) error {
	o, err := parsePageRecord(older)
	if err != nil {
		return err
	}
	n, err := parsePageRecord(newer)
	if err != nil {
		return err
	}
	m.tmp = appendMergedRecords(m.tmp[:0], &o, &n)
	m.acc, m.tmp = m.tmp, m.acc
	return nil
}

func (m *pageValueMerger) MergeNewer(v []byte) error { return m.merge(m.acc, v) }
func (m *pageValueMerger) MergeOlder(v []byte) error { return m.merge(v, m.acc) }
func (m *pageValueMerger) Finish(bool) ([]byte, io.Closer, error) {
	return m.acc, nil, nil
}

// putMerge is Put with Pebble merge operands instead of reading the records (the DB opened with pageMerger).
func (p *Pages) putMerge(ctx context.Context, pages []metadata.Page) error {
	if err := metadata.CheckPages(pages); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(pages) == 0 {
		return nil
	}
	b := p.d.db.NewBatch()
	defer b.Close()
	key := make([]byte, 0, 33)
	var val []byte
	var zero pageRec
	for i := range pages {
		key = append(append(key[:0], pfxPage), pages[i].Fingerprint...)
		val = appendMergedPage(val[:0], &zero, &pages[i])
		if err := b.Merge(key, val, nil); err != nil {
			return fmt.Errorf("pebblestore: page put: %w", err)
		}
	}
	if err := b.Commit(p.d.wo); err != nil {
		return fmt.Errorf("pebblestore: page put: %w", err)
	}
	return nil
}

// TestPutMergeLikeMemory: with the merge operator, what Get returns (operands merged in the memtable, in
// flushed tables and by compactions) is the record metadata.Memory holds, as with Put.
func TestPutMergeLikeMemory(t *testing.T) {
	SetPageMerger(true)
	defer SetPageMerger(false)
	cfg := DefaultConfig()
	cfg.Dir, cfg.FS, cfg.Sync, cfg.CacheBytes = "db", vfs.NewMem(), false, 8<<20
	cfg.Bloom = state.BloomConfig{}
	db, err := Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, want := db.Pages(), metadata.NewMemory()
	ctx := context.Background()
	fp := func(i int) frontier.Fingerprint { return frontier.Fingerprint(fmt.Sprintf("fp%04d", i)) }
	for round := range 12 {
		var batch []metadata.Page
		for j := range 200 {
			i := (round*37 + j*3) % 400
			p := metadata.Page{Fingerprint: fp(i), URL: fmt.Sprintf("http://h/%d", i), FirstSeen: int64(1000 + round)}
			switch j % 5 {
			case 1:
				p.URL, p.LastFetched, p.Status, p.ContentType = "", int64(2000+round), 200+round, "text/html"
			case 2:
				p.LastFetched, p.Error = int64(2000+round), fmt.Sprintf("Err%d", round)
			case 3:
				p.Depth = round + 1
			case 4:
				p.RedirectTo = fp(i + 1)
			}
			batch = append(batch, p)
		}
		if round == 4 { // a stored record (Set) under later operands
			if err := got.Put(ctx, batch); err != nil {
				t.Fatal(err)
			}
		} else if err := got.putMerge(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if err := want.Put(ctx, batch); err != nil {
			t.Fatal(err)
		}
		switch round % 4 {
		case 1:
			if err := db.Pebble().Flush(); err != nil {
				t.Fatal(err)
			}
		case 3:
			if err := db.Pebble().Compact(ctx, []byte{0}, []byte{0xff}, true); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 400 {
			g, gok, err := got.Get(ctx, fp(i))
			if err != nil {
				t.Fatal(err)
			}
			w, wok, _ := want.Get(ctx, fp(i))
			if gok != wok || !bytes.Equal(encodePage(g), encodePage(w)) {
				t.Fatalf("round %d, page %d: got %v %+v, want %v %+v", round, i, gok, g, wok, w)
			}
		}
	}
}

// TestMergerNameMismatchFailsOpen: Pebble records the merger's name in the OPTIONS file and refuses to open a
// database with another merger, both ways (what the package doc says of the merge design).
func TestMergerNameMismatchFailsOpen(t *testing.T) {
	defer SetPageMerger(false)
	fs := vfs.NewMem()
	for _, step := range []struct {
		merger, fails bool
	}{{false, false}, {true, true}, {false, false}} {
		SetPageMerger(step.merger)
		cfg := DefaultConfig()
		cfg.Dir, cfg.FS, cfg.Sync, cfg.CacheBytes, cfg.Bloom = "db", fs, false, 8<<20, state.BloomConfig{}
		db, err := Open(cfg, nil)
		if step.fails {
			if err == nil || !strings.Contains(err.Error(), "merger name from file") {
				t.Fatalf("open with merger %v: %v, want the merger name mismatch", step.merger, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	// A database created with the merger refuses a build without it.
	fs2 := vfs.NewMem()
	for _, merger := range []bool{true, false} {
		SetPageMerger(merger)
		cfg := DefaultConfig()
		cfg.Dir, cfg.FS, cfg.Sync, cfg.CacheBytes, cfg.Bloom = "db", fs2, false, 8<<20, state.BloomConfig{}
		db, err := Open(cfg, nil)
		if merger {
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
		} else if err == nil || !strings.Contains(err.Error(), "merger name from file") {
			t.Fatalf("open without the merger: %v, want the merger name mismatch", err)
		}
	}
}

// appendMergedRecords is the merge operator's rule (tests only): it appends to v the record of the merge of
// newer (a record written later) into older, the same rule as metadata.Merge (a non-zero field of newer
// overwrites, first seen is kept once set), so merging the records of pages a, b, c in any grouping gives
// appendPage(Merge(Merge(Merge(zero, a), b), c)).
func appendMergedRecords(v []byte, older, newer *pageRec) []byte {
	v = append(v, pageVersion)
	v = appendBytes(v, pickBytes(newer.url, older.url))
	first := older.firstSeen
	if first == 0 {
		first = newer.firstSeen
	}
	v = binary.AppendVarint(v, first)
	v = binary.AppendVarint(v, pick(newer.lastFetched, older.lastFetched))
	v = binary.AppendVarint(v, pick(newer.status, older.status))
	v = binary.AppendVarint(v, pick(newer.depth, older.depth))
	v = appendBytes(v, pickBytes(newer.contentType, older.contentType))
	v = appendBytes(v, pickBytes(newer.errText, older.errText))
	return appendBytes(v, pickBytes(newer.redirect, older.redirect))
}

func pickBytes(newer, older []byte) []byte {
	if len(newer) != 0 {
		return newer
	}
	return older
}
