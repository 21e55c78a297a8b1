package codec

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	frontier "github.com/frontiercrawl/frontier"
)

// JSON is Frontera 0.8.1's JSON codec (codecs/json.py): every value is wrapped as a [type, value] pair
// (["bytes", text], ["dict", [[k, v]…]], ["list", […]], ["tuple", […]], ["other", v]) and messages are dicts with
// a "type" key, written with Python's json.dumps defaults (", " separators, ASCII-only escapes, Python float
// repr, NaN/Infinity literals). The JSON page_crawled carries no response headers, as in Frontera. The zero
// value is ready to use.
type JSON struct{}

// Name returns "json".
func (JSON) Name() string { return "json" }

// jw writes Frontera's JSON. Its helpers append to b.
type jw struct{ b []byte }

// EncodeRequest encodes a spider-feed item: the request dict.
func (JSON) EncodeRequest(r *frontier.Request) ([]byte, error) {
	if r == nil {
		return nil, fmt.Errorf("codec: json: request is nil")
	}
	w := jw{b: make([]byte, 0, 256+3*requestSizeHint(r))}
	if err := w.request(r); err != nil {
		return nil, fmt.Errorf("codec: json: request %q: %w", r.URL, err)
	}
	return w.b, nil
}

// EncodeMessage encodes one message dict.
func (JSON) EncodeMessage(m frontier.Message) ([]byte, error) {
	w := jw{b: make([]byte, 0, 512+3*messageSizeHint(m))} // the JSON form is about 2.5 times the msgpack one
	if err := w.message(m); err != nil {
		return nil, fmt.Errorf("codec: json: encode %s: %w", msgName(m), err)
	}
	return w.b, nil
}

// field starts one [key, value] pair of a message dict whose key is the str name; the caller writes the value
// and calls endField.
func (w *jw) field(first bool, name string) {
	if !first {
		w.b = append(w.b, ", "...)
	}
	w.b = append(w.b, `[["other", `...)
	w.b = appendJSONString(w.b, name)
	w.b = append(w.b, "], "...)
}

func (w *jw) endField() { w.b = append(w.b, ']') }

func (w *jw) beginDict() { w.b = append(w.b, `["dict", [`...) }
func (w *jw) endDict()   { w.b = append(w.b, "]]"...) }

// other writes ["other", s]; s must be UTF-8 (a Python str), and what names it in the error.
func (w *jw) other(s, what string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %q is not UTF-8", what, s)
	}
	w.b = append(w.b, `["other", `...)
	w.b = appendJSONString(w.b, s)
	w.b = append(w.b, ']')
	return nil
}

func (w *jw) otherInt(v int64) {
	w.b = append(w.b, `["other", `...)
	w.b = strconv.AppendInt(w.b, v, 10)
	w.b = append(w.b, ']')
}

func (w *jw) bytes(p []byte) error {
	if !utf8.Valid(p) {
		return fmt.Errorf("bin value %q is not UTF-8, which Frontera's JSON codec cannot carry", truncate(p))
	}
	w.b = append(w.b, `["bytes", `...)
	w.b = appendJSONBytes(w.b, p)
	w.b = append(w.b, ']')
	return nil
}

func truncate(p []byte) []byte {
	if len(p) > 32 {
		return p[:32]
	}
	return p
}

