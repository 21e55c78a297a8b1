package pebblestore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/google/go-cmp/cmp"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/state"
)

func TestBucketOrder(t *testing.T) {
	for _, tc := range []struct {
		score float64
		want  uint16
	}{{1, 0}, {0.9995, 0}, {0.999, 0}, {0.998, 1}, {0.5, 499}, {0.0005, 999}, {0, 999}} {
		if got := bucket(tc.score, 1000); got != tc.want {
			t.Errorf("bucket(%v) = %d, want %d", tc.score, got, tc.want)
		}
	}
	// Higher scores sort first.
	a := readyKey(3, bucket(0.9, 1000), "z.example", []byte{0xff})
	b := readyKey(3, bucket(0.1, 1000), "a.example", []byte{0})
	if bytes.Compare(a, b) >= 0 {
		t.Fatal("a higher score does not sort first")
	}
}

func TestKeyRoundTrip(t *testing.T) {
	fp := []byte{0, 1, 0, 2}
	k := readyKey(70000, 12, "www.example.com", fp)
	p, b, host, gotFP, sep, err := decodeReadyKey(k)
	if err != nil || p != 70000 || b != 12 || string(host) != "www.example.com" || !bytes.Equal(gotFP, fp) || k[sep] != 0 {
		t.Fatalf("decodeReadyKey = %d %d %q %x %d %v", p, b, host, gotFP, sep, err)
	}
	if s := hostSkip(k, sep); bytes.Compare(s, k) <= 0 || bytes.Compare(s, readyKey(70000, 12, "www.example.com\x01", nil)) > 0 {
		t.Fatalf("hostSkip %x does not fall between the host's rows and the next host's", s)
	}
	d := delayedKey(5, 1_700_000_000, fp)
	p, nb, gotFP, err := decodeDelayedKey(d)
	if err != nil || p != 5 || nb != 1_700_000_000 || !bytes.Equal(gotFP, fp) {
		t.Fatalf("decodeDelayedKey = %d %d %x %v", p, nb, gotFP, err)
	}
	v := encodeQueueValue(0.25, 42, "h", []byte("req"))
	qv, err := decodeQueueValue(v)
	if err != nil || qv.score != 0.25 || qv.notBefore != 42 || string(qv.host) != "h" || string(qv.request) != "req" {
		t.Fatalf("decodeQueueValue = %+v, %v", qv, err)
	}
	for _, e := range []state.Entry{{}, {State: frontier.Crawled, RevisitAt: -5}, {State: frontier.Error, RevisitAt: 1 << 50}} {
		if got, err := decodeState(stateValue(e)); err != nil || got != e {
			t.Errorf("state %+v round trip = %+v, %v", e, got, err)
		}
	}
	pg := metadata.Page{Fingerprint: frontier.Fingerprint{1}, URL: "http://a/", FirstSeen: -1, Status: 404, Depth: 2, Error: "E", RedirectTo: frontier.Fingerprint{9}}
	if got, err := decodePage(pg.Fingerprint, encodePage(pg)); err != nil || !cmp.Equal(got, pg) {
		t.Fatalf("page round trip = %+v, %v", got, err)
	}
}

func TestDecodeErrors(t *testing.T) {
	if _, err := decodeState([]byte{9}); err == nil {
		t.Error("state 9 decoded")
	}
	if _, err := decodeState([]byte{1, 2}); err == nil {
		t.Error("2-byte state decoded")
	}
	if _, _, _, _, _, err := decodeReadyKey([]byte("q\x00\x00\x00\x01\x00\x01host")); err == nil {
		t.Error("ready key without separator decoded")
	}
	if _, err := decodeQueueValue(encodeQueueValue(1, 0, "host", nil)[:18]); err == nil {
		t.Error("truncated queue value decoded")
	}
	if _, err := decodePage([]byte{1}, append(encodePage(metadata.Page{URL: "x"}), 0)); err == nil {
		t.Error("page with trailing bytes decoded")
	}
}

func FuzzDecodeQueueValue(f *testing.F) {
	f.Add(encodeQueueValue(0.5, 10, "a.example", []byte{0x94, 1}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		qv, err := decodeQueueValue(v)
		if err != nil {
			return
		}
		again, err := decodeQueueValue(encodeQueueValue(qv.score, qv.notBefore, string(qv.host), qv.request))
		if err != nil || !cmp.Equal(again, qv, cmp.AllowUnexported(queueValue{})) {
			t.Fatalf("re-encoding %x: %+v, %v", v, again, err)
		}
	})
}

