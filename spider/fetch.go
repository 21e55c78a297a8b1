package spider

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/cespare/xxhash/v2"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/spider/links"
)

// fetcher performs one request, following redirects itself only when follow is set (robots.txt); otherwise a
// 3xx answer is the result and its resolved target is in Fetched.Location. Safe for concurrent use.
type fetcher struct {
	cfg Config
	// rt sends the requests. The fetcher does what net/http's Client would do for it (send, in clientRoundTrip)
	// and no more: the Client's per-request work (a copy of the header for redirects it never follows, the
	// Location parsed twice, a url.Error wrapped and unwrapped) was CPU the least crawler of bench/crawl does not
	// pay for its own work.
	rt     http.RoundTripper
	follow bool
	// budget bounds the body bytes in memory over all fetches (nil: no budget, bodies in memory); bodies past
	// cfg.SpillBytes, or refused by the budget, go to a temporary file in spillDir.
	budget   *byteBudget
	spillDir string
	// streamLarge: nothing reads a body after the fetch (no response handler, or one that ignores bodies,
	// and no send_body), so a body past cfg.SpillBytes is parsed and digested as it streams in and not kept
	// (streamBody) instead of spilled and read back.
	streamLarge bool
}

func newTransport(cfg Config, deps Deps) *http.Transport {
	dial := deps.DialContext
	if dial == nil {
		d := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
		dial = d.DialContext
	} else {
		inner := dial
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			ctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
			defer cancel()
			return inner(ctx, network, addr)
		}
	}
	return &http.Transport{
		DialContext:         dial,
		TLSClientConfig:     deps.TLSConfig,
		TLSHandshakeTimeout: cfg.ConnectTimeout,
		ForceAttemptHTTP2:   cfg.HTTP2,
		DisableCompression:  true, // we ask for gzip and br ourselves and count wire bytes
		MaxConnsPerHost:     cfg.ConnsPerHost,
		MaxIdleConnsPerHost: cfg.ConnsPerHost,
		MaxIdleConns:        4 * cfg.MaxInFlight,
		IdleConnTimeout:     30 * time.Second,
	}
}

func newFetcher(cfg Config, rt http.RoundTripper, follow bool) *fetcher {
	return &fetcher{cfg: cfg, follow: follow, rt: rt}
}

// redirectCheck is asked before following a redirect to u; a non-nil error stops the chain and is reported.
type redirectCheck func(ctx context.Context, u *url.URL) error

// answered is told when a host answered (response headers received), for politeness.
type answered func(u *url.URL, at time.Time)

