package codec

import (
	"bytes"
	"reflect"
	"testing"

	frontier "github.com/frontiercrawl/frontier"
)

// keepKeys are the keeps the request-meta tests try: a few fixed keys (as the URLFrontier gateway's) and every
// key of even length (so that kept and skipped entries interleave).
var keepKeys = []func(k []byte) bool{
	func(k []byte) bool {
		switch string(k) {
		case "frontier_uf_crawl", "frontier_uf_key", "frontier_uf_meta", frontier.MetaKeyNotBefore:
			return true
		}
		return false
	},
	func(k []byte) bool { return len(k)%2 == 0 },
}

// checkRequestMeta checks DecodeRequestMeta against DecodeRequest on p: the same inputs rejected, and an
// accepted one decoded to the same request but for the meta entries keep rejects.
func checkRequestMeta(t *testing.T, p []byte) {
	t.Helper()
	want, werr := Msgpack{}.DecodeRequest(p)
	for i, keep := range keepKeys {
		in := bytes.Clone(p)
		got, err := Msgpack{}.DecodeRequestMeta(in, keep)
		if !bytes.Equal(in, p) {
			t.Fatalf("keep %d: input changed", i)
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("keep %d: DecodeRequestMeta err %v, DecodeRequest err %v\n%x", i, err, werr, p)
		}
		if err != nil {
			checkRequestSkim(t, p, keep, nil)
			continue
		}
		w := *want
		w.Meta = nil
		for _, e := range want.Meta {
			var k []byte
			switch x := e.Key.(type) {
			case string:
				k = []byte(x)
			case []byte:
				k = x
			}
			if k != nil && (string(k) == frontier.MetaKeyBody || keep(k)) || k == nil {
				w.Meta = append(w.Meta, e)
			}
		}
		checkRequestSkim(t, p, keep, got)
		g := *got
		if len(g.Meta) == 0 && len(w.Meta) == 0 {
			g.Meta, w.Meta = nil, nil
		}
		if !reflect.DeepEqual(&g, &w) {
			t.Fatalf("keep %d: got %#v\nwant %#v\n%x", i, &g, &w, p)
		}
	}
}

// checkRequestSkim checks MsgpackDecoder.DecodeRequestSkim against DecodeRequestMeta's request want (and
// DecodeRequestMeta's error, want nil), with a copy and borrowing, one decoder for both: the borrowing decode
// leaves its input unchanged and does not change the request decoded before it.
func checkRequestSkim(t *testing.T, p []byte, keep func([]byte) bool, want *frontier.Request) {
	t.Helper()
	d := NewMsgpackDecoder()
	var got [2]*frontier.Request
	for i, borrow := range []bool{false, true} {
		in := bytes.Clone(p)
		r, err := d.DecodeRequestSkim(in, keep, borrow)
		if !bytes.Equal(in, p) {
			t.Fatalf("borrow %v: input changed", borrow)
		}
		if (err == nil) != (want != nil) {
			t.Fatalf("borrow %v: DecodeRequestSkim err %v, DecodeRequestMeta's request %v\n%x", borrow, err, want, p)
		}
		got[i] = r
	}
	for i, r := range got {
		if r != nil && !reflect.DeepEqual(r, want) {
			t.Fatalf("decode %d of DecodeRequestSkim: got %#v\nwant %#v\n%x", i, r, want, p)
		}
	}
}

func TestDecodeRequestMetaVectors(t *testing.T) {
	n := 0
	for _, v := range loadVectors(t) {
		if v.req == nil {
			continue
		}
		n++
		checkRequestMeta(t, v.mp)
		for cut := 0; cut < len(v.mp); cut++ { // every truncation is rejected by both
			checkRequestMeta(t, v.mp[:cut])
		}
		checkRequestMeta(t, append(bytes.Clone(v.mp), 0xc0)) // trailing bytes
	}
	if n == 0 {
		t.Fatal("no feed vectors")
	}
}

