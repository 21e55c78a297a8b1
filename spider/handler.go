package spider

import (
	"context"
	"net/http"
	"time"

	frontier "github.com/frontiercrawl/frontier"
)

// ResponseHandler is the output hook: the spider calls HandleResponse for every response it fetched (after
// redirects, with the hops listed), before the outcome is reported on the spider log and before the feed
// offset moves past it. Plug in extraction, storage or archiving (the WARC writer) here without forking the
// binary.
//
// HandleResponse is called from many goroutines at once (one per fetch in flight) and must be safe for
// concurrent use. It must not keep r or r.Body after it returns (the buffer is reused). An error is logged and
// counted (frontier_spider_handler_errors_total) and does not stop the spider or the report. Robots.txt
// fetches and failed requests are not passed to the handler.
type ResponseHandler interface {
	HandleResponse(ctx context.Context, r *Fetched) error
}

// HandlerFunc adapts a function to ResponseHandler.
type HandlerFunc func(ctx context.Context, r *Fetched) error

// HandleResponse calls f.
func (f HandlerFunc) HandleResponse(ctx context.Context, r *Fetched) error { return f(ctx, r) }

// Fetched is one fetched response as the handler sees it.
type Fetched struct {
	// Request is the request from the feed, meta included. Do not modify it.
	Request *frontier.Request
	// Hops are the redirect responses that led to the final one, in order (empty without redirects).
	Hops []Hop
	// URL is the final URL (after redirects); Status, Proto and Header are its response's.
	URL    string
	Status int
	Proto  string // "HTTP/1.1", "HTTP/2.0"
	Header http.Header
	// RequestHeader is the header the spider sent for the final URL (User-Agent, Accept-Encoding, …).
	RequestHeader http.Header
	Method        string
	// Body is the decoded body (Content-Encoding removed), at most Config.MaxBodyBytes; Truncated says whether
	// the response was longer. WireBytes is what crossed the network for the final response's body.
	Body      []byte
	Truncated bool
	WireBytes int64
	// ContentType is the media type from Content-Type, or sniffed when the header is missing or generic.
	ContentType string
	// HTML says whether the body was parsed for links; Links are those links (nofollow ones included).
	HTML  bool
	Links []frontier.Link
	// RemoteAddr is the peer's address, when known.
	RemoteAddr string
	// Start is when the first request of the chain was sent, End when the last body byte was read.
	Start, End time.Time
}

// Hop is one redirect response of a chain.
type Hop struct {
	URL           string
	Status        int
	Proto         string
	Header        http.Header
	RequestHeader http.Header
	Method        string
}
