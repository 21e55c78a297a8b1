package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	frontier "github.com/frontiercrawl/frontier"
)

// Msgpack is Frontera 0.8.1's msgpack codec (packb(obj, use_bin_type=True)). The zero value is ready to use.
type Msgpack struct{}

// Name returns "msgpack".
func (Msgpack) Name() string { return "msgpack" }

// EncodeRequest encodes a spider-feed item: the bare request array.
func (Msgpack) EncodeRequest(r *frontier.Request) ([]byte, error) {
	return AppendRequest(make([]byte, 0, requestSizeHint(r)), r)
}

// EncodeMessage encodes one tagged message.
func (Msgpack) EncodeMessage(m frontier.Message) ([]byte, error) {
	return AppendMessage(make([]byte, 0, messageSizeHint(m)), m)
}

// messageSizeHint estimates the encoded size of m so that encoding usually allocates once.
func messageSizeHint(m frontier.Message) int {
	n := 32
	switch m := m.(type) {
	case *frontier.PageCrawled:
		if m.Response != nil {
			n += 64 + len(m.Response.URL) + len(m.Response.Body) + requestSizeHint(m.Response.Request)
			for _, h := range m.Response.Headers {
				n += 8 + len(h.Name)
				for _, v := range h.Values {
					n += 4 + len(v)
				}
			}
		}
	case *frontier.LinksExtracted:
		n += requestSizeHint(m.Request)
		for _, l := range m.Links {
			n += requestSizeHint(l)
		}
	case *frontier.AddSeeds:
		for _, l := range m.Seeds {
			n += requestSizeHint(l)
		}
	case *frontier.RequestError:
		n += requestSizeHint(m.Request) + len(m.Error)
	case *frontier.UpdateScore:
		n += requestSizeHint(m.Request)
	case *frontier.Stats:
		n += 48 * len(m.Map)
	}
	return n
}

// AppendRequest appends the msgpack encoding of the feed request r to dst. Reusing dst across calls makes
// encoding allocation-free.
func AppendRequest(dst []byte, r *frontier.Request) ([]byte, error) {
	if r == nil {
		return dst, fmt.Errorf("codec: msgpack: request is nil")
	}
	b, err := appendRequest(dst, r)
	if err != nil {
		return dst, fmt.Errorf("codec: msgpack: request %q: %w", r.URL, err)
	}
	return b, nil
}

// AppendMessage appends the msgpack encoding of m to dst.
func AppendMessage(dst []byte, m frontier.Message) ([]byte, error) {
	b, err := appendMessage(dst, m)
	if err != nil {
		return dst, fmt.Errorf("codec: msgpack: encode %s: %w", msgName(m), err)
	}
	return b, nil
}

func msgName(m frontier.Message) string {
	if m == nil {
		return "nil message"
	}
	return m.Name()
}

// RequestMemo lets the messages that carry one request (a page's page_crawled, its links_extracted, one per
// link host, and its redirect's) share the request's encoding: AppendMessageMemo encodes the request, or its
// meta map (all of it that a page_crawled holds), the first time and copies those bytes from the earlier output
// afterwards. The spider reports every page this way; the request's meta (fingerprint, domain map, digest,
// scores) was most of what each of a page's messages encoded again (issue 21).
//
// The memo remembers slices of the output it was given, so the request must not change, and the bytes of the
// messages AppendMessageMemo returned must not be written into, while the memo is in use. A message whose
// encoding failed leaves the memo as it was.
type RequestMemo struct {
	// Request is the request whose encoding is shared: a message's request is copied only when it is this
	// very pointer.
	Request *frontier.Request
	meta    []byte // its meta map's encoding (appendMeta), nil until a message wrote it
	full    []byte // its whole encoding (appendRequest), nil until a message wrote it
}

// AppendMessageMemo is AppendMessage (the same bytes) with memo's request encoded once for all the messages
// that carry it (see RequestMemo); a nil memo is AppendMessage.
func AppendMessageMemo(dst []byte, m frontier.Message, memo *RequestMemo) ([]byte, error) {
	if memo == nil || memo.Request == nil {
		return AppendMessage(dst, m)
	}
	var sp memoSpans
	b, err := appendMessageMemo(dst, m, memo, &sp)
	if err != nil {
		return dst, fmt.Errorf("codec: msgpack: encode %s: %w", msgName(m), err)
	}
	// The spans are offsets into b: they are taken from the final buffer, which holds the bytes wherever b grew.
	if sp.metaEnd > 0 && memo.meta == nil {
		memo.meta = b[sp.metaStart:sp.metaEnd:sp.metaEnd]
	}
	if sp.fullEnd > 0 && memo.full == nil {
		memo.full = b[sp.fullStart:sp.fullEnd:sp.fullEnd]
	}
	return b, nil
}

