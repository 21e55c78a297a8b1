package spider

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier/internal/cputime"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/spider/links"
)

// scriptedRT answers every request with one scripted outcome and keeps the request it was given.
type scriptedRT struct {
	status int
	header http.Header
	noBody bool
	err    error
	nilAll bool
	got    *http.Request
}

func (rt *scriptedRT) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.got = r
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	switch {
	case rt.err != nil:
		return nil, rt.err
	case rt.nilAll:
		return nil, nil
	}
	resp := &http.Response{StatusCode: rt.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: rt.header.Clone(), Request: r}
	if resp.Header == nil {
		resp.Header = http.Header{}
	}
	if !rt.noBody {
		resp.Body = io.NopCloser(strings.NewReader("body"))
		resp.ContentLength = 4
	}
	return resp, nil
}

// oldNewRequest is the request the fetcher built before it stopped printing and parsing the URL again.
func oldNewRequest(f *fetcher, ctx context.Context, method string, u *url.URL, body []byte, req *frontier.Request, first bool) (*http.Request, error) {
	var rd io.Reader
	if len(body) > 0 {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, named(ErrNameInvalidURL, err)
	}
	h := hreq.Header
	if first {
		for _, x := range req.Headers {
			name := string(x.Name)
			switch strings.ToLower(name) {
			case "host", "content-length", "connection", "transfer-encoding", "accept-encoding":
				continue
			}
			for _, v := range x.Values {
				h.Add(name, string(v))
			}
		}
		if len(req.Cookies) > 0 && h.Get("Cookie") == "" {
			for _, c := range req.Cookies {
				hreq.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
			}
		}
	}
	h.Set("User-Agent", f.cfg.UserAgent)
	if h.Get("Accept") == "" {
		h.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	}
	if h.Get("Accept-Language") == "" {
		h.Set("Accept-Language", "en")
	}
	h.Set("Accept-Encoding", "gzip, br")
	return hreq, nil
}

// wire is r as written on the connection.
func wire(t *testing.T, r *http.Request) string {
	t.Helper()
	if r == nil {
		return "<none>"
	}
	c := r.Clone(context.Background())
	if r.GetBody != nil {
		c.Body, _ = r.GetBody()
	}
	var b bytes.Buffer
	if err := c.Write(&b); err != nil {
		return "write error: " + err.Error()
	}
	return b.String()
}

type clientOutcome struct {
	wire, err, class string
	status           int
	mismatch         bool
}

// viaClient is what a fetch of u got from net/http's Client before, viaFetcher what it gets now.
func viaClient(t *testing.T, f *fetcher, rt *scriptedRT, method string, u *url.URL, body []byte, req *frontier.Request) clientOutcome {
	hreq, err := oldNewRequest(f, context.Background(), method, u, body, req, true)
	if err != nil {
		return clientOutcome{err: err.Error()}
	}
	c := &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	rt.got = nil
	resp, err := c.Do(hreq)
	return outcomeOf(t, rt, resp, unwrapURLError(err))
}

func viaFetcher(t *testing.T, f *fetcher, rt *scriptedRT, method string, u *url.URL, body []byte, req *frontier.Request) clientOutcome {
	hreq, err := f.newRequest(context.Background(), method, u, body, req, true)
	if err != nil {
		return clientOutcome{err: err.Error()}
	}
	rt.got = nil
	g := *f
	g.rt = rt
	resp, err := g.roundTrip(hreq)
	return outcomeOf(t, rt, resp, err)
}

func outcomeOf(t *testing.T, rt *scriptedRT, resp *http.Response, err error) clientOutcome {
	o := clientOutcome{wire: wire(t, rt.got)}
	if err != nil {
		o.err, o.class, o.mismatch = err.Error(), ClassifyError(err), errors.Is(err, http.ErrSchemeMismatch)
		return o
	}
	o.status = resp.StatusCode
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	o.wire += "|" + string(b)
	return o
}

// requestURLs are URLs as the spider fetches them: a feed request's (links.NormalizeString) and a redirect
// target's (links.Resolve).
var requestURLs = []string{
	"http://example.com/",
	"http://example.com",
	"http://example.com:8080/a/b?x=1&y=%20#frag",
	"http://user:pass@example.com/p",
	"http://user@example.com/",
	"http://user:p%40ss@example.com/",
	"https://[::1]:443/x",
	"http://[fe80::1%25en0]:8080/",
	"http://example.com:/",
	"http://EXAMPLE.com/%7Efoo/../bar",
	"http://example.com/a%2Fb/c",
	"http://example.com/ä?q=ü",
	"http://example.com/?",
	"http://example.com/p;params?a=b;c",
	"http://example.com/a b?c d",
	"http://example.com/%zz",
	"https://xn--bcher-kva.example/",
	"http://127.0.0.1:9/x?y",
}

