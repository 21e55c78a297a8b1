package spider

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/identity"
	"github.com/frontiercrawl/frontier/internal/cputime"
	"github.com/frontiercrawl/frontier/spider/links"
)

// webPage is a small page shaped like the loopback web's (frontiertest/web with UseIPs), 12 links.
func webPage() []byte {
	var s strings.Builder
	s.WriteString("<!DOCTYPE html>\n<html><head><title>page 17 of host 3</title></head><body>\n<h1>page 17</h1>\n")
	for i := range 12 {
		var href string
		switch i % 4 {
		case 0:
			href = "http://127.0.0.4:40123/d1/page" + strconv.Itoa(i) + ".html"
		case 1:
			href = "http://127.0.0.9:40131/d2/page" + strconv.Itoa(i) + ".html#from-host3.test"
		case 2:
			href = "../d3/page" + strconv.Itoa(i) + ".html"
		default:
			href = "/d0/page" + strconv.Itoa(i) + ".html#top"
		}
		s.WriteString(`<p><a href="` + href + `">next: page ` + strconv.Itoa(i) + "</a></p>\n")
	}
	s.WriteString("</body></html>\n")
	return []byte(s.String())
}

// reportSpider is a spider for calling reportPage directly, with the msgpack codec and id.
func reportSpider(tb testing.TB, id Identity) *Spider {
	cfg := DefaultConfig()
	cfg.StateDir = ""
	c := &fakeCodec{}
	s, err := New(cfg, Deps{Feed: newFeed().consumer(), Log: newLog(c), Codec: codec.Msgpack{}, Identity: id})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// fixClock gives the spiders one fixed clock, so that the links they report carry the same discovery time.
func fixClock(ss ...*Spider) {
	t := time.Unix(1_795_000_000, 0)
	for _, s := range ss {
		s.now = func() time.Time { return t }
	}
}

// reportOnce reports a fetched web page and returns the messages' bytes.
func reportOnce(s *Spider, req *frontier.Request, body []byte) [][]byte {
	f := &Fetched{Request: req, URL: req.URL, Status: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: body, HTML: true}
	it := &item{entry: s.tracker.add(bus.Message{}), req: req}
	s.reportPage(context.Background(), it, f)
	o := <-s.reports
	s.tracker.done(o.entry)
	var out [][]byte
	for _, m := range o.msgs {
		out = append(out, m.Value)
	}
	return out
}

// hiddenAppender is an Identity without AppendFingerprint: reportPage fingerprints with Fingerprint.
type hiddenAppender struct{ Identity }

// TestReportLinksMeta checks the link requests reportPage publishes: the same bytes whether the identity
// fingerprints into a buffer or not, and each link's meta what Map.Set of its three keys makes.
func TestReportLinksMeta(t *testing.T) {
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	req := &frontier.Request{URL: "http://127.0.0.4:40123/d1/page17.html", Method: "GET"}
	req.SetMetaFingerprint(frontier.Fingerprint("01234567890123456789"))
	body := webPage()
	a, b := reportSpider(t, id), reportSpider(t, hiddenAppender{id})
	fixClock(a, b) // the same discovery time in both
	got, want := reportOnce(a, req, body), reportOnce(b, req, body)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("messages differ with AppendFingerprint (-without +with):\n%s", d)
	}
	links := 0
	for _, v := range got {
		m, err := codec.Msgpack{}.DecodeMessage(v)
		if err != nil {
			t.Fatal(err)
		}
		le, ok := m.(*frontier.LinksExtracted)
		if !ok {
			continue
		}
		for _, l := range le.Links {
			links++
			fp, err := id.Fingerprint(l.URL)
			if err != nil {
				t.Fatal(err)
			}
			u, _ := url.Parse(l.URL)
			var old frontier.Request
			old.Meta = make(frontier.Map, 0, 3)
			old.SetMetaFingerprint(fp)
			var tmp frontier.Request
			tmp.SetMetaDomain(id.Domain(u))
			dom, _ := tmp.Meta.Get(frontier.MetaKeyDomain)
			old.Meta.Set(frontier.MetaKeyDomain, dom)
			disc, _ := l.Meta.Get(MetaKeyDiscovered)
			old.Meta.Set(MetaKeyDiscovered, disc)
			ob, err := codec.Msgpack{}.EncodeRequest(&frontier.Request{URL: l.URL, Method: "GET", Meta: old.Meta})
			if err != nil {
				t.Fatal(err)
			}
			nb, _ := codec.Msgpack{}.EncodeRequest(&frontier.Request{URL: l.URL, Method: "GET", Meta: l.Meta})
			if !bytes.Equal(ob, nb) {
				t.Errorf("link %s: meta %v, want %v", l.URL, l.Meta, old.Meta)
			}
		}
	}
	if links != 12 {
		t.Errorf("%d links published, want 12", links)
	}
}