// memoSpans is where one message's encoding wrote its memo request's meta and whole encoding (end 0: not
// written).
type memoSpans struct {
	metaStart, metaEnd, fullStart, fullEnd int
}

func appendMessage(b []byte, m frontier.Message) ([]byte, error) {
	return appendMessageMemo(b, m, nil, nil)
}

// appendMessageMemo is appendMessage with the request memo.Request copied from memo or recorded in sp (memo
// nil: none).
func appendMessageMemo(b []byte, m frontier.Message, memo *RequestMemo, sp *memoSpans) ([]byte, error) {
	var err error
	switch m := m.(type) {
	case *frontier.PageCrawled:
		b = append(b, 0x92)
		b = appendBinString(b, frontier.TagPageCrawled)
		if m.Response == nil {
			return b, fmt.Errorf("response is nil")
		}
		return appendResponseMemo(b, m.Response, memo, sp)
	case *frontier.LinksExtracted:
		b = append(b, 0x93)
		b = appendBinString(b, frontier.TagLinksExtracted)
		if b, err = appendRequestFieldMemo(b, m.Request, "request", memo, sp); err != nil {
			return b, err
		}
		b = appendArrayHeader(b, len(m.Links))
		var memo mapMemo
		for i, l := range m.Links {
			if l == nil {
				return b, fmt.Errorf("links[%d]: links: request is nil", i)
			}
			if b, err = appendRequestMemo(b, l, &memo); err != nil {
				return b, fmt.Errorf("links[%d]: %w", i, err)
			}
		}
		return b, nil
	case *frontier.RequestError:
		b = append(b, 0x93)
		b = appendBinString(b, frontier.TagRequestError)
		if b, err = appendRequestFieldMemo(b, m.Request, "request", memo, sp); err != nil {
			return b, err
		}
		return appendStr(b, m.Error), nil
	case *frontier.Offset:
		b = append(b, 0x93)
		b = appendBinString(b, frontier.TagOffset)
		b = appendInt(b, int64(m.Partition))
		return appendInt(b, m.Offset), nil
	case *frontier.UpdateScore:
		b = append(b, 0x94)
		b = appendBinString(b, frontier.TagUpdateScore)
		if b, err = appendRequestField(b, m.Request, "request"); err != nil {
			return b, err
		}
		b = appendFloat(b, m.Score)
		return appendBool(b, m.Schedule), nil
	case *frontier.NewJobID:
		b = append(b, 0x92)
		b = appendBinString(b, frontier.TagNewJobID)
		return appendInt(b, m.ID), nil
	case *frontier.Stats:
		b = append(b, 0x92)
		b = appendBinString(b, frontier.TagStats)
		return appendMap(b, m.Map, 0)
	case *frontier.AddSeeds:
		b = append(b, 0x92)
		b = appendBinString(b, frontier.TagAddSeeds)
		b = appendArrayHeader(b, len(m.Seeds))
		for i, s := range m.Seeds {
			if b, err = appendRequestField(b, s, "seeds"); err != nil {
				return b, fmt.Errorf("seeds[%d]: %w", i, err)
			}
		}
		return b, nil
	case nil:
		return b, fmt.Errorf("message is nil")
	}
	return b, fmt.Errorf("message type %T is not supported", m)
}

func appendRequestField(b []byte, r *frontier.Request, what string) ([]byte, error) {
	return appendRequestFieldMemo(b, r, what, nil, nil)
}

// appendRequestFieldMemo is appendRequestField with r copied from memo when it is memo's request and memo
// holds its bytes, and the span it was written to recorded in sp otherwise.
func appendRequestFieldMemo(b []byte, r *frontier.Request, what string, memo *RequestMemo, sp *memoSpans) ([]byte, error) {
	if r == nil {
		return b, fmt.Errorf("%s: request is nil", what)
	}
	if memo == nil || r != memo.Request {
		return appendRequest(b, r)
	}
	if memo.full != nil {
		return append(b, memo.full...), nil
	}
	start := len(b)
	b = appendRequestHead(b, r)
	b, err := appendMetaMemo(b, r, memo, sp)
	if err != nil {
		return b, err
	}
	sp.fullStart, sp.fullEnd = start, len(b)
	return b, nil
}

