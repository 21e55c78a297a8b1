package codec

import (
	"bytes"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	frontier "github.com/frontiercrawl/frontier"
)

// FuzzDecode feeds arbitrary bytes to the msgpack decoders. They must never panic; whatever they accept must
// re-encode, decode again to the same bytes (the encoding is a fixed point), and be valid msgpack for an
// independent reader (vmihailenco/msgpack/v5), and encode to the same bytes through a RequestMemo. Seeds:
// testdata/fuzz/FuzzDecode (from Frontera's vectors).
func FuzzDecode(f *testing.F) {
	f.Add(unhex(f, "93 c4026f66 03 cd04d2"))
	f.Add(unhex(f, "92 c4046e6a6964 02"))
	f.Add(mustEncode(f, specRequest()))
	f.Add(mustEncodeMessage(f, sharedDomainLinks())) // links sharing a domain map
	shared := NewMsgpackDecoder()                    // sees every input: its domain maps are shared across them
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Msgpack{}
		checkDecoder(t, shared, data)
		if m, err := c.DecodeMessage(data); err == nil {
			b, err := c.EncodeMessage(m)
			if err != nil {
				t.Fatalf("decoded message does not re-encode: %v", err)
			}
			m2, err := c.DecodeMessage(b)
			if err != nil {
				t.Fatalf("re-encoded message does not decode: %v\n%x", err, b)
			}
			b2, err := c.EncodeMessage(m2)
			if err != nil || !bytes.Equal(b, b2) {
				t.Fatalf("encoding is not a fixed point: %v\n%x\n%x", err, b, b2)
			}
			rd := bytes.NewReader(b)
			if err := msgpack.NewDecoder(rd).Skip(); err != nil || rd.Len() != 0 {
				t.Fatalf("msgpack/v5 rejects our bytes (%d left): %v\n%x", rd.Len(), err, b)
			}
			if r := requestOf(m); r != nil { // its request encoded once for a report's messages: the same bytes
				memo := &RequestMemo{Request: r}
				for _, x := range append([]frontier.Message{m}, memoReport(r, "lpel")...) {
					want, err := AppendMessage(nil, x)
					got, err2 := AppendMessageMemo(nil, x, memo)
					if (err == nil) != (err2 == nil) || !bytes.Equal(got, want) {
						t.Fatalf("%s through a request memo: %v, %v\n%x\n%x", x.Name(), err2, err, got, want)
					}
				}
			}
		}
		if r, err := c.DecodeRequest(data); err == nil {
			b, err := c.EncodeRequest(r)
			if err != nil {
				t.Fatalf("decoded request does not re-encode: %v", err)
			}
			r2, err := c.DecodeRequest(b)
			if err != nil {
				t.Fatalf("re-encoded request does not decode: %v\n%x", err, b)
			}
			if b2, err := c.EncodeRequest(r2); err != nil || !bytes.Equal(b, b2) {
				t.Fatalf("encoding is not a fixed point: %v\n%x\n%x", err, b, b2)
			}
		}
	})
}

// FuzzDecodeJSON does the same for the JSON codec. Everything the JSON decoder accepts is UTF-8 text, so it must
// always re-encode.
func FuzzDecodeJSON(f *testing.F) {
	f.Add([]byte(`["dict", [[["other", "type"], ["other", "offset"]], [["other", "partition_id"], ["other", 0]], [["other", "offset"], ["other", 1234]]]]`))
	if b, err := (JSON{}).EncodeRequest(specRequest()); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := JSON{}
		if m, err := c.DecodeMessage(data); err == nil {
			b, err := c.EncodeMessage(m)
			if err != nil {
				t.Fatalf("decoded message does not re-encode: %v", err)
			}
			m2, err := c.DecodeMessage(b)
			if err != nil {
				t.Fatalf("re-encoded message does not decode: %v\n%s", err, b)
			}
			if b2, err := c.EncodeMessage(m2); err != nil || !bytes.Equal(b, b2) {
				t.Fatalf("encoding is not a fixed point: %v\n%s\n%s", err, b, b2)
			}
		}
		if r, err := c.DecodeRequest(data); err == nil {
			b, err := c.EncodeRequest(r)
			if err != nil {
				t.Fatalf("decoded request does not re-encode: %v", err)
			}
			r2, err := c.DecodeRequest(b)
			if err != nil {
				t.Fatalf("re-encoded request does not decode: %v\n%s", err, b)
			}
			if b2, err := c.EncodeRequest(r2); err != nil || !bytes.Equal(b, b2) {
				t.Fatalf("encoding is not a fixed point: %v\n%s\n%s", err, b, b2)
			}
		}
	})
}