func (w *jw) message(m frontier.Message) error {
	if m == nil {
		return fmt.Errorf("message is nil")
	}
	w.beginDict()
	w.field(true, "type")
	_ = w.other(m.Name(), "type")
	w.endField()
	switch m := m.(type) {
	case *frontier.PageCrawled:
		if m.Response == nil {
			return fmt.Errorf("response is nil")
		}
		w.field(false, "r")
		if err := w.response(m.Response); err != nil {
			return err
		}
		w.endField()
	case *frontier.LinksExtracted:
		if err := w.requestField("r", m.Request); err != nil {
			return err
		}
		w.field(false, "links")
		if err := w.requestList(m.Links, "links"); err != nil {
			return err
		}
		w.endField()
	case *frontier.RequestError:
		if err := w.requestField("r", m.Request); err != nil {
			return err
		}
		w.field(false, "error")
		if err := w.other(m.Error, "error"); err != nil {
			return err
		}
		w.endField()
	case *frontier.UpdateScore:
		if err := w.requestField("r", m.Request); err != nil {
			return err
		}
		w.field(false, "score")
		w.b = append(w.b, `["other", `...)
		w.b = appendPyFloat(w.b, m.Score)
		w.b = append(w.b, ']')
		w.endField()
		w.field(false, "schedule")
		if m.Schedule {
			w.b = append(w.b, `["other", true]`...)
		} else {
			w.b = append(w.b, `["other", false]`...)
		}
		w.endField()
	case *frontier.NewJobID:
		w.field(false, "job_id")
		w.otherInt(m.ID)
		w.endField()
	case *frontier.Offset:
		w.field(false, "partition_id")
		w.otherInt(int64(m.Partition))
		w.endField()
		w.field(false, "offset")
		w.otherInt(m.Offset)
		w.endField()
	case *frontier.Stats:
		w.field(false, "stats")
		if err := w.value(m.Map, 1); err != nil {
			return fmt.Errorf("stats: %w", err)
		}
		w.endField()
	case *frontier.AddSeeds:
		w.field(false, "seeds")
		if err := w.requestList(m.Seeds, "seeds"); err != nil {
			return err
		}
		w.endField()
	default:
		return fmt.Errorf("message type %T is not supported", m)
	}
	w.endDict()
	return nil
}

func (w *jw) requestField(name string, r *frontier.Request) error {
	if r == nil {
		return fmt.Errorf("%s: request is nil", name)
	}
	w.field(false, name)
	if err := w.request(r); err != nil {
		return fmt.Errorf("request %q: %w", r.URL, err)
	}
	w.endField()
	return nil
}

func (w *jw) requestList(rs []*frontier.Request, what string) error {
	w.b = append(w.b, `["list", [`...)
	for i, r := range rs {
		if i > 0 {
			w.b = append(w.b, ", "...)
		}
		if r == nil {
			return fmt.Errorf("%s[%d]: request is nil", what, i)
		}
		if err := w.request(r); err != nil {
			return fmt.Errorf("%s[%d] %q: %w", what, i, r.URL, err)
		}
	}
	w.b = append(w.b, "]]"...)
	return nil
}

func (w *jw) request(r *frontier.Request) error {
	w.beginDict()
	w.field(true, "url")
	if err := w.other(r.URL, "url"); err != nil {
		return err
	}
	w.endField()
	w.field(false, "method")
	m := r.Method
	if m == "" {
		m = "GET"
	}
	if !utf8.ValidString(m) {
		return fmt.Errorf("method %q is not UTF-8", m)
	}
	w.b = append(w.b, `["bytes", `...)
	w.b = appendJSONString(w.b, m)
	w.b = append(w.b, ']')
	w.endField()
	w.field(false, "headers")
	if err := w.headers(r.Headers); err != nil {
		return err
	}
	w.endField()
	w.field(false, "cookies")
	w.beginDict()
	for i, c := range r.Cookies {
		if i > 0 {
			w.b = append(w.b, ", "...)
		}
		w.b = append(w.b, '[')
		if err := w.other(c.Name, "cookie name"); err != nil {
			return err
		}
		w.b = append(w.b, ", "...)
		if err := w.other(c.Value, "cookie value"); err != nil {
			return err
		}
		w.b = append(w.b, ']')
	}
	w.endDict()
	w.endField()
	w.field(false, "meta")
	if err := w.meta(r); err != nil {
		return err
	}
	w.endField()
	w.endDict()
	return nil
}