func TestDecodeRequestMeta(t *testing.T) {
	full, err := Msgpack{}.EncodeRequest(specRequest())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    []byte
		ok   bool
	}{
		{"spec request", full, true},
		{"empty", nil, false},
		{"nil meta", unhex(t, "95 a3 75 72 6c c0 c0 c0 c0"), true},
		{"kept str key", unhex(t, "95 a3 75 72 6c c0 c0 c0 81 af 66 72 6f 6e 74 69 65 72 5f 75 66 5f 6b 65 79 a1 71"), true},
		{"skipped key, bad value", unhex(t, "95 a3 75 72 6c c0 c0 c0 81 a1 78 c1"), false},
		{"skipped key, truncated value", unhex(t, "95 a3 75 72 6c c0 c0 c0 81 a1 78 a5 61"), false},
		{"skipped key, nested map", unhex(t, "95 a3 75 72 6c c0 c0 c0 81 a1 78 81 a1 61 01"), true},
		{"int key", unhex(t, "95 a3 75 72 6c c0 c0 c0 81 01 02"), true},
		{"four elements", unhex(t, "94 a3 75 72 6c c0 c0 c0"), false},
		{"bad method", unhex(t, "95 a3 75 72 6c 01 c0 c0 c0"), false},
		{"trailing byte", unhex(t, "95 a3 75 72 6c c0 c0 c0 c0 c0"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRequestMeta(t, tc.p)
			if _, err := (Msgpack{}).DecodeRequestMeta(tc.p, keepKeys[0]); (err == nil) != tc.ok {
				t.Fatalf("err %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// TestDecodeRequestSkimSequence decodes the feed vectors one after another with one decoder (borrowing, as the
// URLFrontier gateway does), then checks every request against its own DecodeRequestMeta: requests cut from the
// shared slabs never overwrite one another.
func TestDecodeRequestSkimSequence(t *testing.T) {
	var ins [][]byte
	for _, v := range loadVectors(t) {
		if v.req != nil {
			ins = append(ins, v.mp)
		}
	}
	full, err := Msgpack{}.EncodeRequest(specRequest())
	if err != nil {
		t.Fatal(err)
	}
	ins = append(ins, full, unhex(t, "95 a3 75 72 6c c0 c0 c0 81 a1 78 81 a1 61 01"))
	for k, keep := range append(keepKeys, nil) {
		d := NewMsgpackDecoder()
		var got []*frontier.Request
		for round := 0; round < 40; round++ { // past a slab's worth of maps
			for _, p := range ins {
				r, err := d.DecodeRequestSkim(p, keep, true)
				if err != nil {
					t.Fatalf("keep %d: %v\n%x", k, err, p)
				}
				got = append(got, r)
			}
		}
		for i, r := range got {
			want, err := Msgpack{}.DecodeRequestMeta(ins[i%len(ins)], keep)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r, want) {
				t.Fatalf("keep %d, request %d: got %#v\nwant %#v", k, i, r, want)
			}
		}
	}
}

// FuzzDecodeRequestMeta is differential: DecodeRequestMeta rejects exactly what DecodeRequest rejects and
// decodes the rest to the same request, less the meta entries its keep rejects. Seeds: Frontera's feed vectors,
// their truncations and the table above's malformed inputs.
func FuzzDecodeRequestMeta(f *testing.F) {
	for _, v := range loadVectors(f) {
		if v.req != nil {
			f.Add(v.mp)
			f.Add(v.mp[:len(v.mp)/2])
		}
	}
	f.Add(unhex(f, "95 a3 75 72 6c c0 c0 c0 81 a1 78 c1"))
	f.Add(unhex(f, "95 a3 75 72 6c c0 c0 c0 81 01 02"))
	f.Add(unhex(f, "95 a3 75 72 6c c0 c0 c0 81 a1 78 81 a1 61 01"))
	f.Fuzz(func(t *testing.T, p []byte) { checkRequestMeta(t, p) })
}

func BenchmarkDecodeFeedRequest(b *testing.B) {
	// A feed request as the URLFrontier gateway takes them: the DB worker's meta and the gateway's own keys.
	r := specRequest()
	r.SetMetaDomain(frontier.MetaDomain{Netloc: "example.com", Name: "example.com", Scheme: "http", SLD: "example",
		TLD: "com", Fingerprint: "0caaf24ab1a0c33440c06afe99df986365b0781f"})
	r.SetMetaDepth(1)
	r.SetMetaScore(0.5)
	r.SetMetaState(1)
	r.Meta.Set("frontier_uf_crawl", "DEFAULT")
	r.Meta.Set("frontier_uf_key", "example.com")
	p, err := Msgpack{}.EncodeRequest(r)
	if err != nil {
		b.Fatal(err)
	}
	feed := [][]byte{p}
	dec := NewMsgpackDecoder()
	for _, bc := range []struct {
		name string
		dec  func([]byte) (*frontier.Request, error)
	}{
		{"full", Msgpack{}.DecodeRequest},
		{"meta", func(p []byte) (*frontier.Request, error) { return Msgpack{}.DecodeRequestMeta(p, keepKeys[0]) }},
		{"skim", func(p []byte) (*frontier.Request, error) { return dec.DecodeRequestSkim(p, keepKeys[0], true) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := bc.dec(feed[i%len(feed)]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "URLs/s")
		})
	}
}
