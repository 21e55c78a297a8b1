package pebblestore

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
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