func FuzzDecodeReadyKey(f *testing.F) {
	f.Add(readyKey(1, 2, "h", []byte{1, 2, 3}))
	f.Add([]byte("q"))
	f.Fuzz(func(t *testing.T, k []byte) {
		p, b, host, fp, _, err := decodeReadyKey(k)
		if err != nil {
			return
		}
		if got := readyKey(p, b, string(host), fp); !bytes.Equal(got, k) {
			t.Fatalf("re-encoding %x gives %x", k, got)
		}
	})
}

func FuzzDecodePage(f *testing.F) {
	f.Add(encodePage(metadata.Page{URL: "http://a/", Status: 200, RedirectTo: frontier.Fingerprint{1}}))
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, v []byte) {
		pg, err := decodePage([]byte{7}, v)
		if err != nil {
			return
		}
		if _, err := decodePage([]byte{7}, encodePage(pg)); err != nil {
			t.Fatalf("re-encoded page does not decode: %v", err)
		}
	})
}

// TestNextSkipMemoMatchesFreshScan drives one partition through rounds of the crawl's pattern (schedule, Next
// with per-host caps that make it seek past groups, Ack of part of the batch, rows scheduled again, new hosts
// whose groups sort between the known ones) and checks that every Next that seeks with the memo of the last
// one returns what a Next without a memo returns on the same rows.
func TestNextSkipMemoMatchesFreshScan(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Dir, cfg.FS, cfg.Sync, cfg.CacheBytes, cfg.Bloom = "db", vfs.NewMem(), false, 8<<20, state.BloomConfig{}
	db, err := Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q, ctx := db.Queue(), t.Context()
	rng := rand.New(rand.NewPCG(7, 21))
	scores := []float64{0.9, 0.5, 0.2}
	var known []queue.Item
	next := 0
	item := func(host string) queue.Item {
		next++
		return queue.Item{Partition: 0, Host: host, Fingerprint: frontier.Fingerprint(fmt.Appendf(nil, "fp%06d", rng.IntN(1_000_000))),
			Score: scores[rng.IntN(len(scores))], Request: fmt.Appendf(nil, "req %d", next)}
	}
	taken, jumps := 0, 0
	for round := range 80 {
		var batch []queue.Item
		hosts := 4 + round/4 // new hosts join as the crawl goes on; "h%03d" of a later one sorts between earlier ones
		for range 1 + rng.IntN(12) {
			batch = append(batch, item(fmt.Sprintf("h%03d", (rng.IntN(hosts)*37)%101)))
		}
		for range rng.IntN(3) { // scheduled again: another score, another request
			if len(known) > 0 {
				it := known[rng.IntN(len(known))]
				it.Score, it.Request = scores[rng.IntN(len(scores))], fmt.Appendf(nil, "again %d", round)
				batch = append(batch, it)
			}
		}
		if err := q.Schedule(ctx, batch); err != nil {
			t.Fatal(err)
		}
		known = append(known, batch...)
		if round%17 == 16 {
			if err := db.Pebble().Flush(); err != nil {
				t.Fatal(err)
			}
		}
		lim := queue.Limits{Max: 3 + rng.IntN(8), PerHost: 1 + rng.IntN(2), MinHosts: 2}
		got, err := q.Next(ctx, 0, 1, lim)
		if err != nil {
			t.Fatal(err)
		}
		q.mu.Lock()
		delete(q.skips, 0)
		q.mu.Unlock()
		want, err := q.Next(ctx, 0, 1, lim)
		if err != nil {
			t.Fatal(err)
		}
		q.mu.Lock()
		jumps += len(q.skips[0].jump)
		q.mu.Unlock()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("round %d: Next with the memo differs from a fresh scan (-fresh +memo):\n%s", round, diff)
		}
		var acks []queue.Item
		for _, it := range want {
			if rng.IntN(5) > 0 { // the rest stays, as a batch's blocked hosts do
				acks = append(acks, it)
			}
		}
		if err := q.Ack(ctx, acks); err != nil {
			t.Fatal(err)
		}
		taken += len(acks)
	}
	if taken < 200 || jumps < 100 {
		t.Fatalf("%d rows taken, %d seeks past a group: the test does not exercise the memo", taken, jumps)
	}
}