// appendMetaMemo is appendMeta(b, r, nil) with the bytes copied from memo when it holds them (r is memo's
// request), and the span written recorded in sp otherwise.
func appendMetaMemo(b []byte, r *frontier.Request, memo *RequestMemo, sp *memoSpans) ([]byte, error) {
	if memo == nil || r == nil || r != memo.Request {
		return appendMeta(b, r, nil)
	}
	if memo.meta != nil {
		return append(b, memo.meta...), nil
	}
	start := len(b)
	b, err := appendMeta(b, r, nil)
	if err != nil {
		return b, err
	}
	sp.metaStart, sp.metaEnd = start, len(b)
	return b, nil
}

func requestSizeHint(r *frontier.Request) int {
	if r == nil {
		return 0
	}
	return 64 + len(r.URL) + len(r.Body) + 48*len(r.Meta)
}

// bodyEntry reports whether the request's body travels in meta.
func hasBody(r *frontier.Request) bool { return r != nil && len(r.Body) > 0 }

// appendMeta writes the meta map with Request.Body added under MetaKeyBody. An entry under that key already in
// Meta is replaced by Body (or dropped when Body is empty), so the two never disagree.
func appendMeta(b []byte, r *frontier.Request, memo *mapMemo) ([]byte, error) {
	if r == nil {
		return append(b, 0x80), nil
	}
	n := len(r.Meta)
	skip := -1
	for i, e := range r.Meta {
		if isKey(e.Key, frontier.MetaKeyBody) {
			skip = i
			n--
			break
		}
	}
	body := len(r.Body) > 0
	if body {
		n++
	}
	b = appendMapHeader(b, n)
	var err error
	for i, e := range r.Meta {
		if i == skip {
			continue
		}
		if b, err = appendValue(b, e.Key, 1); err != nil {
			return b, fmt.Errorf("meta key %s: %w", describeKey(e.Key), err)
		}
		if m, ok := e.Value.(frontier.Map); ok && memo != nil && len(m) > 0 {
			if unsafe.SliceData(m) == memo.data && len(m) == memo.n {
				b = append(b, b[memo.start:memo.end]...)
				continue
			}
			start := len(b)
			if b, err = appendMap(b, m, 1); err != nil {
				return b, fmt.Errorf("meta[%s]: %w", describeKey(e.Key), err)
			}
			*memo = mapMemo{data: unsafe.SliceData(m), n: len(m), start: start, end: len(b)}
			continue
		}
		if b, err = appendValue(b, e.Value, 1); err != nil {
			return b, fmt.Errorf("meta[%s]: %w", describeKey(e.Key), err)
		}
	}
	if body {
		b = appendBinString(b, frontier.MetaKeyBody)
		b = appendBin(b, r.Body)
	}
	return b, nil
}

func isKey(k frontier.Value, name string) bool {
	switch k := k.(type) {
	case []byte:
		return string(k) == name
	case string:
		return k == name
	}
	return false
}

func describeKey(k frontier.Value) string {
	switch k := k.(type) {
	case []byte:
		return fmt.Sprintf("b%q", k)
	case string:
		return fmt.Sprintf("%q", k)
	}
	return fmt.Sprintf("%v", k)
}

// mapMemo remembers where in the buffer being written the last meta map value of a links_extracted message
// was encoded, and which map it was (its entries' array and length). The spider gives the links to one host
// one shared domain map (identity.DomainMeta) and sends one links_extracted per host, so every link after the
// first finds its domain map here and its bytes are copied instead of encoded again. A map is identified by
// its backing array: meta values are never written into once shared (the spider and the codecs' shared decoded
// values rely on it), and nothing writes
// into them while a message is being encoded, so the same array and length is the same map, the same bytes.
type mapMemo struct {
	data       *frontier.Entry
	n          int
	start, end int
}

func appendRequest(b []byte, r *frontier.Request) ([]byte, error) {
	return appendRequestMemo(b, r, nil)
}

// appendRequestMemo is appendRequest with the meta's map values looked up in memo (nil: none).
func appendRequestMemo(b []byte, r *frontier.Request, memo *mapMemo) ([]byte, error) {
	return appendMeta(appendRequestHead(b, r), r, memo)
}

