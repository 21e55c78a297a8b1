package codec

import (
	"bytes"
	"testing"

	frontier "github.com/frontiercrawl/frontier"
)

// skimTest is the Skim the DB worker's links role uses, near enough: fingerprint and depth of a links_extracted's
// requests; fingerprint, depth and domain of the others; the Content-Type header; no private copy.
var skimTest = Skim{
	LinksMeta: func(k []byte) bool {
		return string(k) == frontier.MetaKeyFingerprint || string(k) == frontier.MetaKeyDepth
	},
	Meta: func(k []byte) bool {
		return string(k) == frontier.MetaKeyFingerprint || string(k) == frontier.MetaKeyDepth || string(k) == frontier.MetaKeyDomain
	},
	Headers: func(name []byte) bool { return bytes.EqualFold(name, []byte("Content-Type")) },
	Borrow:  true,
}

// skimmed returns m (decoded whole) as s leaves it: each request's meta filtered by s.LinksMeta or s.Meta, a
// page_crawled's headers by s.Headers; an empty header list is nil, as an empty meta is an empty map.
func skimmed(m frontier.Message, s Skim) frontier.Message {
	filter := func(r *frontier.Request, keep func([]byte) bool) {
		if r == nil || keep == nil {
			return
		}
		var out frontier.Map
		for _, e := range r.Meta {
			k, isBin := e.Key.([]byte)
			ks, isStr := e.Key.(string)
			if (isBin && !keep(k)) || (isStr && !keep([]byte(ks))) { // (body is not in Meta)
				continue
			}
			out = append(out, e)
		}
		if r.Meta != nil && out == nil {
			out = frontier.Map{}
		}
		r.Meta = out
	}
	switch m := m.(type) {
	case *frontier.LinksExtracted:
		for _, l := range append([]*frontier.Request{m.Request}, m.Links...) {
			filter(l, s.LinksMeta)
		}
	case *frontier.PageCrawled:
		filter(m.Response.Request, s.Meta)
		if s.Headers != nil {
			var h frontier.Headers
			for _, x := range m.Response.Headers {
				if s.Headers(x.Name) {
					h = append(h, x)
				}
			}
			m.Response.Headers = h
		}
	case *frontier.RequestError:
		filter(m.Request, s.Meta)
	case *frontier.UpdateScore:
		filter(m.Request, s.Meta)
	case *frontier.AddSeeds:
		for _, r := range m.Seeds {
			filter(r, s.Meta)
		}
	}
	return m
}

// checkSkim holds DecodeMessageSkim (through Msgpack and through dec) to DecodeMessage on data: the same inputs
// rejected, the same message as skimmed leaves it (byte-equal re-encodings), and data left unchanged.
func checkSkim(t *testing.T, dec *MsgpackDecoder, data []byte, s Skim) {
	t.Helper()
	c := Msgpack{}
	orig := bytes.Clone(data)
	_, werr := c.DecodeMessage(data)
	for i, skim := range []func([]byte, Skim) (frontier.Message, error){c.DecodeMessageSkim, dec.DecodeMessageSkim, dec.DecodeMessageSkim} {
		got, err := skim(data, s)
		if !bytes.Equal(data, orig) {
			t.Fatalf("decoder %d changed its input", i)
		}
		if werr != nil {
			if err == nil {
				t.Fatalf("decoder %d: DecodeMessageSkim accepts what DecodeMessage rejects (%v)\n%x", i, werr, data)
			}
			continue
		}
		if err != nil {
			t.Fatalf("decoder %d: DecodeMessage accepts what DecodeMessageSkim rejects: %v\n%x", i, err, data)
		}
		if pc, ok := got.(*frontier.PageCrawled); ok && len(pc.Response.Headers) == 0 {
			pc.Response.Headers = nil
		}
		want, _ := c.DecodeMessage(data)
		a, err1 := c.EncodeMessage(skimmed(want, s))
		b, err2 := c.EncodeMessage(got)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Fatalf("decoder %d: DecodeMessageSkim differs from DecodeMessage skimmed (%v, %v):\n%x\n%x\n%x", i, err1, err2, data, a, b)
		}
	}
}

// skimMessages are the table of TestDecodeSkim and the seeds of FuzzDecodeSkim: every message kind that carries
// requests, with headers of each form (one value, several, nil, other case).
func skimMessages() []frontier.Message {
	rs := benchRequests()
	pc := func(h frontier.Headers) frontier.Message {
		return &frontier.PageCrawled{Response: &frontier.Response{URL: rs[3].URL, Status: 200, Request: rs[3], Headers: h, Body: []byte("<html>")}}
	}
	return []frontier.Message{
		&frontier.Offset{Partition: 3, Offset: 1234},
		benchMessages("le")[0],
		&frontier.LinksExtracted{Request: rs[1], Links: rs[2:6]},
		pc(nil),
		pc(frontier.Headers{{Name: []byte("Content-Type"), Values: [][]byte{[]byte("text/html")}}}),
		pc(frontier.Headers{
			{Name: []byte("Content-Length"), Values: [][]byte{[]byte("2817")}},
			{Name: []byte("content-type"), Values: [][]byte{[]byte("text/html"), []byte("text/plain")}},
			{Name: []byte("Date"), Values: [][]byte{[]byte("Sat, 28 Nov 2026 02:40:00 GMT")}},
			{Name: []byte("Set-Cookie"), Values: [][]byte{[]byte("a=1"), []byte("b=2")}},
			{Name: []byte("X-Empty")},
		}),
		pc(frontier.Headers{{Name: []byte("Date"), Values: [][]byte{[]byte("x")}}}),
		&frontier.RequestError{Request: rs[7], Error: "DNSLookupError"},
		&frontier.UpdateScore{Request: rs[8], Score: 0.25, Schedule: true},
		&frontier.AddSeeds{Seeds: rs[9:12]},
		&frontier.Stats{Map: frontier.Map{{Key: []byte("n"), Value: int64(1)}}},
	}
}

func TestDecodeSkim(t *testing.T) {
	dec := NewMsgpackDecoder()
	for _, m := range skimMessages() {
		data, err := Msgpack{}.EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		checkSkim(t, dec, data, skimTest)
		checkSkim(t, dec, data, Skim{})
		checkSkim(t, dec, data, Skim{Headers: skimTest.Headers})
		for cut := range len(data) { // every truncation is rejected alike
			checkSkim(t, dec, data[:cut], skimTest)
		}
	}
}

// FuzzDecodeSkim holds DecodeMessageSkim to DecodeMessage (checkSkim): on any input it never panics, rejects
// what DecodeMessage rejects, and returns the message DecodeMessage returns, skimmed; it never writes into its
// input. Seeds: skimMessages.
//
//	go test -run '^$' -fuzz FuzzDecodeSkim -fuzztime 30s ./codec/
func FuzzDecodeSkim(f *testing.F) {
	for _, m := range skimMessages() {
		f.Add(mustEncodeMessage(f, m))
	}
	dec := NewMsgpackDecoder()
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSkim(t, dec, data, skimTest)
	})
}
