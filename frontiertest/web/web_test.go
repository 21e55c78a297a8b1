package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"golang.org/x/net/html"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func smallConfig() Config {
	cfg := DefaultConfig()
	cfg.Hosts = 6
	cfg.PagesPerHost = 12
	cfg.SlowDelay = 50 * time.Millisecond
	cfg.LargeBytes = 5 << 20
	return cfg
}

func get(t *testing.T, c *http.Client, u string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// extract is an independent link extractor: it parses served HTML and returns the followable and the nofollow
// targets, normalised, in document order.
func extract(t *testing.T, pageURL string, body []byte) (follow, nofollow []string) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	base := pageURL
	metaNofollow := false
	var hrefs []struct {
		ref string
		nf  bool
	}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		attr := map[string]string{}
		for _, a := range n.Attr {
			attr[a.Key] = a.Val
		}
		rels := strings.Fields(strings.ToLower(attr["rel"]))
		switch n.Data {
		case "meta":
			if strings.EqualFold(attr["name"], "robots") {
				for _, d := range strings.Split(strings.ToLower(attr["content"]), ",") {
					if d := strings.TrimSpace(d); d == "nofollow" || d == "none" {
						metaNofollow = true
					}
				}
			}
		case "base":
			if v, ok := attr["href"]; ok {
				base = v
			}
		case "a", "area":
			if v, ok := attr["href"]; ok {
				hrefs = append(hrefs, struct {
					ref string
					nf  bool
				}{v, slices.Contains(rels, "nofollow")})
			}
		case "link":
			if slices.Contains(rels, "canonical") || slices.Contains(rels, "alternate") {
				hrefs = append(hrefs, struct {
					ref string
					nf  bool
				}{attr["href"], false})
			}
		case "frame", "iframe":
			hrefs = append(hrefs, struct {
				ref string
				nf  bool
			}{attr["src"], false})
		}
	}
	for _, h := range hrefs {
		u, err := Normalize(base, h.ref)
		if err != nil {
			continue // mailto:, javascript:, ftp: ...
		}
		if h.nf || metaNofollow {
			nofollow = append(nofollow, u)
		} else if !slices.Contains(follow, u) {
			follow = append(follow, u)
		}
	}
	var nfOnly []string
	for _, u := range nofollow {
		if !slices.Contains(follow, u) && !slices.Contains(nfOnly, u) {
			nfOnly = append(nfOnly, u)
		}
	}
	return follow, nfOnly
}

// TestEveryPageAnswersAsTheGraphSays fetches every page of the site and checks its status, redirect target and
// links (parsed independently from the served HTML) against the graph.
func TestEveryPageAnswersAsTheGraphSays(t *testing.T) {
	for _, mode := range []struct{ useIPs, tls bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		t.Run(fmt.Sprintf("UseIPs=%v,TLS=%v", mode.useIPs, mode.tls), func(t *testing.T) {
			cfg := smallConfig()
			cfg.UseIPs, cfg.TLS = mode.useIPs, mode.tls
			s := Start(t, cfg)
			c := s.Client(time.Minute)
			defer c.CloseIdleConnections()
			if len(s.Pages()) < cfg.Hosts*cfg.PagesPerHost {
				t.Fatalf("%d pages, want at least %d", len(s.Pages()), cfg.Hosts*cfg.PagesPerHost)
			}
			for _, p := range s.Pages() {
				switch p.Outcome {
				case NoResponse, Refused, DNSError:
					continue // TestSpecialHosts
				}
				if p.Host == SlowHost {
					continue
				}
				resp := get(t, c, p.URL)
				body := readAll(t, resp)
				if resp.StatusCode != p.Status {
					t.Errorf("%s: status %d, graph says %d", p.URL, resp.StatusCode, p.Status)
				}
				if p.Status >= 300 && p.Status < 400 {
					loc, err := Normalize(p.URL, resp.Header.Get("Location"))
					if err != nil || loc != p.Location {
						t.Errorf("%s: Location %q → %q (%v), graph says %q", p.URL, resp.Header.Get("Location"), loc, err, p.Location)
					}
					continue
				}
				if p.HTML() == nil {
					continue
				}
				follow, nofollow := extract(t, p.URL, body)
				if diff := cmp.Diff(p.Links, follow); diff != "" {
					t.Errorf("%s: links differ (-graph +served):\n%s", p.URL, diff)
				}
				if diff := cmp.Diff(p.Nofollow, nofollow); diff != "" {
					t.Errorf("%s: nofollow links differ (-graph +served):\n%s", p.URL, diff)
				}
				for _, l := range slices.Concat(p.Links, p.Nofollow) {
					if s.Page(l) == nil {
						t.Errorf("%s links %s, which is not a page of the graph", p.URL, l)
					}
				}
			}
		})
	}
}

