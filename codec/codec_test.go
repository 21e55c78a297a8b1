package codec

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/google/go-cmp/cmp"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.NewReplacer(" ", "", "\n", "").Replace(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// specRequest is a feed request R; specR is its msgpack encoding as Frontera 0.8 writes it.
func specRequest() *frontier.Request {
	return &frontier.Request{URL: "http://example.com/", Method: "GET", Meta: frontier.Map{
		{Key: []byte("fingerprint"), Value: []byte("89e6a0649e06d83370cdf2cbfb05f363934a8d0c")},
		{Key: []byte("jid"), Value: int64(0)},
	}}
}

const specR = "95 b3 687474703a2f2f6578616d706c652e636f6d2f c4 03 474554 80 80 82 c40b 66696e6765727072696e74 c428" +
	"3839653661303634396530366438333337306364663263626662303566333633393334613864306300 c403 6a6964 00"

func TestSpecGoldenBytes(t *testing.T) {
	// The golden R elides the fingerprint; spell it out: hex of the 40 ASCII hex digits.
	r := strings.Replace(specR, "3839653661303634396530366438333337306364663263626662303566333633393334613864306300",
		hex.EncodeToString([]byte("89e6a0649e06d83370cdf2cbfb05f363934a8d0c")), 1)
	for _, tc := range []struct {
		name string
		enc  func() ([]byte, error)
		want string
	}{
		{"feed R", func() ([]byte, error) { return Msgpack{}.EncodeRequest(specRequest()) }, r},
		{"of", func() ([]byte, error) { return Msgpack{}.EncodeMessage(&frontier.Offset{Partition: 3, Offset: 1234}) }, "93 c4026f66 03 cd04d2"},
		{"njid", func() ([]byte, error) { return Msgpack{}.EncodeMessage(&frontier.NewJobID{ID: 2}) }, "92 c4046e6a6964 02"},
		{"re", func() ([]byte, error) {
			return Msgpack{}.EncodeMessage(&frontier.RequestError{Request: specRequest(), Error: "DNSLookupError"})
		}, "93 c4027265" + r + "ae 444e534c6f6f6b75704572726f72"},
		{"json of", func() ([]byte, error) { return JSON{}.EncodeMessage(&frontier.Offset{Partition: 0, Offset: 1234}) },
			hex.EncodeToString([]byte(`["dict", [[["other", "type"], ["other", "offset"]], [["other", "partition_id"], ["other", 0]], [["other", "offset"], ["other", 1234]]]]`))},
	} {
		got, err := tc.enc()
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if want := unhex(t, tc.want); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %x\nwant %x", tc.name, got, want)
		}
	}
}

func TestRequestBodyTravelsInMeta(t *testing.T) {
	for _, c := range []Codec{Msgpack{}, JSON{}} {
		r := specRequest()
		plain, err := c.EncodeRequest(r)
		if err != nil {
			t.Fatal(err)
		}
		r.Body = []byte("a=1&b=2")
		withBody, err := c.EncodeRequest(r)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(plain, withBody) {
			t.Fatalf("%s: body not encoded", c.Name())
		}
		got, err := c.DecodeRequest(withBody)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Body) != "a=1&b=2" {
			t.Errorf("%s: decoded body %q", c.Name(), got.Body)
		}
		if _, ok := got.Meta.Get(frontier.MetaKeyBody); ok {
			t.Errorf("%s: %s left in Meta after decoding", c.Name(), frontier.MetaKeyBody)
		}
		if len(got.Meta) != 2 {
			t.Errorf("%s: meta = %v", c.Name(), got.Meta)
		}
		// A stale body key in Meta is replaced by Body, or dropped when Body is empty.
		r.Meta = append(r.Meta, frontier.Entry{Key: []byte(frontier.MetaKeyBody), Value: []byte("stale")})
		again, _ := c.EncodeRequest(r)
		if !bytes.Equal(again, withBody) {
			t.Errorf("%s: a stale meta body key changed the bytes", c.Name())
		}
		r.Body = nil
		again, _ = c.EncodeRequest(r)
		if !bytes.Equal(again, plain) {
			t.Errorf("%s: a stale meta body key was sent without a body", c.Name())
		}
	}
}

