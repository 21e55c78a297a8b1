package links

import (
	"bytes"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/internal/cputime"
	"golang.org/x/net/html"
)

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestResolve(t *testing.T) {
	base := "http://Example.com/a/b/c.html?q=1#frag"
	tests := []struct{ ref, want string }{
		{"d.html", "http://example.com/a/b/d.html"},
		{"../d.html", "http://example.com/a/d.html"},
		{"../../../../d.html", "http://example.com/d.html"},
		{"./", "http://example.com/a/b/"},
		{"/x/./y/../z", "http://example.com/x/z"},
		{"//other.ORG/p", "http://other.org/p"},
		{"HTTP://Other.org:80/p", "http://other.org/p"},
		{"https://other.org:443/p", "https://other.org/p"},
		{"https://other.org:8443/p", "https://other.org:8443/p"},
		{"http://other.org:/p", "http://other.org/p"},
		{"http://other.org", "http://other.org/"},
		{"http://other.org/a/./b/../c", "http://other.org/a/c"},
		{"http://other.org./p", "http://other.org./p"},
		{"http://Bücher.example/ü?ä=1", "http://xn--bcher-kva.example/%C3%BC?%C3%A4=1"},
		{"http://0x7f.1/", "http://127.0.0.1/"},
		{"?q=a b", "http://example.com/a/b/c.html?q=a%20b"},
		{"?x=1", "http://example.com/a/b/c.html?x=1"},
		{"#top", "http://example.com/a/b/c.html?q=1"},
		{"  d.html\n", "http://example.com/a/b/d.html"},
		{"d\t.ht\nml", "http://example.com/a/b/d.html"},
		{`\x\y`, "http://example.com/x/y"},
		{"a b.html", "http://example.com/a/b/a%20b.html"},
		{"100%.html", "http://example.com/a/b/100%25.html"},
		{"http:d.html", "http://example.com/a/b/d.html"},
		{"http://user:pw@other.org/", "http://user:pw@other.org/"},
		{"https:///x", "https://x/"},
		{"http://[::1]:80/x", "http://[::1]/x"},
		{"/%2e%2e/x", "http://example.com/x"},
	}
	for _, tt := range tests {
		u, err := Resolve(mustURL(t, base), tt.ref)
		if err != nil {
			t.Errorf("Resolve(%q): %v", tt.ref, err)
			continue
		}
		if got := u.String(); got != tt.want {
			t.Errorf("Resolve(%q) = %q, want %q", tt.ref, got, tt.want)
		}
	}
}

func TestResolveRejects(t *testing.T) {
	for _, ref := range []string{"mailto:a@b.c", "javascript:void(0)", "ftp://x/y", "data:text/html,hi", "http://", "http://a b/", "http://[::1/"} {
		if u, err := Resolve(mustURL(t, "http://example.com/"), ref); err == nil {
			t.Errorf("Resolve(%q) = %q, want an error", ref, u)
		}
	}
	if _, err := Resolve(nil, "x.html"); err == nil {
		t.Error("relative without base: no error")
	}
}

const page = `<!doctype html><html><head>
<title>t</title>
<link rel="canonical" href="/canon">
<link rel="alternate" hreflang="de" href="http://de.example.com/">
<link rel="stylesheet" href="/style.css">
</head><body>
<a href="one.html">One <b>bold</b>
  text</a>
<a href="one.html">duplicate</a>
<a href="mailto:x@y.z">mail</a>
<a href="javascript:go()">js</a>
<a href="/two" rel="nofollow noopener">Two</a>
<a name="anchor-only">no href</a>
<map><area href="/area" alt=""></map>
<iframe src="frame.html"></iframe>
<frameset><frame src="/f2"></frameset>
<a href="HTTP://Other.Example.com:80/x/../y#f">Other</a>
<a href=unquoted>u</a>
<a href="http://x.test/<a href=broken">b</a>
</body></html>`

