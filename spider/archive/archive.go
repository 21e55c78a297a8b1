// Package archive records what the spider fetches as WARC/1.1 files: Handler is a spider.ResponseHandler over
// a warc.Writer. cmd/spider installs it when warc.dir is configured; embed it in your own handler to archive
// and extract at once.
//
// Every fetch is written as request, response and metadata records (package warc): each redirect hop as its
// own exchange (its body is not kept, so the stored head says Content-Length: 0 and keeps the original length
// as X-Crawler-Content-Length), then the final response with its body as the spider decoded it
// (Content-Encoding recorded as X-Crawler-Content-Encoding, as StormCrawler and Common Crawl do), marked
// WARC-Truncated: length when the spider cut it at max_body_bytes. The metadata record holds fetchTimeMs and
// one outlink field per extracted link.
//
// Handler implements spider.Flusher, so the spider flushes and fsyncs the WARC file before it commits the feed
// offsets of what was archived. It imports spider and warc; it is safe for concurrent use, as the writer is.
package archive

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/frontiercrawl/frontier/spider"
	"github.com/frontiercrawl/frontier/warc"
)

// Handler writes every fetched response to W. The caller creates and closes W.
type Handler struct {
	W *warc.Writer
}

var (
	_ spider.ResponseHandler = (*Handler)(nil)
	_ spider.Flusher         = (*Handler)(nil)
)

// HandleResponse writes the redirect hops and the final response of f.
func (h *Handler) HandleResponse(_ context.Context, f *spider.Fetched) error {
	for _, hop := range f.Hops {
		ex, err := exchange(hop.URL, hop.Method, hop.RequestHeader, hop.Proto, hop.Status, hop.Header, nil, false)
		if err != nil {
			return err
		}
		ex.Date = f.Start
		if _, err := h.W.WriteExchange(ex); err != nil {
			return fmt.Errorf("archive: %s: %w", hop.URL, err)
		}
	}
	ex, err := exchange(f.URL, f.Method, f.RequestHeader, f.Proto, f.Status, f.Header, f.Body, f.Decoded)
	if err != nil {
		return err
	}
	ex.Date, ex.IP = f.Start, hostOnly(f.RemoteAddr)
	if f.Truncated {
		ex.Truncated = "length"
	}
	ex.Metadata = warc.Fields{{Name: "fetchTimeMs", Value: strconv.FormatInt(f.End.Sub(f.Start).Milliseconds(), 10)}}
	for _, l := range f.Links {
		ex.Metadata = append(ex.Metadata, warc.Field{Name: "outlink", Value: l.URL})
	}
	if f.ContentType != "" {
		ex.ResponseFields = warc.Fields{{Name: "WARC-Identified-Payload-Type", Value: f.ContentType}}
	}
	if _, err := h.W.WriteExchange(ex); err != nil {
		return fmt.Errorf("archive: %s: %w", f.URL, err)
	}
	return nil
}

// Flush makes the records written so far durable (spider.Flusher).
func (h *Handler) Flush() error { return h.W.Flush() }

func exchange(rawURL, method string, reqHeader http.Header, proto string, status int, header http.Header, body []byte, decoded bool) (*warc.Exchange, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("archive: %q: %w", rawURL, err)
	}
	if method == "" {
		method = http.MethodGet
	}
	req := &http.Request{Method: method, URL: u, Host: u.Host, Header: reqHeader}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	resp := &http.Response{StatusCode: status, Proto: proto, Header: header}
	return &warc.Exchange{
		URL:          rawURL,
		Request:      warc.RequestHead(req),
		ResponseHead: warc.ResponseHead(resp, len(body), decoded),
		Body:         body,
	}, nil
}

// hostOnly strips the port from a remote address ("127.0.0.2:80" → "127.0.0.2").
func hostOnly(addr string) string {
	if addr == "" {
		return ""
	}
	if u, err := url.Parse("//" + addr); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return addr
}