func TestReachable(t *testing.T) {
	s := Start(t, smallConfig())
	all, err := s.ReachableWith(ReachOptions{IgnoreRobots: true, FollowNofollow: true}, s.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Pages() {
		if _, ok := all[p.URL]; !ok {
			t.Errorf("%s is not reachable from the home pages", p.URL)
		}
	}
	polite, err := s.Reachable(s.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	h1 := s.Hosts()[0].Origin
	h3 := s.Hosts()[2].Origin
	for u, want := range map[string]Outcome{
		h1 + "/":                               OK,
		h1 + "/private/secret.html":            RobotsDisallowed,
		h1 + "/private/open.html":              OK,
		h1 + "/cal?sessionid=42":               RobotsDisallowed,
		h1 + "/data.bak":                       RobotsDisallowed,
		h1 + "/data.bak?v=1":                   OK,
		h1 + "/r/chain/1":                      Redirect,
		h1 + "/redirect-target.html":           OK,
		h1 + "/err/503":                        HTTPError,
		h1 + "/large.html":                     Large,
		h1 + "/enc/br-target.html":             OK,
		h1 + "/frames/left.html":               OK,
		h1 + "/map/b.html":                     OK,
		h1 + "/fr/meta.html":                   OK,
		h1 + "/based/deeper/page.html":         OK,
		h3 + "/":                               RobotsDisallowed,
		s.Host(BlackholeHost).Origin + "/":     NoResponse,
		s.Host(RefusedHost).Origin + "/":       Refused,
		"http://nxdomain.test/":                DNSError,
		"http://slow.test/slow/1.html":         OK,
		"http://www.host1.test/p/3.html":       OK,
		"http://blog.host1.test/p/2.html":      OK,
		"http://xn--bcher-kva.test/seite.html": OK,
	} {
		if got := polite[u]; got != want {
			t.Errorf("Reachable[%s] = %q, want %q", u, got, want)
		}
	}
	for u, o := range polite {
		if strings.HasPrefix(u, h3+"/") && o != RobotsDisallowed {
			t.Errorf("Reachable[%s] = %q, but host3's robots.txt answers 503", u, o)
		}
	}
	for _, u := range []string{h1 + "/nf/only.html", h1 + "/nf/meta-only.html", h1 + PDFTrapPath, h1 + "/static/style.css"} {
		if o, ok := polite[u]; ok {
			t.Errorf("Reachable has %s (%s); a polite crawler never learns of it", u, o)
		}
	}
	bad, err := s.ReachableWith(ReachOptions{UserAgent: BadBot + "/1.0"}, h1+"/")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Reach{h1 + "/": RobotsDisallowed}, bad); diff != "" {
		t.Errorf("bad bot reach (-want +got):\n%s", diff)
	}
	if _, err := s.Reachable("mailto:x@y"); err == nil {
		t.Error("Reachable accepted a mailto: seed")
	}
}

func TestDeterministic(t *testing.T) {
	cfg := smallConfig()
	snapshot := func(s *Site) map[string][]string {
		m := map[string][]string{}
		for _, p := range s.Pages() {
			m[p.URL] = append(slices.Clone(p.Links), string(p.HTML()))
		}
		return m
	}
	a := snapshot(Start(t, cfg))
	b := snapshot(Start(t, cfg))
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different sites:\n%s", diff)
	}
	cfg.Seed = 2
	if c := snapshot(Start(t, cfg)); cmp.Equal(a, c) {
		t.Error("seeds 1 and 2 built the same site")
	}
}

