package warc_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/warc"
)

// fetch GETs u and archives the exchange the way a spider does: remote IP from httptrace, body cut at max.
func fetch(ctx context.Context, c *http.Client, w *warc.Writer, u string, max int64, hdr ...string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "frontier-test/1.0")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	var ip string
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if a, ok := info.Conn.RemoteAddr().(*net.TCPAddr); ok {
			ip = a.IP.String()
		}
	}}))
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, err
	}
	truncated := ""
	if int64(len(body)) > max {
		body, truncated = body[:max], "length"
	}
	_, err = w.WriteExchange(&warc.Exchange{
		URL: u, Date: start, IP: ip,
		Request:      warc.RequestHead(req),
		ResponseHead: warc.ResponseHead(resp, len(body), false),
		Body:         body,
		Truncated:    truncated,
		Metadata:     warc.Fields{{Name: "fetchTimeMs", Value: strconv.FormatInt(time.Since(start).Milliseconds(), 10)}},
	})
	return resp, err
}

// TestArchiveTheSyntheticWeb fetches pages of every kind from frontiertest/web, archives them, and has warcio
// read them back: statuses, payload sizes (decoded by warcio from what was stored), truncation and IPs.
func TestArchiveTheSyntheticWeb(t *testing.T) {
	cfg := web.DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost, cfg.LargeBytes = 3, 5, 8<<20
	site := web.Start(t, cfg)
	c := site.Client(10 * time.Second)
	defer c.CloseIdleConnections()
	wcfg := warc.DefaultConfig()
	wcfg.Dir, wcfg.Hostname, wcfg.MaxFileSize = t.TempDir(), "spider0", 4<<10
	w, err := warc.New(wcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	const max = 1 << 20
	type want struct {
		status    int
		payload   int // bytes warcio decodes from the payload
		truncated string
	}
	html := func(u string) int { return len(site.Page(u).HTML()) }
	cases := []struct {
		url  string
		hdr  []string
		want want
	}{
		{"http://host1.test/", nil, want{200, html("http://host1.test/"), ""}},
		{"http://host1.test/enc/gzip.html", []string{"Accept-Encoding", "gzip"}, want{200, html("http://host1.test/enc/gzip.html"), ""}}, // stored compressed
		{"http://host1.test/enc/gzip.html", nil, want{200, html("http://host1.test/enc/gzip.html"), ""}},                                 // the Transport decoded it
		{"http://host1.test/enc/br.html", []string{"Accept-Encoding", "br"}, want{200, html("http://host1.test/enc/br.html"), ""}},
		{"http://host1.test/files/doc.pdf", nil, want{200, -1, ""}},
		{"http://host1.test/r/chain/1", nil, want{301, -1, ""}},
		{"http://host1.test/err/404", nil, want{404, -1, ""}},
		{"http://host1.test/large.html", nil, want{200, max, "length"}},
		{"http://host1.test/robots.txt", nil, want{200, -1, ""}},
	}
	for _, tc := range cases {
		if _, err := fetch(t.Context(), c, w, tc.url, max, tc.hdr...); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(w.Files()) < 2 {
		t.Errorf("%d files, want rotations at 4 KiB", len(w.Files()))
	}
	sum := frontiertest.CheckWARC(t, wcfg.Dir)
	if len(sum.Responses) != len(cases) {
		t.Fatalf("warcio read %d responses, %d were archived", len(sum.Responses), len(cases))
	}
	for i, tc := range cases {
		got := sum.Responses[i]
		if got.URI != tc.url || got.Status != tc.want.status || got.Truncated != tc.want.truncated ||
			(tc.want.payload >= 0 && got.PayloadBytes != tc.want.payload) {
			t.Errorf("response %d: warcio read %+v, want %s %+v", i, got, tc.url, tc.want)
		}
		if h := site.Host(tc.url); h == nil || got.IP != h.Addr.Addr().String() {
			t.Errorf("%s: WARC-IP-Address %q", tc.url, got.IP)
		}
	}
}

// Archive one fetch and read the records back.
func ExampleWriter_WriteExchange() {
	site, err := web.New(web.Config{Hosts: 1, PagesPerHost: 2, LinksPerPage: 1, Seed: 1, FirstIP: web.DefaultConfig().FirstIP, Plain: true})
	if err != nil {
		panic(err)
	}
	defer site.Stop()
	dir, _ := os.MkdirTemp("", "warc-example")
	defer os.RemoveAll(dir)

	cfg := warc.DefaultConfig()
	cfg.Dir, cfg.Hostname = dir, "spider0"
	w, err := warc.New(cfg, nil)
	if err != nil {
		panic(err)
	}
	c := site.Client(5 * time.Second)
	defer c.CloseIdleConnections()
	if _, err := fetch(context.Background(), c, w, "http://host1.test/", 1<<20); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}

	f, _ := os.Open(w.Files()[0])
	defer f.Close()
	r := warc.NewReader(f)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		fmt.Println(rec.Type(), rec.Fields.Get("WARC-Target-URI"), rec.Fields.Get("Content-Type"), rec.Verify() == nil)
	}
	// Output:
	// warcinfo  application/warc-fields true
	// request http://host1.test/ application/http;msgtype=request true
	// response http://host1.test/ application/http;msgtype=response true
	// metadata http://host1.test/ application/warc-fields true
}
