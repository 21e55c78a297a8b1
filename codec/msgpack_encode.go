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

func appendMessage(b []byte, m frontier.Message) ([]byte, error) {
	var err error
	switch m := m.(type) {
	case *frontier.PageCrawled:
		b = append(b, 0x92)
		b = appendBinString(b, frontier.TagPageCrawled)
		if m.Response == nil {
			return b, fmt.Errorf("response is nil")
		}
		return appendResponse(b, m.Response)
	case *frontier.LinksExtracted:
		b = append(b, 0x93)
		b = appendBinString(b, frontier.TagLinksExtracted)
		if b, err = appendRequestField(b, m.Request, "request"); err != nil {
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
		if b, err = appendRequestField(b, m.Request, "request"); err != nil {
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
	if r == nil {
		return b, fmt.Errorf("%s: request is nil", what)
	}
	return appendRequest(b, r)
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
	return appendMeta(b, r, memo)
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

func appendResponse(b []byte, r *frontier.Response) ([]byte, error) {
	b = append(b, 0x95)
	b = appendStr(b, r.URL)
	b = appendInt(b, int64(r.Status))
	var err error
	if b, err = appendMeta(b, r.Request, nil); err != nil {
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