func TestRoundTripEveryMessage(t *testing.T) {
	req := specRequest()
	req.Method = "POST"
	req.Headers = frontier.Headers{{Name: []byte("Accept"), Values: [][]byte{[]byte("text/html")}}}
	req.Cookies = []frontier.Cookie{{Name: "sid", Value: "42"}}
	req.Body = []byte("q=1")
	meta := frontier.Map{
		{Key: []byte("jid"), Value: int64(3)},
		{Key: []byte("big"), Value: uint64(math.MaxUint64)},
		{Key: []byte("neg"), Value: int64(math.MinInt64)},
		{Key: "str", Value: "ü"},
		{Key: []byte("nested"), Value: frontier.Map{{Key: []byte("l"), Value: []frontier.Value{nil, true, 1.5}}}},
	}
	msgs := []frontier.Message{
		&frontier.PageCrawled{Response: &frontier.Response{URL: "http://example.com/", Status: 200, Body: []byte("<html>"),
			Headers: frontier.Headers{{Name: []byte("Content-Type"), Values: [][]byte{[]byte("text/html")}}},
			Request: &frontier.Request{URL: "http://example.com/", Meta: meta}}},
		&frontier.LinksExtracted{Request: req, Links: []*frontier.Request{specRequest(), specRequest()}},
		&frontier.RequestError{Request: req, Error: "TimeoutError"},
		&frontier.Offset{Partition: 7, Offset: 1 << 40},
		&frontier.UpdateScore{Request: req, Score: 0.25, Schedule: true},
		&frontier.NewJobID{ID: 9},
		&frontier.Stats{Map: frontier.Map{{Key: "pushed", Value: int64(5)}, {Key: "_tags", Value: frontier.Map{{Key: "source", Value: "sw"}}}}},
		&frontier.AddSeeds{Seeds: []*frontier.Request{specRequest()}},
	}
	for _, c := range []Codec{Msgpack{}, JSON{}} {
		for _, m := range msgs {
			b, err := c.EncodeMessage(m)
			if err != nil {
				t.Fatalf("%s %s: %v", c.Name(), m.Name(), err)
			}
			got, err := c.DecodeMessage(b)
			if err != nil {
				t.Fatalf("%s %s: %v", c.Name(), m.Name(), err)
			}
			want := m
			if pc, ok := m.(*frontier.PageCrawled); ok && c.Name() == "json" {
				// Frontera's JSON page_crawled has no headers.
				cp := *pc.Response
				cp.Headers = nil
				want = &frontier.PageCrawled{Response: &cp}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s round trip (-want +got):\n%s", c.Name(), m.Name(), diff)
			}
		}
	}
}

func TestNew(t *testing.T) {
	for _, name := range []string{"msgpack", "JSON", "frontera.contrib.backends.remote.codecs.msgpack"} {
		if _, err := New(name); err != nil {
			t.Errorf("New(%q): %v", name, err)
		}
	}
	if _, err := New("protobuf"); err == nil || !strings.Contains(err.Error(), "protobuf") || !strings.Contains(err.Error(), "msgpack") {
		t.Errorf("New(unknown) error = %v", err)
	}
}