func TestVariantsServeTheSamePage(t *testing.T) {
	s := Start(t, smallConfig())
	c := s.Client(time.Minute)
	defer c.CloseIdleConnections()
	for _, tc := range []struct{ variant, page string }{
		{"http://HOST1.TEST/d1/page1.html", "http://host1.test/d1/page1.html"},
		{"http://host1.test:80/d1/page1.html", "http://host1.test/d1/page1.html"},
		{"http://host1.test/d1/./x/../page1.html#frag", "http://host1.test/d1/page1.html"},
		{"http://host1.test/%7Euser/index.html", "http://host1.test/~user/index.html"},
		{"http://host1.test/%7euser/index.html", "http://host1.test/~user/index.html"},
		{"http://host1.test/list?b=2&a=1", "http://host1.test/list?a=1&b=2"},
		{"http://host1.test", "http://host1.test/"},
	} {
		if p := s.Page(tc.variant); p == nil || p.URL != tc.page {
			t.Errorf("Page(%q) = %v, want %s", tc.variant, p, tc.page)
			continue
		}
		want := s.Page(tc.page).HTML()
		if got := readAll(t, get(t, c, tc.variant)); !bytes.Equal(got, want) {
			t.Errorf("GET %s served something else than %s", tc.variant, tc.page)
		}
	}
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ base, ref, want string }{
		{"", "HTTP://Host1.TEST:80/a/./b/../c.html?z=1&a=2#f", "http://host1.test/a/c.html?a=2&z=1"},
		{"", "https://h.test:443", "https://h.test/"},
		{"", "http://h.test:8080/%7e%41%2f%3a", "http://h.test:8080/~A%2F%3A"},
		{"http://h.test/a/b.html", "../c.html", "http://h.test/c.html"},
		{"http://h.test/a/b.html", "?q=1", "http://h.test/a/b.html?q=1"},
		{"http://h.test/a/b.html", "//other.test/x", "http://other.test/x"},
		{"http://h.test/a/b.html", "#top", "http://h.test/a/b.html"},
		{"", "http://h.test/a/..", "http://h.test/"},
		{"", "http://h.test/a/.", "http://h.test/a/"},
		{"", "http://BÜCHER.test/", "http://xn--bcher-kva.test/"},
		{"http://h.test/a/b.html", " \t../c.html\n ", "http://h.test/c.html"},
		{"http://h.test/a/b.html", "/x/y\n/z.html", "http://h.test/x/y/z.html"},
		{"http://h.test/a/b.html", "\\x\\y.html", "http://h.test/x/y.html"},
	} {
		got, err := Normalize(tc.base, tc.ref)
		if err != nil || got != tc.want {
			t.Errorf("Normalize(%q, %q) = %q, %v; want %q", tc.base, tc.ref, got, err, tc.want)
		}
	}
	for _, bad := range []string{"mailto:a@b", "javascript:void(0)", "ftp://h.test/", "http://", "http://h.test/%zz\x7f"} {
		if got, err := Normalize("", bad); err == nil {
			t.Errorf("Normalize(%q) = %q, want an error", bad, got)
		}
	}
}

func TestRobotsMatch(t *testing.T) {
	for _, tc := range []struct {
		agent, path string
		want        bool
	}{
		{"*", "/", true},
		{"*", "/private/", false},
		{"*", "/private/secret.html", false},
		{"*", "/private/open.html", true},
		{"*", "/private/open.html.bak", true}, // the longer Allow beats Disallow: /*.bak$
		{"*", "/cal?sessionid=42", false},
		{"*", "/x/y?a=1&sessionid=2", false},
		{"*", "/data.bak", false},
		{"*", "/data.bak?v=1", true},
		{"*", "/data.bakery", true},
		{"*", "/robots.txt", true},
		{"Mozilla/5.0 (compatible; frontier/1.0)", "/d1/page1.html", true},
		{BadBot, "/", false},
		{strings.ToLower(BadBot) + "/2.1 (+http://x)", "/d1/page1.html", false},
	} {
		if got := robotsAllowed(RobotsStandard, tc.agent, tc.path); got != tc.want {
			t.Errorf("allowed(%q, %q) = %v, want %v", tc.agent, tc.path, got, tc.want)
		}
	}
}