// appendRequestHead appends what of r's encoding precedes its meta map: the array header, url, method,
// headers and cookies.
func appendRequestHead(b []byte, r *frontier.Request) []byte {
	b = append(b, 0x95)
	b = appendStr(b, r.URL)
	if r.Method == "" {
		b = append(b, 0xc4, 3, 'G', 'E', 'T')
	} else {
		b = appendBinString(b, r.Method)
	}
	b = appendHeaders(b, r.Headers)
	b = appendMapHeader(b, len(r.Cookies))
	for _, c := range r.Cookies {
		b = appendStr(b, c.Name)
		b = appendStr(b, c.Value)
	}
	return b
}

func appendHeaders(b []byte, h frontier.Headers) []byte {
	b = appendMapHeader(b, len(h))
	for _, x := range h {
		b = appendBin(b, x.Name)
		b = appendArrayHeader(b, len(x.Values))
		for _, v := range x.Values {
			b = appendBin(b, v)
		}
	}
	return b
}

// appendResponseMemo appends r's encoding, its request's meta through memo (appendMetaMemo; nil: none).
func appendResponseMemo(b []byte, r *frontier.Response, memo *RequestMemo, sp *memoSpans) ([]byte, error) {
	b = append(b, 0x95)
	b = appendStr(b, r.URL)
	b = appendInt(b, int64(r.Status))
	var err error
	if b, err = appendMetaMemo(b, r.Request, memo, sp); err != nil {
		return b, err
	}
	b = appendHeaders(b, r.Headers)
	if r.Body == nil {
		return append(b, 0xc0), nil
	}
	return appendBin(b, r.Body), nil
}

func appendMap(b []byte, m frontier.Map, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return b, fmt.Errorf("nesting deeper than %d", MaxDepth)
	}
	b = appendMapHeader(b, len(m))
	var err error
	for _, e := range m {
		if b, err = appendValue(b, e.Key, depth+1); err != nil {
			return b, fmt.Errorf("key %s: %w", describeKey(e.Key), err)
		}
		if b, err = appendValue(b, e.Value, depth+1); err != nil {
			return b, fmt.Errorf("[%s]: %w", describeKey(e.Key), err)
		}
	}
	return b, nil
}

// appendValue encodes one dynamic value the way msgpack-python packs the equivalent Python object.
func appendValue(b []byte, v frontier.Value, depth int) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, 0xc0), nil
	case bool:
		return appendBool(b, v), nil
	case int64:
		return appendInt(b, v), nil
	case uint64:
		return appendUint(b, v), nil
	case int:
		return appendInt(b, int64(v)), nil
	case int32:
		return appendInt(b, int64(v)), nil
	case uint32:
		return appendUint(b, uint64(v)), nil
	case float64:
		return appendFloat(b, v), nil
	case float32:
		return appendFloat(b, float64(v)), nil
	case string:
		return appendStr(b, v), nil
	case []byte:
		return appendBin(b, v), nil
	case frontier.Map:
		return appendMap(b, v, depth)
	case []frontier.Value:
		return appendList(b, v, depth)
	case frontier.Tuple:
		return appendList(b, v, depth)
	}
	return b, fmt.Errorf("value of type %T is not a frontier.Value", v)
}

func appendList(b []byte, l []frontier.Value, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return b, fmt.Errorf("nesting deeper than %d", MaxDepth)
	}
	b = appendArrayHeader(b, len(l))
	var err error
	for i, x := range l {
		if b, err = appendValue(b, x, depth+1); err != nil {
			return b, fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return b, nil
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 0xc3)
	}
	return append(b, 0xc2)
}

func appendFloat(b []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(append(b, 0xcb), math.Float64bits(f))
}

func appendInt(b []byte, v int64) []byte {
	switch {
	case v >= 0:
		return appendUint(b, uint64(v))
	case v >= -32:
		return append(b, byte(v))
	case v >= math.MinInt8:
		return append(b, 0xd0, byte(v))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(v))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(v))
}

func appendUint(b []byte, v uint64) []byte {
	switch {
	case v < 128:
		return append(b, byte(v))
	case v <= math.MaxUint8:
		return append(b, 0xcc, byte(v))
	case v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(v))
	case v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xcf), v)
}

func appendStr(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		b = append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

func binHeader(b []byte, n int) []byte {
	switch {
	case n <= math.MaxUint8:
		return append(b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xc5), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xc6), uint32(n))
}

func appendBin(b []byte, p []byte) []byte { return append(binHeader(b, len(p)), p...) }

func appendBinString(b []byte, s string) []byte { return append(binHeader(b, len(s)), s...) }

func appendArrayHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xdc), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdd), uint32(n))
}

func appendMapHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xde), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdf), uint32(n))
}