func TestEncodeErrors(t *testing.T) {
	bad := &frontier.Request{URL: "http://x/", Meta: frontier.Map{{Key: []byte("k"), Value: struct{}{}}}}
	nonUTF8 := &frontier.Request{URL: "http://x/", Meta: frontier.Map{{Key: []byte("k"), Value: []byte{0xff}}}}
	deep := frontier.Value(nil)
	for range MaxDepth + 2 {
		deep = []frontier.Value{deep}
	}
	tooDeep := &frontier.Request{URL: "http://x/", Meta: frontier.Map{{Key: []byte("d"), Value: deep}}}
	for _, tc := range []struct {
		name  string
		c     Codec
		m     frontier.Message
		r     *frontier.Request
		wants string
	}{
		{"msgpack nil message", Msgpack{}, nil, nil, "nil"},
		{"msgpack nil request", Msgpack{}, &frontier.LinksExtracted{}, nil, "request is nil"},
		{"msgpack nil link", Msgpack{}, &frontier.LinksExtracted{Request: specRequest(), Links: []*frontier.Request{nil}}, nil, "links[0]"},
		{"msgpack nil response", Msgpack{}, &frontier.PageCrawled{}, nil, "response is nil"},
		{"msgpack bad meta value", Msgpack{}, nil, bad, `meta[b"k"]: value of type struct {}`},
		{"msgpack too deep", Msgpack{}, nil, tooDeep, "nesting deeper"},
		{"json bad meta value", JSON{}, nil, bad, `meta[b"k"]: value of type struct {}`},
		{"json non-UTF-8 bytes", JSON{}, nil, nonUTF8, "not UTF-8"},
		{"json non-UTF-8 url", JSON{}, nil, &frontier.Request{URL: "http://x/\xff"}, `url "http://x/\xff" is not UTF-8`},
		{"json non-UTF-8 cookie", JSON{}, nil, &frontier.Request{URL: "http://x/", Cookies: []frontier.Cookie{{Name: "a", Value: "\xff"}}}, "cookie value"},
		{"json non-UTF-8 error", JSON{}, &frontier.RequestError{Request: specRequest(), Error: "\xfe"}, nil, "error"},
		{"json nil message", JSON{}, nil, nil, "nil"},
		{"json too deep", JSON{}, nil, tooDeep, "nesting deeper"},
	} {
		var err error
		if tc.r != nil {
			_, err = tc.c.EncodeRequest(tc.r)
		} else {
			_, err = tc.c.EncodeMessage(tc.m)
		}
		if err == nil || !strings.Contains(err.Error(), tc.wants) || !strings.HasPrefix(err.Error(), "codec: ") {
			t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.wants)
		}
	}
}

func TestMsgpackDecodeErrors(t *testing.T) {
	r := hex.EncodeToString(mustEncode(t, specRequest()))
	for _, tc := range []struct {
		name, in string
		kind     error
		wants    string
	}{
		{"empty", "", ErrTruncated, "at byte 0"},
		{"not an array", "c0", ErrMalformed, "want message (array), got nil"},
		{"empty array", "90", ErrMalformed, "empty"},
		{"unknown tag", "92 c4027a7a 00", ErrUnknownTag, `tag "zz"`},
		{"str tag", "93 a26f66 03 cd04d2", ErrUnknownTag, "is str"},
		{"int tag", "92 01 02", ErrMalformed, "want tag (bin or str), got int"},
		{"wrong arity", "92 c4026f66 03", ErrMalformed, "2 elements, want 3"},
		{"truncated int", "93 c4026f66 03 cd04", ErrTruncated, "offset"},
		{"offset is str", "93 c4026f66 03 a131", ErrMalformed, "want offset (int), got str"},
		{"offset overflows", "93 c4026f66 03 cfffffffffffffffff", ErrMalformed, "overflows int64"},
		{"huge array", "dd ffffffff", ErrTruncated, "length 4294967295"},
		{"huge map in stats", "92 c4027374 df ffffffff", ErrTruncated, "length 4294967295"},
		{"huge str url", "91 c4026c65", ErrMalformed, "1 elements, want 3"},
		{"huge bin", "92 c6 ffffffff", ErrTruncated, "tag of length 4294967295"},
		{"trailing bytes", "92 c4046e6a6964 02 00", ErrMalformed, "trailing"},
		{"invalid utf-8 str", "93 c4027265" + r + "a2 fffe", ErrMalformed, "not valid UTF-8"},
		{"request of 4", "93 c4027265 94 a0 c0 80 80 ae", ErrMalformed, "4 elements, want 5"},
		{"meta is a list", "93 c4027265 95 a0 c403474554 80 80 90 a0", ErrMalformed, "want meta (map), got array"},
		{"unhashable key", "93 c4027265 95 a0 c403474554 80 80 81 90 00 a0", ErrMalformed, "unhashable array"},
		{"ext type", "93 c4027265 95 a0 c403474554 80 80 81 a0 d40100 a0", ErrMalformed, "unsupported msgpack type"},
		{"reserved c1", "92 c4027374 81 a0 c1", ErrMalformed, "reserved"},
		{"score is a str", "94 c4027573" + r + "a0 c3", ErrMalformed, "want score (float), got str"},
		{"schedule is int", "94 c4027573" + r + "cb3fe0000000000000 01", ErrMalformed, "want schedule (bool), got int"},
		{"link is bad", "93 c4026c65" + r + "91 c0", ErrMalformed, "links[0]"},
		{"deep nesting", "92 c4027374 81 a0" + strings.Repeat("91", MaxDepth+4) + "c0", ErrMalformed, "nesting deeper"},
	} {
		_, err := Msgpack{}.DecodeMessage(unhex(t, tc.in))
		if err == nil || !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.wants) || !strings.HasPrefix(err.Error(), "codec: msgpack: ") {
			t.Errorf("%s: err = %v, want %v mentioning %q", tc.name, err, tc.kind, tc.wants)
		}
	}
	if _, err := (Msgpack{}).DecodeRequest(unhex(t, r[:len(r)-2])); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated request: %v", err)
	}
}