func TestRobotsTxt(t *testing.T) {
	cfg := smallConfig()
	cfg.CrawlDelay = 1500 * time.Millisecond
	s := Start(t, cfg)
	c := s.Client(time.Minute)
	defer c.CloseIdleConnections()
	for i, want := range []struct {
		status int
		has    string
	}{
		{200, "Disallow: /private/"},
		{200, "Crawl-delay: 1.5"},
		{503, ""},
		{404, ""},
		{200, "Allow: /private/open.html"},
	} {
		h := s.Hosts()[i]
		resp := get(t, c, h.Origin+"/robots.txt")
		body := readAll(t, resp)
		if resp.StatusCode != want.status || !bytes.Contains(body, []byte(want.has)) {
			t.Errorf("%s/robots.txt: %d %q, want %d with %q", h.Name, resp.StatusCode, body, want.status, want.has)
		}
	}
}

func TestEncodings(t *testing.T) {
	s := Start(t, smallConfig())
	c := s.Client(time.Minute)
	defer c.CloseIdleConnections()
	for _, enc := range []string{"gzip", "br"} {
		u := "http://host1.test/enc/" + enc + ".html"
		want := s.Page(u).HTML()
		resp := get(t, c, u, "Accept-Encoding", "identity;q=0.5, "+enc)
		body := readAll(t, resp)
		if got := resp.Header.Get("Content-Encoding"); got != enc {
			t.Fatalf("%s: Content-Encoding %q, want %q", u, got, enc)
		}
		var r io.Reader
		if enc == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			r = zr
		} else {
			r = brotli.NewReader(bytes.NewReader(body))
		}
		plain, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(plain, want) {
			t.Errorf("%s: decoded body differs from the page (%v)", u, err)
		}
		resp = get(t, c, u, "Accept-Encoding", enc+";q=0")
		if body := readAll(t, resp); resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, want) {
			t.Errorf("%s: refused %s but got Content-Encoding %q", u, enc, resp.Header.Get("Content-Encoding"))
		}
	}
	log := s.Host("host1.test").Requests()
	if got := log[0].Encoding; got != "gzip" {
		t.Errorf("request log: encoding %q, want gzip", got)
	}
}

func TestContentTypes(t *testing.T) {
	s := Start(t, smallConfig())
	c := s.Client(time.Minute)
	defer c.CloseIdleConnections()
	for _, tc := range []struct{ path, header, sniffed string }{
		{"/files/doc.pdf", "application/pdf", "application/pdf"},
		{"/sniff/doc", "", "application/pdf"},
		{"/sniff/page", "", "text/html; charset=utf-8"},
		{"/", "text/html; charset=utf-8", "text/html; charset=utf-8"},
	} {
		resp := get(t, c, "http://host1.test"+tc.path)
		body := readAll(t, resp)
		if got := resp.Header.Get("Content-Type"); got != tc.header {
			t.Errorf("%s: Content-Type %q, want %q", tc.path, got, tc.header)
		}
		if got := http.DetectContentType(body); got != tc.sniffed {
			t.Errorf("%s: sniffed %q, want %q", tc.path, got, tc.sniffed)
		}
	}
}

func TestLargePageIsStreamed(t *testing.T) {
	cfg := smallConfig()
	cfg.LargeBytes = 50 << 20
	s := Start(t, cfg)
	c := s.Client(30 * time.Second)
	defer c.CloseIdleConnections()
	for path, length := range map[string]int64{"/large.html": cfg.LargeBytes, "/large-chunked.html": -1} {
		resp := get(t, c, "http://host1.test"+path)
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || n != cfg.LargeBytes || resp.ContentLength != length {
			t.Fatalf("%s: read %d bytes (Content-Length %d, err %v), want %d (Content-Length %d)", path, n, resp.ContentLength, err, cfg.LargeBytes, length)
		}
	}
	// A client that stops reading early must not leave the handler behind (goleak checks at exit).
	resp := get(t, c, "http://host1.test/large.html")
	io.CopyN(io.Discard, resp.Body, 1<<20)
	resp.Body.Close()
}