func TestExtract(t *testing.T) {
	got := Extract(mustURL(t, "http://example.com/dir/page.html"), []byte(page), Options{})
	want := []frontier.Link{
		{URL: "http://example.com/canon", Rel: "canonical", Tag: "link"},
		{URL: "http://de.example.com/", Rel: "alternate", Tag: "link"},
		{URL: "http://example.com/dir/one.html", Text: "One bold text", Tag: "a"},
		{URL: "http://example.com/two", Text: "Two", Rel: "nofollow noopener", NoFollow: true, Tag: "a"},
		{URL: "http://example.com/area", Tag: "area"},
		{URL: "http://example.com/dir/frame.html", Tag: "iframe"},
		{URL: "http://example.com/f2", Tag: "frame"},
		{URL: "http://other.example.com/y", Text: "Other", Tag: "a"},
		{URL: "http://example.com/dir/unquoted", Text: "u", Tag: "a"},
		{URL: "http://x.test/%3Ca%20href=broken", Text: "b", Tag: "a"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Extract (-want +got):\n%s", d)
	}
}

func TestExtractBase(t *testing.T) {
	body := `<a href="before.html">b</a><base href="http://cdn.example.org/root/"><base href="/ignored/"><a href="after.html">a</a>`
	got := Extract(mustURL(t, "http://example.com/dir/page.html"), []byte(body), Options{})
	var urls []string
	for _, l := range got {
		urls = append(urls, l.URL)
	}
	want := []string{"http://cdn.example.org/root/before.html", "http://cdn.example.org/root/after.html"}
	if d := cmp.Diff(want, urls); d != "" {
		t.Errorf("base (-want +got):\n%s", d)
	}
	// A relative base resolves against the page.
	got = Extract(mustURL(t, "http://example.com/dir/page.html"), []byte(`<base href="../up/"><a href="x">x</a>`), Options{})
	if len(got) != 1 || got[0].URL != "http://example.com/up/x" {
		t.Errorf("relative base: %+v", got)
	}
}

func TestExtractMetaRobots(t *testing.T) {
	for _, content := range []string{"nofollow", "noindex, nofollow", "NONE", "noindex,NoFollow"} {
		got := Extract(mustURL(t, "http://example.com/"), []byte(`<meta name="Robots" content="`+content+`"><a href="/x">x</a>`), Options{})
		if len(got) != 1 || !got[0].NoFollow {
			t.Errorf("meta robots %q: %+v", content, got)
		}
	}
	got := Extract(mustURL(t, "http://example.com/"), []byte(`<meta name="robots" content="noindex"><a href="/x">x</a>`), Options{})
	if len(got) != 1 || got[0].NoFollow {
		t.Errorf("meta robots noindex: %+v", got)
	}
}

func TestExtractLimits(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		b.WriteString(`<a href="/p`)
		b.WriteString(strings.Repeat("x", i))
		b.WriteString(`">` + strings.Repeat("long text ", 100) + `</a>`)
	}
	got := Extract(mustURL(t, "http://example.com/"), []byte(b.String()), Options{MaxLinks: 10, MaxTextBytes: 20})
	if len(got) != 10 {
		t.Fatalf("got %d links, want 10", len(got))
	}
	for _, l := range got {
		if len(l.Text) > 20 {
			t.Errorf("text %q longer than 20", l.Text)
		}
	}
}

func FuzzExtractLinks(f *testing.F) {
	f.Add("http://example.com/dir/page.html", []byte(page))
	f.Add("https://a.test:8443/", []byte(`<base href="//b.test/x/"><a href="../y?q#f">y</a><iframe src="\\z">`))
	f.Add("http://a.test/", []byte(`<a href="%zz%">`+"\x00\xff"+`<area href="http://[::1]:80/../">`))
	f.Fuzz(func(t *testing.T, pageURL string, body []byte) {
		u, err := url.Parse(pageURL)
		if err != nil || !u.IsAbs() {
			return
		}
		for _, l := range Extract(u, body, Options{MaxLinks: 1000}) {
			v, err := url.Parse(l.URL)
			if err != nil {
				t.Fatalf("extracted %q does not parse: %v", l.URL, err)
			}
			if v.Scheme != "http" && v.Scheme != "https" || v.Host == "" || v.Fragment != "" {
				t.Fatalf("extracted %q: not an absolute http(s) URL without fragment", l.URL)
			}
			// Normalising again changes nothing.
			w, err := Normalize(v)
			if err != nil || w.String() != l.URL {
				t.Fatalf("Normalize(%q) = %v, %v: not idempotent", l.URL, w, err)
			}
		}
	})
}

