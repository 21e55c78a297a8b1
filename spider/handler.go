package spider

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"time"

	frontier "github.com/frontiercrawl/frontier"
)

// ResponseHandler is the output hook: the spider calls HandleResponse for every response it fetched (after
// redirects, with the hops listed), before the outcome is reported on the spider log and before the feed
// offset moves past it. Plug in extraction, storage or archiving (the WARC writer) here without forking the
// binary.
//
// HandleResponse is called from many goroutines at once (one per fetch in flight) and must be safe for
// concurrent use. It may keep r.Body but must not modify r. An error is logged and
// counted (frontier_spider_handler_errors_total) and does not stop the spider or the report. Robots.txt
// fetches and failed requests are not passed to the handler. Package spider/archive is the WARC handler.
type ResponseHandler interface {
	HandleResponse(ctx context.Context, r *Fetched) error
}

// Flusher is an optional capability of a ResponseHandler: the spider calls Flush before every commit of the
// feed offset, so what the handler stored for the committed requests is durable first (docs/architecture.md, invariant 2).
// An error keeps the offset where it is (the commit is retried at the next interval).
type Flusher interface {
	Flush() error
}

// BodyIgnorer is an optional capability of a ResponseHandler that never reads Fetched.Body (it counts or
// records what was fetched, it archives nothing). With one, or with no handler, and Config.SendBody off, a
// body past Config.SpillBytes is parsed for links and digested as it streams in and then dropped, instead of
// spilled to a file and read back: the handler sees it with Body nil. The WARC handler (spider/archive)
// reads the body and is not one.
type BodyIgnorer interface {
	IgnoresBody() bool
}

// bodiesUnread reports whether nothing reads a response body once the fetch has parsed it: no handler, or
// one that ignores bodies, and no send_body.
func bodiesUnread(h ResponseHandler, cfg Config) bool {
	if cfg.SendBody {
		return false
	}
	if h == nil {
		return true
	}
	bi, ok := h.(BodyIgnorer)
	return ok && bi.IgnoresBody()
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
	// the response was longer. WireBytes is what crossed the network for the final response's body. The memory
	// Body holds is counted in Config.BodyBudgetBytes until the handler returns; a handler that keeps Body
	// keeps memory the budget no longer counts.
	Body      []byte
	Truncated bool
	WireBytes int64
	// Decoded says whether Body was decompressed (the Content-Encoding header names what was removed).
	Decoded bool
	// ContentType is the media type from Content-Type, or sniffed when the header is missing or generic.
	ContentType string
	// HTML says whether the body was parsed for links; Links are those links (nofollow ones included).
	HTML  bool
	Links []frontier.Link
	// Location is the resolved target of a 3xx answer (Status is the 3xx): the spider does not follow it but
	// reports it as a link, so the frontier's URL-seen test decides whether it is fetched.
	Location string
	// RemoteAddr is the peer's address, when known.
	RemoteAddr string
	// Start is when the first request of the chain was sent, End when the last body byte was read.
	Start, End time.Time

	// linksDone: Links were extracted while the body streamed in (its bytes are not kept); digestHex is
	// the body's digest computed then (bodyDigest; see fetcher.streamBody).
	linksDone bool
	digestHex string
	// finalURL is URL parsed: the *url.URL it was printed from (nil in a Fetched not made by a fetch).
	finalURL *url.URL

	// The body's share of the memory budget (Config.BodyBudgetBytes), and its spill file while it is on disk.
	budget    *byteBudget
	held      int64
	spill     *os.File
	spillSize int64
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