// BenchmarkReportPage reports a small fetched page (12 links: extraction, the page_crawled and
// links_extracted messages, msgpack) with the identity package's sha1 Identifier, as the standalone crawl does.
func BenchmarkReportPage(b *testing.B) {
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		b.Fatal(err)
	}
	s := reportSpider(b, id)
	req := &frontier.Request{URL: "http://127.0.0.4:40123/d1/page17.html", Method: "GET"}
	req.SetMetaFingerprint(frontier.Fingerprint("01234567890123456789"))
	body := webPage()
	b.ReportAllocs()
	n := 0
	c0 := cputime.Process()
	for b.Loop() {
		reportOnce(s, req, body)
		n++
	}
	b.ReportMetric(float64((cputime.Process()-c0).Microseconds())/float64(n), "CPU-µs/page")
}

// BenchmarkReportPageLinks is BenchmarkReportPage with the links extracted already (as the fetch does while
// a body streams in): what reportPage costs beyond parsing, per page of 12 links.
func BenchmarkReportPageLinks(b *testing.B) {
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		b.Fatal(err)
	}
	s := reportSpider(b, id)
	req := &frontier.Request{URL: "http://127.0.0.4:40123/d1/page17.html", Method: "GET"}
	req.SetMetaFingerprint(frontier.Fingerprint("01234567890123456789"))
	u, _ := url.Parse(req.URL)
	ls := links.Extract(u, webPage(), links.Options{})
	hdr := http.Header{"Content-Type": {"text/html"}, "Content-Length": {"1234"}, "Date": {"Fri, 27 Nov 2026 23:40:00 GMT"}}
	b.ReportAllocs()
	n := 0
	c0 := cputime.Process()
	for b.Loop() {
		f := &Fetched{Request: req, URL: req.URL, Status: 200, Header: hdr, HTML: true, Links: ls, linksDone: true, digestHex: "da39a3ee5e6b4b0d3255bfef95601890afd80709"}
		it := &item{entry: s.tracker.add(bus.Message{}), req: req}
		s.reportPage(context.Background(), it, f)
		o := <-s.reports
		s.tracker.done(o.entry)
		n++
	}
	b.ReportMetric(float64((cputime.Process()-c0).Microseconds())/float64(n), "CPU-µs/page")
}