func mustEncode(t testing.TB, r *frontier.Request) []byte {
	b, err := Msgpack{}.EncodeRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestJSONDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		kind     error
		wants    string
	}{
		{"empty", "", ErrTruncated, "at byte 0"},
		{"object", `{"type": "offset"}`, ErrMalformed, "JSON object"},
		{"not a pair", `["dict"]`, ErrMalformed, "pair"},
		{"unknown value type", `["set", []]`, ErrMalformed, `unknown value type "set"`},
		{"unknown message", `["dict", [[["other", "type"], ["other", "nope"]]]]`, ErrUnknownTag, `"nope"`},
		{"no type", `["dict", []]`, ErrMalformed, `missing key "type"`},
		{"missing field", `["dict", [[["other", "type"], ["other", "offset"]]]]`, ErrMalformed, `offset: missing key "partition_id"`},
		{"offset is str", `["dict", [[["other", "type"], ["other", "new_job_id"]], [["other", "job_id"], ["other", "x"]]]]`, ErrMalformed, "job_id is string"},
		{"truncated", `["dict", [[["other", "type"], ["other", "offs`, ErrTruncated, "inside a string"},
		{"trailing", `["other", 1] x`, ErrMalformed, "trailing"},
		{"junk after a dict item", `["dict", [[["other", "type"], ["other", "offset"]] x]]`, ErrMalformed, "want , or ] in a dict"},
		{"junk after a list item", `["dict", [[["other", "l"], ["list", [["other", 1] x]]]]]`, ErrMalformed, "want , or ] in a list"},
		{"truncated dict", `["dict", [[["other", "type"], ["other", "offset"]]`, ErrTruncated, "inside a dict"},
		{"lone surrogate", `["bytes", "\ud800"]`, ErrMalformed, "surrogate"},
		{"bad escape", `["other", "\q"]`, ErrMalformed, "invalid escape"},
		{"control char", "[\"other\", \"a\x01\"]", ErrMalformed, "control character"},
		{"huge int", `["dict", [[["other", "type"], ["other", "new_job_id"]], [["other", "job_id"], ["other", 123456789012345678901234567890]]]]`, ErrMalformed, "does not fit 64 bits"},
		{"bad number", `["other", -]`, ErrMalformed, "invalid number"},
		{"unhashable key", `["dict", [[["list", []], ["other", 1]]]]`, ErrMalformed, "unhashable"},
		{"deep", strings.Repeat(`["list", [`, MaxDepth+2) + strings.Repeat("]]", MaxDepth+2), ErrMalformed, "nesting deeper"},
		{"bad base64 body", `["dict", [[["other", "type"], ["other", "page_crawled"]], [["other", "r"], ["dict", [[["other", "url"], ["other", "u"]], [["other", "status_code"], ["other", 200]], [["other", "meta"], ["dict", []]], [["other", "body"], ["bytes", "!!"]]]]]]]`, ErrMalformed, "base64"},
	} {
		_, err := JSON{}.DecodeMessage([]byte(tc.in))
		if err == nil || !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.wants) || !strings.HasPrefix(err.Error(), "codec: json: ") {
			t.Errorf("%s: err = %v, want %v mentioning %q", tc.name, err, tc.kind, tc.wants)
		}
	}
}