// fetch fetches req (at u), following redirects, and returns the final response with its body read.
func (f *fetcher) fetch(ctx context.Context, req *frontier.Request, u *url.URL, check redirectCheck, onAnswer answered) (*Fetched, error) {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.RequestTimeout)
	defer cancel()
	out := &Fetched{Request: req, Start: time.Now()}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	body := req.Body
	first := true
	for hop := 0; ; hop++ {
		var remote string
		trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) {
			if ci.Conn != nil {
				remote = ci.Conn.RemoteAddr().String()
			}
		}}
		hreq, err := f.newRequest(httptrace.WithClientTrace(ctx, trace), method, u, body, req, first)
		if err != nil {
			return nil, err
		}
		resp, err := f.roundTrip(hreq)
		if onAnswer != nil {
			onAnswer(u, time.Now()) // also on error: the host may have seen the request
		}
		if err != nil {
			return errorResult(out), err
		}
		if loc := resp.Header.Get("Location"); isRedirect(resp.StatusCode) && loc != "" && !f.follow {
			// The frontier follows: the target goes back through the URL-seen test as a link.
			next, err := links.Resolve(u, loc)
			if err != nil {
				resp.Body.Close()
				if errors.Is(err, links.ErrNotHTTP) {
					return nil, named(ErrNameNotSupported, fmt.Errorf("redirect from %s: %w", u, err))
				}
				return nil, named(ErrNameInvalidURL, fmt.Errorf("redirect from %s: %w", u, err))
			}
			out.Location = next.String()
		} else if isRedirect(resp.StatusCode) && loc != "" {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			out.Hops = append(out.Hops, Hop{URL: u.String(), Status: resp.StatusCode, Proto: resp.Proto,
				Header: resp.Header, RequestHeader: hreq.Header, Method: method})
			if hop >= f.cfg.MaxRedirects {
				return out, named(ErrNameTooManyRedirects, fmt.Errorf("more than %d redirects from %s", f.cfg.MaxRedirects, req.URL))
			}
			next, err := links.Resolve(u, loc)
			if err != nil {
				if errors.Is(err, links.ErrNotHTTP) {
					return out, named(ErrNameNotSupported, err)
				}
				return out, named(ErrNameInvalidURL, fmt.Errorf("redirect from %s: %w", u, err))
			}
			if check != nil {
				if err := check(ctx, next); err != nil {
					return out, err
				}
			}
			switch {
			case resp.StatusCode == http.StatusSeeOther && method != http.MethodHead,
				(resp.StatusCode == http.StatusMovedPermanently || resp.StatusCode == http.StatusFound) && method == http.MethodPost:
				method, body = http.MethodGet, nil
			}
			u, first = next, false
			continue
		}
		out.URL, out.Status, out.Proto, out.Header = u.String(), resp.StatusCode, resp.Proto, resp.Header
		out.finalURL = u
		out.RequestHeader, out.Method, out.RemoteAddr = hreq.Header, method, remote
		head, err := f.readBody(ctx, resp, out)
		resp.Body.Close()
		out.End = time.Now()
		if err != nil {
			out.releaseBody()
			return out, err
		}
		out.ContentType, out.HTML = contentType(resp.Header.Get("Content-Type"), head)
		return out, nil
	}
}

// errorResult returns the hops walked so far, or nil when there were none.
func errorResult(out *Fetched) *Fetched {
	if len(out.Hops) == 0 {
		return nil
	}
	return out
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// newRequest is the request for u: what http.NewRequestWithContext(ctx, method, u.String(), body) makes, without
// printing u and parsing it again (the URL is a copy of u; the Host is u's, without an empty port, as there).
func (f *fetcher) newRequest(ctx context.Context, method string, u *url.URL, body []byte, req *frontier.Request, first bool) (*http.Request, error) {
	var rd io.Reader
	if len(body) > 0 {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, "", rd)
	if err != nil {
		return nil, named(ErrNameInvalidURL, err)
	}
	uc := *u
	hreq.URL, hreq.Host = &uc, strings.TrimSuffix(u.Host, ":") // net/http's removeEmptyPort
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
	if ui := hreq.URL.User; ui != nil && h.Get("Authorization") == "" {
		// What the Client's send does for a URL with user info (net/http's basicAuth).
		pw, _ := ui.Password()
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(ui.Username()+":"+pw)))
	}
	return hreq, nil
}

// roundTrip sends hreq as a net/http Client without Jar or Timeout whose CheckRedirect answers
// http.ErrUseLastResponse would (the fetcher follows redirects itself), and returns the response, or the error
// as unwrapURLError would leave the Client's (the same text, the same cause): a transport error (a TLS record
// header that reads "HTTP/" is http.ErrSchemeMismatch), or, for a redirect status, a Location that
// the request's URL does not resolve. The Client's other work (a header copy, redirect requests built and
// dropped) has no effect when the last response is used.
func (f *fetcher) roundTrip(hreq *http.Request) (*http.Response, error) {
	resp, err := f.rt.RoundTrip(hreq)
	if err != nil {
		if tlsErr, ok := err.(tls.RecordHeaderError); ok && string(tlsErr.RecordHeader[:]) == "HTTP/" {
			err = http.ErrSchemeMismatch
		}
		return nil, clientError(hreq, err)
	}
	if resp == nil {
		return nil, clientError(hreq, fmt.Errorf("http: RoundTripper implementation (%T) returned a nil *Response with a nil error", f.rt))
	}
	if resp.Body == nil {
		if resp.ContentLength > 0 && hreq.Method != http.MethodHead {
			return nil, clientError(hreq, fmt.Errorf("http: RoundTripper implementation (%T) returned a *Response with content length %d but a nil Body", f.rt, resp.ContentLength))
		}
		resp.Body = io.NopCloser(strings.NewReader(""))
	}
	if isRedirect(resp.StatusCode) && !(hreq.GetBody == nil && hreq.ContentLength != 0 && (resp.StatusCode == http.StatusTemporaryRedirect || resp.StatusCode == http.StatusPermanentRedirect)) {
		if loc := resp.Header.Get("Location"); loc != "" {
			if _, err := hreq.URL.Parse(loc); err != nil {
				resp.Body.Close()
				return nil, clientError(hreq, fmt.Errorf("failed to parse Location header %q: %v", loc, err))
			}
		}
	}
	return resp, nil
}

