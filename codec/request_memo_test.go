package codec

import (
	"bytes"
	"testing"

	frontier "github.com/frontiercrawl/frontier"
)

// requestOf is the request a message carries for RequestMemo (nil when it carries none or several).
func requestOf(m frontier.Message) *frontier.Request {
	switch m := m.(type) {
	case *frontier.PageCrawled:
		if m.Response != nil {
			return m.Response.Request
		}
	case *frontier.LinksExtracted:
		return m.Request
	case *frontier.RequestError:
		return m.Request
	}
	return nil
}

// memoReport is the messages a spider's report of r makes: page_crawled, links_extracted of two link sets,
// request_error, in the given order of kinds ("p", "l", "e").
func memoReport(r *frontier.Request, order string) []frontier.Message {
	links := func(n int) []*frontier.Request {
		var ls []*frontier.Request
		for i := range n {
			l := &frontier.Request{URL: "http://l.example/" + string(rune('a'+i)), Method: "GET"}
			l.SetMetaFingerprint(frontier.Fingerprint("0123456789abcdefghij"))
			ls = append(ls, l)
		}
		return ls
	}
	var ms []frontier.Message
	for i, k := range order {
		switch k {
		case 'p':
			ms = append(ms, &frontier.PageCrawled{Response: &frontier.Response{URL: r.URL, Status: 200,
				Headers: frontier.Headers{{Name: []byte("Content-Type"), Values: [][]byte{[]byte("text/html")}}}, Request: r}})
		case 'l':
			ms = append(ms, &frontier.LinksExtracted{Request: r, Links: links(i + 1)})
		case 'e':
			ms = append(ms, &frontier.RequestError{Request: r, Error: "DNSLookupError"})
		}
	}
	return ms
}

