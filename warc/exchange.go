package warc

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Exchange is one fetch: the request sent, the response received, and what the crawler noted about it.
// WriteExchange turns it into a request, a response and (if Metadata is not empty) a metadata record.
type Exchange struct {
	// URL is the fetched URL: the WARC-Target-URI of every record.
	URL string
	// Date is when the fetch began (WARC-Date of every record); the Writer's clock when zero.
	Date time.Time
	// IP is the address the response came from (WARC-IP-Address); "" leaves the field out.
	IP string
	// Request is the HTTP request as sent: its head (request line, headers, empty line) and body if any.
	// RequestHead builds it from an *http.Request.
	Request []byte
	// ResponseHead is the response's status line and headers, ending with the empty line. It must describe
	// Body as stored (see ResponseHead for how to keep it consistent when the body was de-chunked or decoded).
	ResponseHead []byte
	// Body is the response payload as stored.
	Body []byte
	// Truncated is the WARC-Truncated reason when Body is incomplete: "length", "time", "disconnect" or
	// "unspecified"; "" when complete.
	Truncated string
	// Metadata are the fields of the metadata record (e.g. fetchTimeMs, outlink); empty writes none.
	Metadata Fields
	// ResponseFields are further fields of the response record (e.g. WARC-Identified-Payload-Type).
	ResponseFields Fields
}

// ExchangeIDs are the record ids WriteExchange gave the records, and where the request record starts.
type ExchangeIDs struct {
	Request, Response, Metadata string // Metadata is "" when no metadata record was written
	Position                           // of the request record; the response and metadata follow it
}

// WriteExchange writes the exchange as a request, a response and a metadata record, contiguous in one file in
// that order. The request and metadata records carry WARC-Concurrent-To: the response's id.
func (w *Writer) WriteExchange(ex *Exchange) (ExchangeIDs, error) {
	if !bytes.HasPrefix(ex.ResponseHead, []byte("HTTP/")) || !bytes.HasSuffix(ex.ResponseHead, crlf2) {
		return ExchangeIDs{}, fmt.Errorf("warc: exchange %s: the response head must start with HTTP/ and end with an empty line", ex.URL)
	}
	if bytes.Index(ex.Request, crlf2) < 0 {
		return ExchangeIDs{}, fmt.Errorf("warc: exchange %s: the request has no complete head", ex.URL)
	}
	ids := ExchangeIDs{Request: NewID(), Response: NewID()}
	date := ex.Date
	if date.IsZero() {
		date = w.now()
	}
	var ip Fields
	if ex.IP != "" {
		ip = Fields{{"WARC-IP-Address", ex.IP}}
	}
	req := &Record{Type: TypeRequest, ID: ids.Request, Date: date, TargetURI: ex.URL, ContentType: ContentTypeHTTPRequest,
		Fields: append(Fields{{"WARC-Concurrent-To", ids.Response}}, ip...), Block: ex.Request}
	resp := &Record{Type: TypeResponse, ID: ids.Response, Date: date, TargetURI: ex.URL, ContentType: ContentTypeHTTPResponse,
		Fields: ip}
	if ex.Truncated != "" {
		resp.Fields = append(resp.Fields, Field{"WARC-Truncated", ex.Truncated})
	}
	resp.Fields = append(resp.Fields, ex.ResponseFields...)

	members := make([]member, 0, 3)
	defer func() {
		for _, m := range members {
			bufPool.Put(m.buf)
		}
	}()
	head, err := w.prepare(req, [][]byte{ex.Request}, nil, false)
	if err != nil {
		return ExchangeIDs{}, fmt.Errorf("%w (request record of %s)", err, ex.URL)
	}
	members = append(members, w.compress(head, ex.Request))
	head, err = w.prepare(resp, [][]byte{ex.ResponseHead, ex.Body}, ex.Body, true)
	if err != nil {
		return ExchangeIDs{}, fmt.Errorf("%w (response record of %s)", err, ex.URL)
	}
	members = append(members, w.compress(head, ex.ResponseHead, ex.Body))
	if len(ex.Metadata) > 0 {
		block, err := FieldsBlock(ex.Metadata)
		if err != nil {
			return ExchangeIDs{}, fmt.Errorf("%w (metadata record of %s)", err, ex.URL)
		}
		ids.Metadata = NewID()
		meta := &Record{Type: TypeMetadata, ID: ids.Metadata, Date: date, TargetURI: ex.URL, ContentType: ContentTypeFields,
			Fields: Fields{{"WARC-Concurrent-To", ids.Response}}, Block: block}
		if head, err = w.prepare(meta, [][]byte{block}, nil, false); err != nil {
			return ExchangeIDs{}, fmt.Errorf("%w (metadata record of %s)", err, ex.URL)
		}
		members = append(members, w.compress(head, block))
	}
	pos, err := w.append(members)
	if err != nil {
		return ExchangeIDs{}, err
	}
	ids.Position = pos
	return ids, nil
}

// RequestHead returns the HTTP/1.1 head of req as a client sends it: request line, Host, then req.Header
// (sorted by name), then the empty line. It records the headers the caller set; headers a Transport adds on
// its own (Accept-Encoding: gzip when it decompresses transparently, a default User-Agent) are not in
// req.Header, so set them explicitly if the record must show them.
func RequestHead(req *http.Request) []byte {
	var b bytes.Buffer
	target := req.URL.RequestURI()
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", req.Method, target)
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	fmt.Fprintf(&b, "Host: %s\r\n", host)
	h := req.Header.Clone()
	h.Del("Host")
	h.Write(&b)
	b.WriteString("\r\n")
	return b.Bytes()
}

// ResponseHead returns the head of resp (status line, headers sorted by name, empty line) made consistent with
// a stored body of bodyLen bytes, the way StormCrawler and Common Crawl do it: the body a Go client reads is
// de-chunked, so Transfer-Encoding is recorded as X-Crawler-Transfer-Encoding; if the body was decompressed
// (decoded is true, or the Transport did it and set resp.Uncompressed), Content-Encoding becomes
// X-Crawler-Content-Encoding; a Content-Length that differs from bodyLen becomes X-Crawler-Content-Length and
// Content-Length is set to bodyLen. If you store the body exactly as received (decoded false, no chunking),
// the head is the received one.
func ResponseHead(resp *http.Response, bodyLen int, decoded bool) []byte {
	h := resp.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	for _, te := range resp.TransferEncoding {
		h.Add("X-Crawler-Transfer-Encoding", te)
	}
	h.Del("Transfer-Encoding")
	if resp.Uncompressed {
		h.Set("X-Crawler-Content-Encoding", "gzip")
	}
	if decoded {
		for _, ce := range h.Values("Content-Encoding") {
			h.Add("X-Crawler-Content-Encoding", ce)
		}
		h.Del("Content-Encoding")
	}
	n := strconv.Itoa(bodyLen)
	if cl := h.Get("Content-Length"); cl != n {
		if cl != "" {
			h.Set("X-Crawler-Content-Length", cl)
		}
		h.Set("Content-Length", n)
	}
	proto := resp.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	status := resp.Status
	if status == "" {
		status = strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s\r\n", proto, status)
	h.Write(&b)
	b.WriteString("\r\n")
	return b.Bytes()
}