// clientError is unwrapURLError of the *url.Error a net/http Client returns for hreq's err.
func clientError(hreq *http.Request, err error) error {
	op := "Get"
	if m := hreq.Method; m != "" {
		op = m[:1] + strings.ToLower(m[1:])
	}
	return fmt.Errorf("%s %s: %w", op, stripPassword(hreq.URL), err)
}

// stripPassword is net/http's: u printed with its password, if any, as ***.
func stripPassword(u *url.URL) string {
	if _, set := u.User.Password(); set {
		return strings.Replace(u.String(), u.User.String()+"@", u.User.Username()+":***@", 1)
	}
	return u.String()
}

// unwrapURLError removes net/http's *url.Error wrapper (its text repeats the URL) but keeps the cause.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s %s: %w", ue.Op, ue.URL, ue.Err)
	}
	return err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readBody reads and decodes the body, keeping at most MaxBodyBytes decoded bytes: in out.Body, or, with a
// budget, in out.Body up to the spill threshold and in a spill file past it (see bodyBuffer). It returns the
// body's first bytes for content sniffing.
func (f *fetcher) readBody(ctx context.Context, resp *http.Response, out *Fetched) ([]byte, error) {
	wire := &countingReader{r: resp.Body}
	var dec io.Reader = wire
	switch strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))) {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(wire)
		if err != nil {
			if errors.Is(err, io.EOF) { // empty body
				return nil, nil
			}
			return nil, named(ErrNameDecoding, fmt.Errorf("gzip: %w", err))
		}
		defer zr.Close()
		dec = zr
	case "br":
		dec = brotli.NewReader(wire)
	case "deflate":
		zr, err := zlib.NewReader(wire)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, nil
			}
			return nil, named(ErrNameDecoding, fmt.Errorf("deflate: %w", err))
		}
		defer zr.Close()
		dec = zr
	}
	out.Decoded = dec != io.Reader(wire)
	limit := f.cfg.MaxBodyBytes
	readErr := func(err error) error {
		if dec != io.Reader(wire) && !isNetErr(err) {
			return named(ErrNameDecoding, err)
		}
		return err
	}
	if f.budget == nil {
		var buf bytes.Buffer
		if resp.ContentLength > 0 && resp.ContentLength <= limit {
			buf.Grow(int(resp.ContentLength) + bytes.MinRead)
		}
		n, err := buf.ReadFrom(io.LimitReader(dec, limit+1))
		out.WireBytes = wire.n
		if err != nil {
			return nil, readErr(err)
		}
		b := buf.Bytes()
		if n > limit {
			b = b[:limit]
			out.Truncated = true
		}
		out.Body = b
		return b, nil
	}
	w := &bodyBuffer{ctx: ctx, budget: f.budget, threshold: f.cfg.SpillBytes, dir: f.spillDir, stream: f.streamLarge}
	lr := io.LimitReader(dec, limit+1)
	buf := copyBufs.Get().(*[]byte)
	_, err := io.CopyBuffer(w, lr, *buf) // io.Copy would allocate 32 KiB per response
	copyBufs.Put(buf)
	if errors.Is(err, errStreamBody) {
		err = f.streamBody(w, lr, resp, out)
	}
	out.WireBytes = wire.n
	if err != nil {
		w.discard()
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, err // the spill file, not the response: a plain error (ConnectionError)
		}
		return nil, readErr(err)
	}
	if w.pending != nil { // streamed: out has its links, digest and size; nothing is kept
		w.discard()
		return w.head, nil
	}
	if w.n > limit {
		out.Truncated = true
		if w.file != nil {
			w.n = limit // the file's last byte is ignored
		} else {
			w.buf = w.buf[:limit]
		}
	}
	w.finish(out)
	return w.head, nil
}