func BenchmarkExtract(b *testing.B) {
	var s strings.Builder
	s.WriteString("<html><head><title>bench</title></head><body>")
	for i := range 50 {
		s.WriteString(`<p>Some padding text for the page, as a real page has.</p><a href="/page/`)
		s.WriteString(strings.Repeat("a", i%7))
		s.WriteString(`.html">link text</a>`)
	}
	s.WriteString("</body></html>")
	body := []byte(s.String())
	u := mustURL(b, "http://example.com/dir/page.html")
	b.SetBytes(int64(len(body)))
	n := 0
	c0 := cputime.Process()
	for b.Loop() {
		Extract(u, body, Options{})
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(float64((cputime.Process()-c0).Microseconds())/float64(n), "CPU-µs/page")
}

// FuzzFastResolve holds the fast path of Extract to the full URL Standard resolution.
func FuzzFastResolve(f *testing.F) {
	f.Add("http://example.com/a/b/c.html?q=1", "../d.html?x=1#f")
	f.Add("https://xn--bcher-kva.example:8443/", "./a/./b/../c;p?q=a&b=c")
	f.Add("http://example.com/a/", "?")
	f.Add("http://example.com/a/", "a:b/c")
	f.Fuzz(func(t *testing.T, base, ref string) {
		b, err := resolve("", base)
		if err != nil {
			return
		}
		fast, ok := fastResolve(b, ref)
		if !ok {
			return
		}
		slow, err := resolve(b.String(), ref)
		if err != nil {
			t.Fatalf("fast path resolved %q against %q to %q; the full path fails: %v", ref, b, fast, err)
		}
		if fast.String() != slow.String() {
			t.Fatalf("resolve %q against %q: fast %q, full %q", ref, b, fast, slow)
		}
	})
}

func TestFastResolveAgrees(t *testing.T) {
	bases := []string{"http://example.com/a/b/c.html?q=1", "https://xn--bcher-kva.example:8443/", "http://127.0.0.1:8080/x/"}
	refs := []string{"d.html", "../d.html", "../../../../d.html", "./", "/x/./y/../z", "?x=1", "#top", "a/b;c?d=e&f=g",
		"/page/aaa.html", "p%41ge", "?", "x?y#z", "/", ".", "..", "a+b", "(x)", "*", "$", "!"}
	for _, b := range bases {
		bu, err := resolve("", b)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range refs {
			fast, ok := fastResolve(bu, r)
			if !ok {
				t.Errorf("fast path refused %q", r)
				continue
			}
			slow, err := resolve(bu.String(), r)
			if err != nil || fast.String() != slow.String() {
				t.Errorf("%q against %q: fast %q, full %v %v", r, b, fast, slow, err)
			}
		}
	}
	for _, r := range []string{"//h/x", "http://x/", "a b", `a\\b`, "%zz", "/%2e%2e/x", "a|b", "é", "mailto:x"} {
		if _, ok := fastResolve(&url.URL{Scheme: "http", Host: "h", Path: "/"}, r); ok {
			t.Errorf("fast path took %q", r)
		}
	}
}

// FuzzRawTag holds rawTag to the tokenizer's TagName: for every start, self-closing and end tag, rawTag of
// the raw token is the lower-cased name when it is one Extract looks at, and "" otherwise.
func FuzzRawTag(f *testing.F) {
	f.Add([]byte(page))
	f.Add([]byte("<A HREF=x>t</A ><aReA/><LiNk\trel=canonical><i\x00frame><iframe/><BASE\fhref=y></a\x00><meta\nname=robots><abbr></abbr><a"))
	f.Add([]byte("<script></a><a href=z></script><textarea><a></TEXTAREA><frame></frameset><title><a></title>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		z := html.NewTokenizer(bytes.NewReader(body))
		for {
			tt := z.Next()
			if tt == html.ErrorToken {
				return
			}
			from := 1
			switch tt {
			case html.EndTagToken:
				from = 2
			case html.StartTagToken, html.SelfClosingTagToken:
			default:
				continue
			}
			got := rawTag(z.Raw(), from)
			name, _ := z.TagName()
			want := string(name)
			switch want {
			case "a", "area", "link", "frame", "iframe", "base", "meta":
			default:
				want = ""
			}
			if got != want {
				t.Fatalf("raw %q: rawTag %q, TagName %q", z.Raw(), got, name)
			}
		}
	})
}

// BenchmarkExtractWebPage extracts a small page shaped like the loopback web's (frontiertest/web with
// UseIPs): links in the forms its pages write them, a third absolute (same host and other hosts, some with a
// fragment), the rest relative.
func BenchmarkExtractWebPage(b *testing.B) {
	var s strings.Builder
	s.WriteString("<!DOCTYPE html>\n<html><head><title>page 17 of host 3</title></head><body>\n<h1>page 17</h1>\n")
	for i := range 12 {
		var href string
		switch i % 6 {
		case 0:
			href = "http://127.0.0.4:40123/d1/page" + strconv.Itoa(i) + ".html"
		case 1:
			href = "http://127.0.0.9:40131/d2/page" + strconv.Itoa(i) + ".html#from-host3.test"
		case 2:
			href = "../d3/page" + strconv.Itoa(i) + ".html"
		case 3:
			href = "/d0/page" + strconv.Itoa(i) + ".html#top"
		case 4:
			href = "./page" + strconv.Itoa(i) + ".html"
		default:
			href = "/d2/page" + strconv.Itoa(i) + ".html"
		}
		s.WriteString(`<p><a href="` + href + `">next: page ` + strconv.Itoa(i) + "</a></p>\n")
	}
	s.WriteString("<p>Some text of the page, as the web writes it.</p>\n</body></html>\n")
	body := []byte(s.String())
	u := mustURL(b, "http://127.0.0.4:40123/d1/page17.html")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	n := 0
	c0 := cputime.Process()
	for b.Loop() {
		Extract(u, body, Options{})
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(float64((cputime.Process()-c0).Microseconds())/float64(n), "CPU-µs/page")
}