// TestToHeaders checks the carved header lists against a plain construction: sorted names, values in order.
func TestToHeaders(t *testing.T) {
	h := http.Header{"Content-Type": {"text/html"}, "Set-Cookie": {"a=1", "", "b=2"}, "Empty": {}, "Date": {"Fri, 27 Nov 2026"}}
	want := frontier.Headers{
		{Name: []byte("Content-Type"), Values: [][]byte{[]byte("text/html")}},
		{Name: []byte("Date"), Values: [][]byte{[]byte("Fri, 27 Nov 2026")}},
		{Name: []byte("Empty"), Values: [][]byte{}},
		{Name: []byte("Set-Cookie"), Values: [][]byte{[]byte("a=1"), []byte(""), []byte("b=2")}},
	}
	got := toHeaders(h)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("toHeaders (-want +got):\n%s", d)
	}
	wb, _ := codec.Msgpack{}.EncodeMessage(&frontier.PageCrawled{Response: &frontier.Response{URL: "http://a/", Status: 200, Headers: want, Request: &frontier.Request{URL: "http://a/"}}})
	gb, _ := codec.Msgpack{}.EncodeMessage(&frontier.PageCrawled{Response: &frontier.Response{URL: "http://a/", Status: 200, Headers: got, Request: &frontier.Request{URL: "http://a/"}}})
	if !bytes.Equal(wb, gb) {
		t.Error("encoded headers differ")
	}
	got[0].Values[0] = append(got[0].Values[0], 'x') // carved with 3-index slices: the next value is untouched
	if string(got[1].Name) != "Date" {
		t.Errorf("an append to one value reached the next: %q", got[1].Name)
	}
}

// appendingCodec is msgpack behind a wrapper, as the standalone's counting codec is: reportPage finds its
// AppendMessage through MessageAppender.
type appendingCodec struct {
	codec.Msgpack
	calls *int
}

func (c appendingCodec) AppendMessage(dst []byte, m frontier.Message) ([]byte, error) {
	*c.calls++
	return codec.AppendMessage(dst, m)
}

// TestReportAppender checks that a codec wrapping msgpack with a MessageAppender is used to append and
// gives the same messages as msgpack itself.
func TestReportAppender(t *testing.T) {
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	req := &frontier.Request{URL: "http://127.0.0.4:40123/d1/page17.html", Method: "GET"}
	req.SetMetaFingerprint(frontier.Fingerprint("01234567890123456789"))
	body := webPage()
	a, b := reportSpider(t, id), reportSpider(t, id)
	var calls int
	b.deps.Codec = appendingCodec{calls: &calls}
	fixClock(a, b)
	want, got := reportOnce(a, req, body), reportOnce(b, req, body)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("messages differ through MessageAppender (-msgpack +appender):\n%s", d)
	}
	if calls != len(got) {
		t.Errorf("AppendMessage called %d times for %d messages", calls, len(got))
	}
}

// plainAppender is codec.Msgpack seen through MessageAppender only: the spider encodes each message whole
// (codec.AppendMessage), without sharing the page's request encoding between its messages.
type plainAppender struct{ codec.Msgpack }

func (plainAppender) AppendMessage(dst []byte, m frontier.Message) ([]byte, error) {
	return codec.AppendMessage(dst, m)
}