var clientScripts = map[string]scriptedRT{
	"ok":                      {status: 200},
	"ok nil body":             {status: 204, noBody: true},
	"content, nil body":       {status: 200, noBody: true, header: http.Header{"Content-Length": {"5"}}},
	"302":                     {status: 302, header: http.Header{"Location": {"/next?a=1"}}},
	"302 absolute":            {status: 302, header: http.Header{"Location": {"https://other.example/x"}}},
	"302 bad location":        {status: 302, header: http.Header{"Location": {"http://a b.example/%zz"}}},
	"302 bad escape":          {status: 302, header: http.Header{"Location": {"/%zz"}}},
	"307 bad location":        {status: 307, header: http.Header{"Location": {"%"}}},
	"301 no location":         {status: 301},
	"304 bad location":        {status: 304, header: http.Header{"Location": {"%"}}},
	"transport error":         {err: errors.New("boom")},
	"deadline":                {err: context.DeadlineExceeded},
	"HTTP on TLS":             {err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake", RecordHeader: [5]byte{'H', 'T', 'T', 'P', '/'}}},
	"other TLS record header": {err: tls.RecordHeaderError{Msg: "bad record", RecordHeader: [5]byte{1, 2, 3, 4, 5}}},
	"nil response, nil error": {nilAll: true},
}

func compareClient(t *testing.T, raw string) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.UserAgent = "frontier-test/1 (+contact)"
	f := newFetcher(cfg, nil, false)
	us := []*url.URL{}
	if u, err := links.NormalizeString(raw); err == nil {
		us = append(us, u)
	}
	if u, err := links.Resolve(&url.URL{Scheme: "http", Host: "base.example", Path: "/dir/"}, raw); err == nil {
		us = append(us, u)
	}
	req := &frontier.Request{Headers: frontier.Headers{{Name: []byte("X-Test"), Values: [][]byte{[]byte("1")}}},
		Cookies: []frontier.Cookie{{Name: "c", Value: "v"}}}
	for _, u := range us {
		for name, script := range clientScripts {
			for _, m := range []struct {
				method string
				body   []byte
			}{{"", nil}, {http.MethodGet, nil}, {http.MethodPost, []byte("a=1")}, {"PUT", nil}} {
				a, b := script, script
				old := viaClient(t, f, &a, m.method, u, m.body, req)
				now := viaFetcher(t, f, &b, m.method, u, m.body, req)
				if old != now {
					t.Errorf("%s (%s), %s %q:\nclient  %+v\nfetcher %+v", raw, u, name, m.method, old, now)
				}
			}
		}
	}
}

// TestRoundTripAsClient: the fetcher's request and its outcome (the request on the wire, the status, the
// error's text and name) are what they were through net/http's Client with CheckRedirect returning
// http.ErrUseLastResponse and the URL printed and parsed again.
func TestRoundTripAsClient(t *testing.T) {
	for _, raw := range requestURLs {
		compareClient(t, raw)
	}
}

func FuzzRoundTripAsClient(f *testing.F) {
	for _, raw := range requestURLs {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		compareClient(t, raw)
	})
}

// BenchmarkSendRequest is the fetcher's per-request work besides the transport's (a transport that answers at
// once): the request built and sent as net/http's Client sent it (old) against the fetcher's own (new).
func BenchmarkSendRequest(b *testing.B) {
	cfg := DefaultConfig()
	f := newFetcher(cfg, nil, false)
	u, _ := links.NormalizeString("http://host-17.example:8080/section/page-1234.html?id=99")
	req := &frontier.Request{URL: u.String()}
	resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: http.NoBody}
	rt := rtFunc(func(*http.Request) (*http.Response, error) { return resp, nil })
	f.rt = rt
	c := &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	ctx := context.Background()
	for _, impl := range []string{"old", "new"} {
		b.Run(impl, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cputime.Process()
			for b.Loop() {
				if impl == "old" {
					hreq, _ := oldNewRequest(f, ctx, "", u, nil, req, true)
					if _, err := c.Do(hreq); err != nil {
						b.Fatal(err)
					}
					continue
				}
				hreq, _ := f.newRequest(ctx, "", u, nil, req, true)
				if _, err := f.roundTrip(hreq); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/request") // the process's CPU, not the wall time
		})
	}
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