func TestPythonFloatRepr(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0.0", 1: "1.0", -1.5: "-1.5", 0.1: "0.1", 1e-4: "0.0001", 1e-5: "1e-05", 1.5e-7: "1.5e-07",
		1e15: "1000000000000000.0", 1e16: "1e+16", 1.2345e16: "1.2345e+16", 123456789.125: "123456789.125",
		1.5e300: "1.5e+300", 5e-324: "5e-324", math.Inf(1): "Infinity", math.Inf(-1): "-Infinity",
		1.0 / 3: "0.3333333333333333", 9007199254740992: "9007199254740992.0", math.Copysign(0, -1): "-0.0",
	} {
		if got := string(appendPyFloat(nil, f)); got != want {
			t.Errorf("repr(%v) = %s, want %s", f, got, want)
		}
	}
	if got := string(appendPyFloat(nil, math.NaN())); got != "NaN" {
		t.Errorf("repr(nan) = %s", got)
	}
}

func TestDecodedBinsAreIndependent(t *testing.T) {
	in := mustEncode(t, specRequest())
	r, err := Msgpack{}.DecodeRequest(in)
	if err != nil {
		t.Fatal(err)
	}
	fp, _ := r.Meta.Get("fingerprint")
	b := fp.([]byte)
	_ = append(b, "XXXXXXXX"...) // must reallocate, not overwrite the jid entry that follows
	b[0] = 'Z'                   // must not touch the caller's input
	if in2 := mustEncode(t, specRequest()); !bytes.Equal(in, in2) {
		t.Error("mutating a decoded value changed the input buffer")
	}
	if j, err := r.MetaJobID(); err != nil || j != 0 {
		t.Errorf("jid after append = %v, %v", j, err)
	}
	r2, _ := Msgpack{}.DecodeRequest(in)
	if fp2, _ := r2.Meta.Get("fingerprint"); fp2.([]byte)[0] != '8' {
		t.Error("decoded values are shared between decodings")
	}
}

// TestHugeLengthsDoNotAllocate: a length prefix alone never makes the decoder allocate beyond the input's size.
func TestHugeLengthsDoNotAllocate(t *testing.T) {
	for _, in := range []string{
		"dd ffffffff 00",                         // array32 of 4 G elements
		"92 c4027374 df ffffffff 00 00",          // stats map32 of 4 G entries
		"92 c4026173 dd 7fffffff 95",             // add_seeds with 2 G requests
		"92 c4026173 91 95 db ffffffff 00",       // url str32 of 4 GB
		"92 c4027063 95 a0 00 80 80 c6 ffffffff", // pc body bin32 of 4 GB
	} {
		p := unhex(t, in)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Msgpack{}.DecodeMessage(p)
		runtime.ReadMemStats(&after)
		if err == nil || !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v", in, err)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
			t.Errorf("%s: decoding allocated %d bytes", in, d)
		}
	}
}