func (w *jw) headers(h frontier.Headers) error {
	w.beginDict()
	for i, x := range h {
		if i > 0 {
			w.b = append(w.b, ", "...)
		}
		w.b = append(w.b, '[')
		if err := w.bytes(x.Name); err != nil {
			return fmt.Errorf("header name: %w", err)
		}
		w.b = append(w.b, `, ["list", [`...)
		for j, v := range x.Values {
			if j > 0 {
				w.b = append(w.b, ", "...)
			}
			if err := w.bytes(v); err != nil {
				return fmt.Errorf("header %q: %w", x.Name, err)
			}
		}
		w.b = append(w.b, "]]]"...)
	}
	w.endDict()
	return nil
}

func (w *jw) meta(r *frontier.Request) error {
	w.beginDict()
	first := true
	for _, e := range r.Meta {
		if isKey(e.Key, frontier.MetaKeyBody) {
			continue
		}
		if !first {
			w.b = append(w.b, ", "...)
		}
		first = false
		w.b = append(w.b, '[')
		if err := w.value(e.Key, 1); err != nil {
			return fmt.Errorf("meta key %s: %w", describeKey(e.Key), err)
		}
		w.b = append(w.b, ", "...)
		if err := w.value(e.Value, 1); err != nil {
			return fmt.Errorf("meta[%s]: %w", describeKey(e.Key), err)
		}
		w.b = append(w.b, ']')
	}
	if len(r.Body) > 0 {
		if !first {
			w.b = append(w.b, ", "...)
		}
		w.b = append(w.b, `[["bytes", "`+frontier.MetaKeyBody+`"], `...)
		if err := w.bytes(r.Body); err != nil {
			return fmt.Errorf("request body: %w", err)
		}
		w.b = append(w.b, ']')
	}
	w.endDict()
	return nil
}

func (w *jw) response(r *frontier.Response) error {
	w.beginDict()
	w.field(true, "url")
	if err := w.other(r.URL, "url"); err != nil {
		return err
	}
	w.endField()
	w.field(false, "status_code")
	w.otherInt(int64(r.Status))
	w.endField()
	w.field(false, "meta")
	req := r.Request
	if req == nil {
		req = &frontier.Request{}
	}
	if err := w.meta(req); err != nil {
		return err
	}
	w.endField()
	w.field(false, "body")
	if r.Body == nil {
		w.b = append(w.b, `["other", null]`...)
	} else {
		w.b = append(w.b, `["bytes", "`...)
		w.b = base64.StdEncoding.AppendEncode(w.b, r.Body)
		w.b = append(w.b, `"]`...)
	}
	w.endField()
	w.endDict()
	return nil
}

// value writes v converted by Frontera's _convert_and_save_type.
func (w *jw) value(v frontier.Value, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("nesting deeper than %d", MaxDepth)
	}
	switch v := v.(type) {
	case []byte:
		return w.bytes(v)
	case frontier.Map:
		w.beginDict()
		for i, e := range v {
			if i > 0 {
				w.b = append(w.b, ", "...)
			}
			w.b = append(w.b, '[')
			if err := w.value(e.Key, depth+1); err != nil {
				return fmt.Errorf("key %s: %w", describeKey(e.Key), err)
			}
			w.b = append(w.b, ", "...)
			if err := w.value(e.Value, depth+1); err != nil {
				return fmt.Errorf("[%s]: %w", describeKey(e.Key), err)
			}
			w.b = append(w.b, ']')
		}
		w.endDict()
		return nil
	case []frontier.Value:
		return w.list("list", v, depth)
	case frontier.Tuple:
		return w.list("tuple", v, depth)
	}
	w.b = append(w.b, `["other", `...)
	switch v := v.(type) {
	case nil:
		w.b = append(w.b, "null"...)
	case bool:
		w.b = strconv.AppendBool(w.b, v)
	case int64:
		w.b = strconv.AppendInt(w.b, v, 10)
	case uint64:
		w.b = strconv.AppendUint(w.b, v, 10)
	case int:
		w.b = strconv.AppendInt(w.b, int64(v), 10)
	case int32:
		w.b = strconv.AppendInt(w.b, int64(v), 10)
	case uint32:
		w.b = strconv.AppendUint(w.b, uint64(v), 10)
	case float64:
		w.b = appendPyFloat(w.b, v)
	case float32:
		w.b = appendPyFloat(w.b, float64(v))
	case string:
		if !utf8.ValidString(v) {
			return fmt.Errorf("str value %q is not UTF-8", v)
		}
		w.b = appendJSONString(w.b, v)
	default:
		return fmt.Errorf("value of type %T is not a frontier.Value", v)
	}
	w.b = append(w.b, ']')
	return nil
}

