package archive

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/spider"
	"github.com/frontiercrawl/frontier/warc"
)

func TestHandlerWritesHopsAndFinal(t *testing.T) {
	cfg := warc.DefaultConfig()
	cfg.Dir, cfg.Hostname = t.TempDir(), "spider0"
	w, err := warc.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &Handler{W: w}
	start := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	body := []byte("<html><a href=/x>x</a></html>")
	f := &spider.Fetched{
		Request: &frontier.Request{URL: "http://a.test/old"},
		Hops: []spider.Hop{{URL: "http://a.test/old", Status: 301, Proto: "HTTP/1.1", Method: "GET",
			Header: http.Header{"Location": {"/new"}, "Content-Length": {"12"}}, RequestHeader: http.Header{"User-Agent": {"bot"}}}},
		URL: "http://a.test/new", Status: 200, Proto: "HTTP/1.1", Method: "GET",
		Header:        http.Header{"Content-Type": {"text/html"}, "Content-Encoding": {"gzip"}, "Content-Length": {"40"}},
		RequestHeader: http.Header{"User-Agent": {"bot"}, "Accept-Encoding": {"gzip, br"}},
		Body:          body, Decoded: true, Truncated: true, ContentType: "text/html", HTML: true,
		Links:      []frontier.Link{{URL: "http://a.test/x", Tag: "a"}},
		RemoteAddr: "127.0.0.2:80", Start: start, End: start.Add(15 * time.Millisecond),
	}
	if err := h.HandleResponse(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	if err := h.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := w.Files()
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	r := warc.NewReader(bytes.NewReader(data))
	var types []string
	var final *warc.ReadRecord
	var meta *warc.ReadRecord
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, rec.Type())
		if rec.Type() == "response" && rec.Fields.Get("WARC-Target-URI") == "http://a.test/new" {
			final = rec
		}
		if rec.Type() == "metadata" {
			meta = rec
		}
	}
	if got := strings.Join(types, ","); got != "warcinfo,request,response,request,response,metadata" {
		t.Fatalf("records %s", got)
	}
	if final == nil {
		t.Fatal("no final response record")
	}
	if final.Fields.Get("WARC-Truncated") != "length" || final.Fields.Get("WARC-IP-Address") != "127.0.0.2" {
		t.Errorf("final fields %v", final.Fields)
	}
	blk := string(final.Block)
	for _, want := range []string{"HTTP/1.1 200 OK\r\n", "X-Crawler-Content-Encoding: gzip", "Content-Length: 29", string(body)} {
		if !strings.Contains(blk, want) {
			t.Errorf("final response block lacks %q:\n%s", want, blk)
		}
	}
	if strings.Contains(blk, "\r\nContent-Encoding:") {
		t.Errorf("decoded body stored with Content-Encoding:\n%s", blk)
	}
	if meta == nil || !strings.Contains(string(meta.Block), "outlink: http://a.test/x") || !strings.Contains(string(meta.Block), "fetchTimeMs: 15") {
		t.Errorf("metadata %q", meta.Block)
	}
}