// TestReportRequestMemo checks that the messages of a report whose page request is encoded once
// (codec.RequestMemo: page_crawled's meta, the first links_extracted's request, copied into the others) are
// the bytes of each message encoded afresh: a page with links to three hosts, a redirect (a 3xx with its
// target as a link) and a page reached through a redirect chain of two hosts.
func TestReportRequestMemo(t *testing.T) {
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	memo, plain := reportSpider(t, id), reportSpider(t, id)
	plain.deps.Codec = plainAppender{}
	fixClock(memo, plain)
	req := &frontier.Request{URL: "http://127.0.0.4:40123/d1/page17.html", Method: "GET"}
	req.SetMetaFingerprint(frontier.Fingerprint("01234567890123456789"))
	req.SetMetaDomain(id.Domain(&url.URL{Scheme: "http", Host: "127.0.0.4:40123"}))
	req.Meta.Set(frontier.MetaKeyDepth, int64(3))
	report := func(s *Spider, f *Fetched) [][]byte {
		it := &item{entry: s.tracker.add(bus.Message{}), req: req}
		s.reportPage(context.Background(), it, f)
		o := <-s.reports
		s.tracker.done(o.entry)
		var out [][]byte
		for _, m := range o.msgs {
			out = append(out, m.Value)
		}
		return out
	}
	body := webPage()
	for _, tc := range []struct {
		name string
		f    func() *Fetched
		min  int // messages at least
	}{
		{"links", func() *Fetched {
			return &Fetched{Request: req, URL: req.URL, Status: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: body, HTML: true}
		}, 3},
		{"redirect", func() *Fetched {
			return &Fetched{Request: req, URL: req.URL, Status: 301, Header: http.Header{"Location": {"http://127.0.0.9:40131/moved"}}, Location: "http://127.0.0.9:40131/moved"}
		}, 2},
		{"chain", func() *Fetched {
			return &Fetched{Request: req, URL: "http://127.0.0.9:40131/final.html", Status: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: body, HTML: true,
				Hops: []Hop{{URL: req.URL, Status: 302}, {URL: "http://127.0.0.7:40127/hop", Status: 301}}}
		}, 5},
	} {
		got, want := report(memo, tc.f()), report(plain, tc.f())
		if len(got) < tc.min {
			t.Errorf("%s: %d messages, want at least %d", tc.name, len(got), tc.min)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: messages differ with the page's request encoded once (-fresh +memo):\n%s", tc.name, d)
		}
		for i, v := range got {
			if _, err := (codec.Msgpack{}).DecodeMessage(v); err != nil {
				t.Errorf("%s: message %d: %v", tc.name, i, err)
			}
		}
	}
}

// BenchmarkReportRequestMemo is BenchmarkReportPageLinks with a feed request shaped like a crawl's (fingerprint,
// domain map, depth, score, job id, discovery time): "memo" encodes the page's request once for its messages
// (codec.RequestMemo), "fresh" encodes it in each (the codec seen as a plain MessageAppender), so the two
// compare in one binary. ns/link is the report's CPU per link (12 links to 2 hosts).
//
//	go test -run '^$' -bench BenchmarkReportRequestMemo -benchtime 20000x -count 3 ./spider/
func BenchmarkReportRequestMemo(b *testing.B) {
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		b.Fatal(err)
	}
	req := &frontier.Request{URL: "http://127.0.0.4:40123/d1/page17.html", Method: "GET"}
	req.SetMetaFingerprint(frontier.Fingerprint("01234567890123456789"))
	req.SetMetaDomain(id.Domain(&url.URL{Scheme: "http", Host: "127.0.0.4:40123"}))
	req.Meta.Set(frontier.MetaKeyDepth, int64(3))
	req.Meta.Set(frontier.MetaKeyScore, 0.25)
	req.Meta.Set("jid", int64(7))
	req.Meta.Set(MetaKeyDiscovered, int64(1_795_000_000_123))
	u, _ := url.Parse(req.URL)
	ls := links.Extract(u, webPage(), links.Options{})
	hdr := http.Header{"Content-Type": {"text/html"}, "Content-Length": {"1234"}, "Date": {"Fri, 27 Nov 2026 23:40:00 GMT"}}
	for _, mode := range []string{"memo", "fresh"} {
		b.Run(mode, func(b *testing.B) {
			s := reportSpider(b, id)
			if mode == "fresh" {
				s.deps.Codec = plainAppender{}
			}
			b.ReportAllocs()
			n := 0
			c0 := cputime.Process()
			for b.Loop() {
				f := &Fetched{Request: req, URL: req.URL, Status: 200, Header: hdr, HTML: true, Links: ls, linksDone: true, digestHex: "da39a3ee5e6b4b0d"}
				it := &item{entry: s.tracker.add(bus.Message{}), req: req}
				s.reportPage(context.Background(), it, f)
				o := <-s.reports
				s.tracker.done(o.entry)
				n++
			}
			b.ReportMetric(float64((cputime.Process()-c0).Nanoseconds())/float64(n*len(ls)), "CPU-ns/link")
		})
	}
}