func TestSpecialHosts(t *testing.T) {
	s := Start(t, smallConfig())
	c := s.Client(300 * time.Millisecond)
	defer c.CloseIdleConnections()
	do := func(u string) error {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
		resp, err := c.Do(req)
		if err == nil {
			readAll(t, resp)
		}
		return err
	}
	var dnsErr *net.DNSError
	if err := do("http://nxdomain.test/"); !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("nxdomain.test: %v, want a not-found DNS error", err)
	}
	if err := do("http://unknown.example/"); !errors.As(err, &dnsErr) {
		t.Errorf("unknown.example: %v, want a DNS error (the site never dials out)", err)
	}
	if err := do("http://refused.test/"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("refused.test: %v, want connection refused", err)
	}
	var ne net.Error
	if err := do("http://blackhole.test/"); !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("blackhole.test: %v, want a timeout", err)
	}
	if bh := s.Host(BlackholeHost); bh.Accepted() != 1 || bh.RequestCount() != 0 {
		t.Errorf("blackhole accepted %d connections and answered %d requests, want 1 and 0", bh.Accepted(), bh.RequestCount())
	}
	slow := s.Client(10 * time.Second)
	defer slow.CloseIdleConnections()
	if resp := get(t, slow, "http://slow.test/slow/1.html"); resp.StatusCode != 200 {
		t.Errorf("slow.test: status %d", resp.StatusCode)
	} else {
		readAll(t, resp)
	}
	if r := s.Host(SlowHost).Requests(); len(r) != 1 || r[0].End.Sub(r[0].Start) < s.Config().SlowDelay {
		t.Errorf("slow.test log %+v: want one request that took at least %v", r, s.Config().SlowDelay)
	}
}

func TestMeasurement(t *testing.T) {
	s := Start(t, smallConfig())
	h := s.Host("host4.test")
	const conns = 3
	var wg sync.WaitGroup
	tr := s.Transport()
	defer tr.CloseIdleConnections()
	tr.MaxConnsPerHost = conns
	c := &http.Client{Transport: tr}
	// Hold conns requests in flight at once against the slow path: a barrier at the server side is not
	// available, so keep the connections busy with the large page.
	s2 := Start(t, func() Config {
		cfg := smallConfig()
		cfg.LargeBytes = 256 << 20 // far more than socket buffers hold: every handler stays in flight
		return cfg
	}())
	h1 := s2.Host("host1.test")
	tr2 := s2.Transport()
	defer tr2.CloseIdleConnections()
	tr2.MaxConnsPerHost = conns
	c2 := &http.Client{Transport: tr2}
	bodies := make([]io.ReadCloser, conns)
	for i := range conns {
		resp := get(t, c2, "http://host1.test/large.html")
		io.CopyN(io.Discard, resp.Body, 1000)
		bodies[i] = resp.Body
	}
	if got := h1.MaxInFlight(); got != conns {
		t.Errorf("MaxInFlight = %d, want %d", got, conns)
	}
	if got := h1.MaxConns(); got != conns {
		t.Errorf("MaxConns = %d, want %d", got, conns)
	}
	for _, b := range bodies {
		b.Close()
	}
	for i := range 10 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://host4.test"+regularPath(i+1), nil)
			req.Header.Set("User-Agent", "frontiertest/1")
			if resp, err := c.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	log := h.Requests()
	if len(log) != 10 || h.RequestCount() != 10 {
		t.Fatalf("logged %d requests (count %d), want 10", len(log), h.RequestCount())
	}
	ids := map[uint64]bool{}
	for _, r := range log {
		ids[r.Conn] = true
		if r.UserAgent != "frontiertest/1" || r.Status != 200 || r.End.Before(r.Start) || r.Bytes == 0 || r.HostHeader != "host4.test" {
			t.Errorf("bad log entry %+v", r)
		}
	}
	// A transport may dial a connection and then use one that became idle meanwhile (accepted ≥ used), and
	// close an idle one beyond its idle cap and dial again later: only MaxConns is bounded.
	if len(ids) > h.Accepted() || h.MaxConns() > conns {
		t.Errorf("%d connection ids, MaxConns %d, accepted %d; the transport allowed %d", len(ids), h.MaxConns(), h.Accepted(), conns)
	}
	if gap, ok := h.MinGap(nil); !ok || gap < 0 {
		t.Errorf("MinGap = %v, %v", gap, ok)
	}
	h.ResetStats()
	if len(h.Requests()) != 0 || h.RequestCount() != 0 {
		t.Error("ResetStats kept the log")
	}
	if _, ok := h.MinGap(nil); ok {
		t.Error("MinGap of an empty log reported a gap")
	}
}