// streamBody reads the rest of a body that crossed the spill threshold in stream mode (bodyBuffer): the
// bytes w holds, then lr, through the content digest (bodyDigest's xxHash) and, for a 2xx HTML page, the link parser, keeping
// none of it. Parsing while the body arrives costs what parsing it afterwards would, and saves writing it to
// a file, reading it back into a buffer of its size and collecting that buffer. out gets the links (even
// none: Fetched.linksDone), the digest and Truncated.
func (f *fetcher) streamBody(w *bodyBuffer, lr io.Reader, resp *http.Response, out *Fetched) error {
	limit := f.cfg.MaxBodyBytes
	hr := &digestReader{r: io.MultiReader(bytes.NewReader(w.buf), bytes.NewReader(w.pending), lr), h: xxhash.New()}
	body := io.LimitReader(hr, limit)
	// As a spill does, streaming gives the memory reservation back: from here on the fetch holds only the
	// prefix, read once and dropped, and the parser's buffer, so a slow stream keeps no budget from others.
	w.budget.release(w.reserved)
	w.reserved = 0
	// The tokenizer reads ~4 KiB at a time; through a large buffer the body, the digest and the connection's
	// reads below take 64 KiB steps instead (net/http's 4 KiB buffer passes reads that large straight to the
	// socket), a read syscall per 64 KiB rather than per 4 KiB.
	br := streamBufs.Get().(*bufio.Reader)
	br.Reset(body)
	defer func() { br.Reset(nil); streamBufs.Put(br) }()
	if _, html := contentType(resp.Header.Get("Content-Type"), w.head); html && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		out.Links = links.ExtractReader(out.finalURL, br, links.Options{MaxLinks: f.cfg.MaxLinksPerPage})
		out.linksDone = true
	}
	if _, err := br.Discard(math.MaxInt); err != nil && err != io.EOF { // the rest, unparsed, in 64 KiB steps
		return err
	}
	if hr.err != nil {
		return hr.err // a read error the parser took for the page's end
	}
	out.digestHex = hex.EncodeToString(hr.h.Sum(nil)) // big-endian, as bodyDigest
	if hr.n == limit {                                // one byte more means the response was longer than MaxBodyBytes
		var one [1]byte
		if k, _ := io.ReadFull(hr.r, one[:]); k > 0 {
			out.Truncated = true
		}
	}
	return nil
}

// streamBufs are streamBody's read buffers.
var streamBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, streamBufSize) }}

// streamBufSize is the read size of a streamed body.
const streamBufSize = 64 << 10

// copyBufs are readBody's copy buffers.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// digestReader hashes and counts what is read through it and remembers the first read error.
type digestReader struct {
	r   io.Reader
	h   hash.Hash
	n   int64
	err error
}

func (d *digestReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.h.Write(p[:n])
	d.n += int64(n)
	if err != nil && err != io.EOF && d.err == nil {
		d.err = err
	}
	return n, err
}

func isNetErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF)
}

// contentType returns the media type of a response and whether it is HTML. A missing or generic
// Content-Type (application/octet-stream, unknown) is replaced by http.DetectContentType's guess.
func contentType(header string, body []byte) (string, bool) {
	mt, _, err := mime.ParseMediaType(header)
	if err != nil || mt == "" || mt == "application/octet-stream" || mt == "application/unknown" || mt == "unknown/unknown" {
		mt, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	mt = strings.ToLower(mt)
	return mt, mt == "text/html" || mt == "application/xhtml+xml"
}