// TestDecodedMapsAreIndependent: maps and requests of one message are cut from shared slabs; growing one must
// never overwrite another.
func TestDecodedMapsAreIndependent(t *testing.T) {
	r := specRequest()
	r.SetMetaDomain(frontier.MetaDomain{Name: "example.com"})
	b, err := Msgpack{}.EncodeMessage(&frontier.LinksExtracted{Request: r, Links: []*frontier.Request{r, r}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Msgpack{}.DecodeMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	le := m.(*frontier.LinksExtracted)
	le.Links[0].Meta.Set("added", int64(1))
	le.Links[0].SetMetaDomain(frontier.MetaDomain{Name: "other.org", Fingerprint: "ff"})
	*le.Links[0] = frontier.Request{URL: "http://replaced/"}
	for _, x := range []*frontier.Request{le.Request, le.Links[1]} {
		d, err := x.MetaDomain()
		if err != nil || d.Name != "example.com" || d.Fingerprint != "" || len(x.Meta) != 3 || x.URL != "http://example.com/" {
			t.Errorf("a neighbour changed: %+v %v %v", d, err, x.Meta)
		}
	}
}

// TestConcurrentUse backs the package's concurrency claim (run with -race in CI).
func TestConcurrentUse(t *testing.T) {
	in := mustEncode(t, specRequest())
	done := make(chan error, 4)
	for range 4 {
		go func() {
			var err error
			for range 200 {
				var r *frontier.Request
				if r, err = (Msgpack{}).DecodeRequest(in); err != nil {
					break
				}
				var b []byte
				if b, err = (Msgpack{}).EncodeRequest(r); err == nil && !bytes.Equal(b, in) {
					err = errors.New("round trip differs")
				}
				if err != nil {
					break
				}
				if _, err = (JSON{}).EncodeRequest(r); err != nil {
					break
				}
			}
			done <- err
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestDecodeMessageLinksMeta: the page's request and the links of a links_extracted keep only the meta keys
// kept (and a body); every other message is decoded whole.
func TestDecodeMessageLinksMeta(t *testing.T) {
	keep := func(k []byte) bool { return string(k) == frontier.MetaKeyFingerprint }
	link := benchRequest(1)
	post := benchRequest(2)
	post.Method, post.Body = "POST", []byte("a=1")
	page := benchRequest(3)
	for _, tc := range []struct {
		name string
		msg  frontier.Message
		want func(frontier.Message) frontier.Message
	}{
		{"links_extracted", &frontier.LinksExtracted{Request: page, Links: []*frontier.Request{link, post}},
			func(m frontier.Message) frontier.Message {
				le := m.(*frontier.LinksExtracted)
				for _, l := range append([]*frontier.Request{le.Request}, le.Links...) {
					fp, _ := l.Meta.Get(frontier.MetaKeyFingerprint)
					l.Meta = frontier.Map{{Key: []byte(frontier.MetaKeyFingerprint), Value: fp}}
				}
				return m
			}},
		{"page_crawled", &frontier.PageCrawled{Response: &frontier.Response{URL: page.URL, Status: 200, Request: page}},
			func(m frontier.Message) frontier.Message { return m }},
		{"request_error", &frontier.RequestError{Request: page, Error: "DNSLookupError"},
			func(m frontier.Message) frontier.Message { return m }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Msgpack{}.EncodeMessage(tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Msgpack{}.DecodeMessageLinksMeta(b, keep)
			if err != nil {
				t.Fatal(err)
			}
			whole, err := Msgpack{}.DecodeMessage(b)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want(whole)
			gb, _ := Msgpack{}.EncodeMessage(got)
			wb, _ := Msgpack{}.EncodeMessage(want)
			if !bytes.Equal(gb, wb) {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
			if le, ok := got.(*frontier.LinksExtracted); ok {
				if string(le.Links[1].Body) != "a=1" || len(le.Request.Meta) != 1 || len(page.Meta) < 2 {
					t.Errorf("link body %q, page meta %d entries of %d; want a=1, 1 of 2 or more", le.Links[1].Body, len(le.Request.Meta), len(page.Meta))
				}
			}
		})
	}
}

// sharedDomainLinks is a links_extracted shaped like the spider's: a page and its links to its own host carry
// the same domain map, one link goes to a host whose name extends the first's.
func sharedDomainLinks() *frontier.LinksExtracted {
	mk := func(u, host string) *frontier.Request {
		r := &frontier.Request{URL: u, Method: "GET"}
		r.SetMetaDomain(frontier.MetaDomain{Netloc: host, Name: host, Scheme: "http", Fingerprint: strings.Repeat("a", 40)})
		r.SetMetaDepth(1)
		return r
	}
	le := &frontier.LinksExtracted{Request: mk("http://a.example/", "a.example"), Links: []*frontier.Request{
		mk("http://a.example/1", "a.example"), mk("http://a.example/2", "a.example"),
		mk("http://ab.example/", "ab.example"), // a longer name: the bytes differ after the shared prefix
		mk("http://a.example/3", "a.example"),
	}}
	le.Links[1].Meta.Set("extra", int64(7)) // other meta differs: the domain is still shared
	return le
}

// A links_extracted's requests with the same domain bytes share one decoded domain map; different ones do not;
// every request still decodes to what was encoded, and SetMetaDomain on one leaves the others alone.
func TestDecodeSharesDomainMaps(t *testing.T) {
	dom := func(host string) frontier.MetaDomain {
		return frontier.MetaDomain{Netloc: host, Name: host, Scheme: "http", Fingerprint: strings.Repeat("a", 40)}
	}
	in := sharedDomainLinks()
	p, err := Msgpack{}.EncodeMessage(in)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Msgpack{}.DecodeMessage(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(frontier.Message(in), m); diff != "" {
		t.Fatalf("decoded differs (-in +out):\n%s", diff)
	}
	le := m.(*frontier.LinksExtracted)
	first := func(r *frontier.Request) *frontier.Entry {
		v, _ := r.Meta.Get(frontier.MetaKeyDomain)
		return &v.(frontier.Map)[0]
	}
	if first(le.Request) != first(le.Links[0]) || first(le.Links[0]) != first(le.Links[1]) {
		t.Error("the same domain bytes were decoded twice")
	}
	if first(le.Links[1]) == first(le.Links[2]) || first(le.Links[2]) == first(le.Links[3]) {
		t.Error("different domains share a map")
	}
	le.Links[0].SetMetaDomain(dom("changed.example"))
	if got := le.Links[1].Hostname(); got != "a.example" {
		t.Errorf("SetMetaDomain on one link changed another's domain: %q", got)
	}
	if q, err := (Msgpack{}).EncodeMessage(&frontier.LinksExtracted{Request: le.Request, Links: le.Links[1:]}); err != nil {
		t.Fatal(err)
	} else if want, _ := (Msgpack{}).EncodeMessage(&frontier.LinksExtracted{Request: in.Request, Links: in.Links[1:]}); !bytes.Equal(q, want) {
		t.Error("re-encoding after the change differs")
	}
}

// A MsgpackDecoder shares domain maps across messages: a second message with the same domain bytes gets the first
// one's map, still decoding to what was encoded; the shared map holds a copy of its bytes, not the message's; and
// past maxSharedDomains the maps are dropped, not kept without bound.
func TestMsgpackDecoderSharesDomainMaps(t *testing.T) {
	in := sharedDomainLinks()
	p, err := Msgpack{}.EncodeMessage(in)
	if err != nil {
		t.Fatal(err)
	}
	dec := NewMsgpackDecoder()
	first := func(r *frontier.Request) *frontier.Entry {
		v, _ := r.Meta.Get(frontier.MetaKeyDomain)
		return &v.(frontier.Map)[0]
	}
	var prev *frontier.LinksExtracted
	for i := range 3 {
		q := bytes.Clone(p)
		m, err := dec.DecodeMessage(q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(frontier.Message(in), m); diff != "" {
			t.Fatalf("decoded differs (-in +out):\n%s", diff)
		}
		le := m.(*frontier.LinksExtracted)
		if first(le.Request) != first(le.Links[0]) || first(le.Links[1]) == first(le.Links[2]) {
			t.Error("sharing within the message broken")
		}
		if prev != nil && (first(prev.Request) != first(le.Request) || first(prev.Links[2]) != first(le.Links[2])) {
			t.Errorf("message %d: the same domain bytes as the message before were decoded again", i)
		}
		clear(q) // the shared maps must not alias a message's bytes
		if got := le.Links[2].Hostname(); got != "ab.example" {
			t.Errorf("a shared domain map reads the message's bytes: host %q after they were overwritten", got)
		}
		prev = le
	}
	if len(dec.domains) != 2 {
		t.Errorf("%d domain maps kept, want 2", len(dec.domains))
	}
	for i := range maxSharedDomains + 1 {
		r := &frontier.Request{URL: "http://x/"}
		r.SetMetaDomain(frontier.MetaDomain{Name: fmt.Sprintf("h%d.example", i)})
		b, err := Msgpack{}.EncodeMessage(&frontier.RequestError{Request: r, Error: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dec.DecodeMessage(b); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(dec.domains); n > maxSharedDomains {
		t.Errorf("%d domain maps kept, bound %d", n, maxSharedDomains)
	}
	if _, ok := Codec(Msgpack{}).(MessageDecoderMaker); !ok {
		t.Error("Msgpack is no MessageDecoderMaker")
	}
	if _, ok := NewMessageDecoder(JSON{}).(JSON); !ok {
		t.Error("NewMessageDecoder(JSON{}) is not JSON{} itself")
	}
}