func (w *jw) list(kind string, l []frontier.Value, depth int) error {
	w.b = append(w.b, `["`...)
	w.b = append(w.b, kind...)
	w.b = append(w.b, `", [`...)
	for i, x := range l {
		if i > 0 {
			w.b = append(w.b, ", "...)
		}
		if err := w.value(x, depth+1); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
	}
	w.b = append(w.b, "]]"...)
	return nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s the way Python's json.dumps does with ensure_ascii=True. s must be valid UTF-8.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			b = appendJSONASCII(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		b = appendJSONRune(b, r)
	}
	return append(b, '"')
}

// appendJSONASCII writes one ASCII byte of a JSON string: Python escapes everything outside ' '..'~'.
func appendJSONASCII(b []byte, c byte) []byte {
	switch {
	case c == '"':
		return append(b, '\\', '"')
	case c == '\\':
		return append(b, '\\', '\\')
	case c == '\n':
		return append(b, '\\', 'n')
	case c == '\r':
		return append(b, '\\', 'r')
	case c == '\t':
		return append(b, '\\', 't')
	case c == '\b':
		return append(b, '\\', 'b')
	case c == '\f':
		return append(b, '\\', 'f')
	case c < 0x20 || c == 0x7f:
		return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
	}
	return append(b, c)
}

// appendJSONRune writes a non-ASCII rune as \uXXXX, or a UTF-16 surrogate pair above the BMP.
func appendJSONRune(b []byte, r rune) []byte {
	if r >= 0x10000 {
		r -= 0x10000
		b = appendU4(b, 0xd800+(r>>10))
		return appendU4(b, 0xdc00+(r&0x3ff))
	}
	return appendU4(b, r)
}

// appendJSONBytes is appendJSONString for a []byte holding UTF-8 (checked by the caller).
func appendJSONBytes(b []byte, s []byte) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			b = appendJSONASCII(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		i += size
		b = appendJSONRune(b, r)
	}
	return append(b, '"')
}

func appendU4(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// appendPyFloat writes f as Python's float.__repr__ (and json.dumps) does: the shortest round-tripping digits,
// positional when the decimal exponent is in [-4, 16), else scientific with a sign and at least two exponent
// digits; integral values keep ".0".
func appendPyFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // [-]d[.ddd]e±XX
	neg := e[0] == '-'
	if neg {
		e = e[1:]
		b = append(b, '-')
	}
	ePos := 0
	for i, c := range e {
		if c == 'e' {
			ePos = i
			break
		}
	}
	var digits [24]byte
	nd := 0
	for _, c := range e[:ePos] {
		if c != '.' {
			digits[nd] = c
			nd++
		}
	}
	exp, _ := strconv.Atoi(string(e[ePos+1:]))
	decpt := exp + 1 // digits d1 d2 … with the point after decpt digits
	if -4 < decpt && decpt <= 16 {
		switch {
		case decpt <= 0:
			b = append(b, '0', '.')
			for range -decpt {
				b = append(b, '0')
			}
			b = append(b, digits[:nd]...)
		case decpt >= nd:
			b = append(b, digits[:nd]...)
			for range decpt - nd {
				b = append(b, '0')
			}
			b = append(b, '.', '0')
		default:
			b = append(b, digits[:decpt]...)
			b = append(b, '.')
			b = append(b, digits[decpt:nd]...)
		}
		return b
	}
	b = append(b, digits[0])
	if nd > 1 {
		b = append(b, '.')
		b = append(b, digits[1:nd]...)
	}
	b = append(b, 'e')
	if exp < 0 {
		b = append(b, '-')
		exp = -exp
	} else {
		b = append(b, '+')
	}
	if exp < 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, int64(exp), 10)
}