// FuzzDecodeLinksMeta holds DecodeMessageLinksMeta to DecodeMessage: on any input it never panics, and where
// DecodeMessage accepts a message it accepts it too and returns the same message, except that the page's
// request and each link of a links_extracted keep only the meta keys kept (here fingerprint and depth);
// skipped values are checked as DecodeMessage checks them, so the two reject the same inputs. Seeds (f.Add):
// an offset message and two links_extracted of benchmark requests.
func FuzzDecodeLinksMeta(f *testing.F) {
	f.Add(unhex(f, "93 c4026f66 03 cd04d2"))
	for _, m := range benchMessages("le")[:2] {
		f.Add(mustEncodeMessage(f, m))
	}
	keep := func(k []byte) bool {
		return string(k) == frontier.MetaKeyFingerprint || string(k) == frontier.MetaKeyDepth
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Msgpack{}
		skim, serr := c.DecodeMessageLinksMeta(data, keep)
		whole, err := c.DecodeMessage(data)
		if err != nil {
			if serr == nil {
				t.Fatalf("DecodeMessageLinksMeta accepts what DecodeMessage rejects (%v)\n%x", err, data)
			}
			return
		}
		if serr != nil {
			t.Fatalf("DecodeMessage accepts what DecodeMessageLinksMeta rejects: %v\n%x", serr, data)
		}
		if le, ok := whole.(*frontier.LinksExtracted); ok {
			for _, l := range append([]*frontier.Request{le.Request}, le.Links...) {
				var m frontier.Map
				for _, e := range l.Meta {
					k, isBin := e.Key.([]byte)
					ks, isStr := e.Key.(string)
					if (isBin && !keep(k)) || (isStr && !keep([]byte(ks))) { // (body is not in Meta)
						continue
					}
					m = append(m, e)
				}
				if l.Meta != nil && m == nil {
					m = frontier.Map{}
				}
				l.Meta = m
			}
		}
		a, err1 := c.EncodeMessage(whole)
		b, err2 := c.EncodeMessage(skim)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Fatalf("DecodeMessageLinksMeta differs from DecodeMessage with the links' and page's meta filtered (%v, %v):\n%x\n%x", err1, err2, a, b)
		}
	})
}

func mustEncodeMessage(f *testing.F, m frontier.Message) []byte {
	b, err := Msgpack{}.EncodeMessage(m)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// checkDecoder holds a MsgpackDecoder to Msgpack.DecodeMessage on data, decoded twice (the second time through
// the domain maps the first kept): the same error, or byte-equal re-encodings.
func checkDecoder(t *testing.T, dec *MsgpackDecoder, data []byte) {
	t.Helper()
	want, werr := Msgpack{}.DecodeMessage(data)
	for range 2 {
		got, err := dec.DecodeMessage(data)
		if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Fatalf("MsgpackDecoder: error %v, want %v\n%x", err, werr, data)
		}
		if err != nil {
			continue
		}
		a, err1 := Msgpack{}.EncodeMessage(want)
		b, err2 := Msgpack{}.EncodeMessage(got)
		if (err1 == nil) != (err2 == nil) || !bytes.Equal(a, b) {
			t.Fatalf("MsgpackDecoder decodes otherwise (%v, %v):\n%x\n%x", err1, err2, a, b)
		}
	}
}