func TestHTTP2(t *testing.T) {
	cfg := smallConfig()
	cfg.HTTP2 = true
	s := Start(t, cfg)
	tr := s.Transport()
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	readAll(t, get(t, c, "http://host5.test/"))
	readAll(t, get(t, s.Client(time.Minute), "http://host5.test/"))
	log := s.Host("host5.test").Requests()
	if len(log) != 2 || log[0].Proto != "HTTP/2.0" || log[1].Proto != "HTTP/1.1" {
		t.Errorf("protocols %+v, want HTTP/2.0 then HTTP/1.1", log)
	}
}

// TestHostDown: a host taken down answers before, refuses every dial after (a pooled connection included),
// keeps its request log, and leaves the other hosts and Stop as they were; a blackhole taken down closes the
// connection it holds.
func TestHostDown(t *testing.T) {
	s := Start(t, smallConfig())
	c := s.Client(time.Second)
	defer c.CloseIdleConnections()
	h1, h2 := s.Hosts()[0], s.Hosts()[1]
	for _, h := range []*Host{h1, h2} {
		readAll(t, get(t, c, h.URL("/")))
	}
	h1.Down()
	h1.Down() // idempotent
	// The first request may find the closed pooled connection; neither may be answered.
	for range 2 {
		if resp, err := c.Get(h1.URL("/")); err == nil {
			resp.Body.Close()
			t.Fatalf("%s answered %d after Down", h1.Name, resp.StatusCode)
		}
	}
	c.CloseIdleConnections()
	if _, err := c.Get(h1.URL("/")); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("%s after Down: %v, want connection refused", h1.Name, err)
	}
	if n := h1.RequestCount(); n != 1 {
		t.Errorf("%s answered %d requests, want the 1 before Down", h1.Name, n)
	}
	if resp := get(t, c, h2.URL("/")); resp.StatusCode != http.StatusOK {
		t.Errorf("%s after %s went down: status %d", h2.Name, h1.Name, resp.StatusCode)
	} else {
		readAll(t, resp)
	}

	// A blackhole taken down closes the connection it holds, and refuses the next.
	bh := s.Host(BlackholeHost)
	conn, err := s.DialContext(t.Context(), "tcp", BlackholeHost+":80")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for held := 0; held == 0; time.Sleep(time.Millisecond) {
		bh.mu.Lock()
		held = len(bh.mu.held)
		bh.mu.Unlock()
	}
	bh.Down()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("read from the held connection after Down: %v, want EOF", err)
	}
	if _, err := s.DialContext(t.Context(), "tcp", BlackholeHost+":80"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("%s after Down: %v, want connection refused", BlackholeHost, err)
	}
}