// TestRequestMemoFrontera checks that the bytes AppendMessageMemo reuses equal a fresh encode: each Frontera
// vector's message, and a report of its request (page_crawled, links_extracted, request_error in several
// orders, so that each kind writes the memo first once), encoded through one memo into one buffer, give
// AppendMessage's bytes message for message, and the vector's own message Frontera's.
func TestRequestMemoFrontera(t *testing.T) {
	n := 0
	for _, v := range loadVectors(t) {
		if v.msg == nil || v.Lossy {
			continue
		}
		r := requestOf(v.msg)
		memo := &RequestMemo{Request: r}
		got, err := AppendMessageMemo(nil, v.msg, memo)
		if err != nil {
			t.Errorf("%s: %v", v.Name, err)
			continue
		}
		if !bytes.Equal(got, v.mp) {
			t.Errorf("%s: memo bytes differ from Frontera's: %s", v.Name, firstDiff(got, v.mp))
		}
		if r == nil {
			continue
		}
		if again, _ := AppendMessageMemo(nil, v.msg, memo); !bytes.Equal(again, v.mp) {
			t.Errorf("%s: bytes copied from the memo differ from Frontera's: %s", v.Name, firstDiff(again, v.mp))
		}
		for _, order := range []string{"plle", "lpel", "epll", "llpe"} {
			memo := &RequestMemo{Request: r}
			buf := make([]byte, 0, 64) // small: the buffer grows while the memo points into it
			for i, m := range memoReport(r, order) {
				want, err := AppendMessage(nil, m)
				if err != nil {
					t.Fatalf("%s: %v", v.Name, err)
				}
				start := len(buf)
				if buf, err = AppendMessageMemo(buf, m, memo); err != nil {
					t.Fatalf("%s: %v", v.Name, err)
				}
				if got := buf[start:]; !bytes.Equal(got, want) {
					t.Errorf("%s: order %s, message %d (%s): memo bytes differ from a fresh encode: %s", v.Name, order, i, m.Name(), firstDiff(got, want))
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no vector carries a request")
	}
	t.Logf("%d messages byte-equal through a memo", n)
}

// TestRequestMemoFailure checks that a message whose encoding fails leaves the memo unset, so the bytes it
// wrote (which the caller drops, and may write over) are never copied.
func TestRequestMemoFailure(t *testing.T) {
	r := &frontier.Request{URL: "http://a.example/", Method: "GET"}
	r.SetMetaFingerprint(frontier.Fingerprint("0123456789abcdefghij"))
	memo := &RequestMemo{Request: r}
	bad := &frontier.LinksExtracted{Request: r, Links: []*frontier.Request{nil}} // fails after the request
	buf := make([]byte, 0, 4096)
	if _, err := AppendMessageMemo(buf, bad, memo); err == nil {
		t.Fatal("a nil link encoded")
	}
	if memo.full != nil || memo.meta != nil {
		t.Fatal("a failed encoding set the memo")
	}
	clear(buf[:cap(buf)]) // the caller writes over what the failed message wrote
	ok := &frontier.LinksExtracted{Request: r, Links: []*frontier.Request{{URL: "http://a.example/x"}}}
	want, _ := AppendMessage(nil, ok)
	for range 2 {
		got, err := AppendMessageMemo(buf[:0], ok, memo)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("after a failure: %s", firstDiff(got, want))
		}
		buf = got[len(got):]
	}
}

// TestRequestMemoOtherRequest checks that only the memo's very request is copied: an equal request at another
// address, changed after, is encoded as it is.
func TestRequestMemoOtherRequest(t *testing.T) {
	r := &frontier.Request{URL: "http://a.example/", Method: "GET"}
	r.SetMetaFingerprint(frontier.Fingerprint("0123456789abcdefghij"))
	memo := &RequestMemo{Request: r}
	if _, err := AppendMessageMemo(nil, &frontier.RequestError{Request: r, Error: "x"}, memo); err != nil {
		t.Fatal(err)
	}
	other := &frontier.Request{URL: r.URL, Method: "GET", Meta: r.Meta.Clone()}
	other.Meta.Set("depth", int64(2))
	m := &frontier.LinksExtracted{Request: other}
	got, _ := AppendMessageMemo(nil, m, memo)
	want, _ := AppendMessage(nil, m)
	if !bytes.Equal(got, want) {
		t.Fatalf("another request: %s", firstDiff(got, want))
	}
}

// BenchmarkRequestMemo encodes a page's report as the spider does (page_crawled, then one links_extracted per
// link host, here 3 of 4 links each), into one buffer, with the page's request encoded once ("memo") or in
// each message ("fresh"); the request's meta is a crawl's (fingerprint, 7-field domain map, depth, score, job
// id, discovery time, digest). ns/op is per report.
//
//	go test -run '^$' -bench BenchmarkRequestMemo -count 3 ./codec/
func BenchmarkRequestMemo(b *testing.B) {
	r := &frontier.Request{URL: "http://host17.example:8080/d1/page17.html", Method: "GET"}
	r.SetMetaFingerprint(frontier.Fingerprint("01234567890123456789"))
	r.SetMetaDomain(frontier.MetaDomain{Name: "host17.example", Netloc: "host17.example:8080", Scheme: "http",
		SLD: "host17", TLD: "example", Subdomain: "", Fingerprint: "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"})
	r.Meta.Set(frontier.MetaKeyDepth, int64(3))
	r.Meta.Set(frontier.MetaKeyScore, 0.25)
	r.Meta.Set("jid", int64(7))
	r.Meta.Set("frontier_discovered", int64(1_795_000_000_123))
	r.Meta.Set("frontier_digest", []byte("da39a3ee5e6b4b0d"))
	msgs := []frontier.Message{memoReport(r, "p")[0]}
	for h := range 3 {
		le := memoReport(r, "xxxl")[0].(*frontier.LinksExtracted)
		for _, l := range le.Links {
			l.URL += string(rune('0' + h))
		}
		msgs = append(msgs, le)
	}
	for _, mode := range []string{"memo", "fresh"} {
		b.Run(mode, func(b *testing.B) {
			buf := make([]byte, 0, 8192)
			b.ReportAllocs()
			for b.Loop() {
				var memo *RequestMemo
				if mode == "memo" {
					memo = &RequestMemo{Request: r}
				}
				out := buf[:0]
				for _, m := range msgs {
					var err error
					if out, err = AppendMessageMemo(out, m, memo); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