func TestStopWithWorkInFlight(t *testing.T) {
	cfg := smallConfig()
	cfg.SlowDelay = time.Hour
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Client(0)
	defer c.CloseIdleConnections()
	done := make(chan error, 2)
	for _, u := range []string{"http://slow.test/", "http://blackhole.test/"} {
		go func() {
			resp, err := c.Get(u)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
	}
	for s.Host(SlowHost).RequestCount() == 0 || s.Host(BlackholeHost).Accepted() == 0 {
		time.Sleep(time.Millisecond)
	}
	s.Stop()
	s.Stop()
	for range 2 {
		if err := <-done; err == nil {
			t.Error("a request to a stopped site succeeded")
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := DefaultConfig()
	bad.Hosts = 0
	bad.PagesPerHost = 0
	bad.CrossHostLinks = 2
	bad.FirstIP = bad.FirstIP.Prev().Prev().Prev() // 127.0.0.255? no: 126.255.255.255
	err := bad.Validate()
	for _, want := range []string{"hosts = 0", "pages per host", "cross-host", "first IP"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
	if _, err := New(bad); err == nil {
		t.Error("New accepted an invalid config")
	}
}

func TestPlain(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Plain = true
	cfg.Hosts = 3
	cfg.PagesPerHost = 4
	s := Start(t, cfg)
	if len(s.Pages()) != 12 || len(s.Special()) != 0 {
		t.Errorf("plain site has %d pages and %d special hosts, want 12 and 0", len(s.Pages()), len(s.Special()))
	}
	r, err := s.Reachable(s.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(r.URLs(OK)); got != 12 {
		t.Errorf("%d pages reachable, want 12", got)
	}
}

func TestFetches(t *testing.T) {
	s := Start(t, smallConfig())
	c := s.Client(time.Minute)
	defer c.CloseIdleConnections()
	for _, u := range []string{"http://host1.test/list?b=2&a=1", "http://HOST1.test/list?a=1&b=2", "http://host1.test/robots.txt", "http://host2.test/", "http://host2.test/no-such-page.html"} {
		readAll(t, get(t, c, u))
	}
	want := map[string]int{"http://host1.test/list?a=1&b=2": 2, "http://host1.test/robots.txt": 1, "http://host2.test/": 1}
	// Served leaves out the error (the 404); Fetches counts every request.
	if diff := cmp.Diff(want, s.Served()); diff != "" {
		t.Errorf("Served (-want +got):\n%s", diff)
	}
	want["http://host2.test/no-such-page.html"] = 1
	if diff := cmp.Diff(want, s.Fetches()); diff != "" {
		t.Errorf("Fetches (-want +got):\n%s", diff)
	}
}

func TestTLS(t *testing.T) {
	cfg := smallConfig()
	cfg.TLS = true
	s := Start(t, cfg)
	c := s.Client(time.Minute)
	defer c.CloseIdleConnections()
	for _, u := range []string{"https://host2.test/", "https://host2.test/d1/page1.html", "https://HOST2.test:443/d1/page1.html"} {
		resp := get(t, c, u)
		readAll(t, resp)
		if resp.StatusCode != 200 || resp.Proto != "HTTP/2.0" {
			t.Errorf("%s: %d over %s, want 200 over HTTP/2.0", u, resp.StatusCode, resp.Proto)
		}
	}
	if p := s.Page("https://host2.test:443/"); p == nil || p.URL != "https://host2.test/" {
		t.Errorf("Page(https://host2.test:443/) = %v", p)
	}
	if log := s.Host("host2.test").Requests(); len(log) != 3 || log[0].Proto != "HTTP/2.0" || log[0].Conn != log[1].Conn {
		t.Errorf("log %+v: want three HTTP/2 requests, the first two on one connection", log)
	}
	// A client that does not trust the pool fails the handshake.
	if _, err := (&http.Client{Transport: &http.Transport{DialContext: s.DialContext}}).Get("https://host2.test/"); err == nil {
		t.Error("an untrusting client connected")
	}
}

func TestSharedIPFallback(t *testing.T) {
	old := listenProbe
	listenProbe = func(string) (net.Listener, error) {
		return nil, &net.OpError{Op: "listen", Net: "tcp", Err: os.NewSyscallError("bind", syscall.EADDRNOTAVAIL)}
	}
	defer func() { listenProbe = old }()
	for _, useIPs := range []bool{false, true} {
		cfg := smallConfig()
		cfg.UseIPs = useIPs
		s := Start(t, cfg)
		if !s.SharedIP() {
			t.Fatal("SharedIP() = false")
		}
		ports := map[uint16]bool{}
		for _, h := range s.Hosts() {
			if h.Addr.Addr().String() != "127.0.0.1" || ports[h.Addr.Port()] {
				t.Errorf("%s listens on %v: want 127.0.0.1 on a port of its own", h.Name, h.Addr)
			}
			ports[h.Addr.Port()] = true
		}
		c := s.Client(time.Minute)
		for _, h := range s.Hosts()[:2] {
			resp := get(t, c, h.Origin+"/")
			if body := readAll(t, resp); !bytes.Contains(body, []byte(h.Name+" page 0")) {
				t.Errorf("%s/ served another host's page", h.Origin)
			}
		}
		c.CloseIdleConnections()
	}
}
