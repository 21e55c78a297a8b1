package codec

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	frontier "github.com/frontiercrawl/frontier"
)

// DecodeRequest decodes a spider-feed item (a request dict).
func (JSON) DecodeRequest(p []byte) (*frontier.Request, error) {
	d, err := decodeTyped(p)
	if err != nil {
		return nil, fmt.Errorf("codec: json: request: %w", err)
	}
	r, err := requestFromDict(d)
	if err != nil {
		return nil, fmt.Errorf("codec: json: request: %w", err)
	}
	return r, nil
}

// DecodeMessage decodes one message dict. An unknown "type" wraps ErrUnknownTag.
func (JSON) DecodeMessage(p []byte) (frontier.Message, error) {
	d, err := decodeTyped(p)
	if err != nil {
		return nil, fmt.Errorf("codec: json: %w", err)
	}
	m, name, err := messageFromDict(d)
	if err != nil {
		if name == "" {
			return nil, fmt.Errorf("codec: json: %w", err)
		}
		return nil, fmt.Errorf("codec: json: %s: %w", name, err)
	}
	return m, nil
}

// jsonNumber is a JSON number kept as text until its kind (int or float) is known.
type jsonNumber string

type jsonScanner struct {
	b   []byte
	off int
}

func (s *jsonScanner) errf(kind error, format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s: %w", s.off, fmt.Sprintf(format, args...), kind)
}

func (s *jsonScanner) ws() {
	for s.off < len(s.b) {
		switch s.b[s.off] {
		case ' ', '\t', '\n', '\r':
			s.off++
		default:
			return
		}
	}
}

func (s *jsonScanner) lit(word string, v any) (any, error) {
	if len(s.b)-s.off < len(word) {
		return nil, s.errf(ErrTruncated, "input ends inside %s", word)
	}
	if string(s.b[s.off:s.off+len(word)]) != word {
		return nil, s.errf(ErrMalformed, "invalid literal")
	}
	s.off += len(word)
	return v, nil
}

func (s *jsonScanner) number() (any, error) {
	start := s.off
	if s.b[s.off] == '-' {
		s.off++
		if s.off < len(s.b) && s.b[s.off] == 'I' {
			if _, err := s.lit("Infinity", nil); err != nil {
				return nil, err
			}
			return jsonNumber("-Infinity"), nil
		}
	}
	digits := func() int {
		n := 0
		for s.off < len(s.b) && s.b[s.off] >= '0' && s.b[s.off] <= '9' {
			s.off++
			n++
		}
		return n
	}
	if s.off < len(s.b) && s.b[s.off] == '0' {
		s.off++
	} else if digits() == 0 {
		return nil, s.errf(ErrMalformed, "invalid number")
	}
	if s.off < len(s.b) && s.b[s.off] == '.' {
		s.off++
		if digits() == 0 {
			return nil, s.errf(ErrMalformed, "invalid number: no digits after the point")
		}
	}
	if s.off < len(s.b) && (s.b[s.off] == 'e' || s.b[s.off] == 'E') {
		s.off++
		if s.off < len(s.b) && (s.b[s.off] == '+' || s.b[s.off] == '-') {
			s.off++
		}
		if digits() == 0 {
			return nil, s.errf(ErrMalformed, "invalid number: no exponent digits")
		}
	}
	return jsonNumber(s.b[start:s.off]), nil
}

func (s *jsonScanner) hex4() (rune, error) {
	if len(s.b)-s.off < 4 {
		return 0, s.errf(ErrTruncated, "input ends inside a \\u escape")
	}
	var r rune
	for _, c := range s.b[s.off : s.off+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, s.errf(ErrMalformed, "invalid \\u escape")
		}
	}
	s.off += 4
	return r, nil
}

// rawStr reads a JSON string at s.off (which is '"'). Without escapes it returns a slice of the input (fresh is
// false); with escapes, a new buffer (fresh is true). Either way the bytes are valid UTF-8.
func (s *jsonScanner) rawStr() (p []byte, fresh bool, err error) {
	s.off++ // opening quote
	start := s.off
	// Fast path: no escapes.
	for s.off < len(s.b) {
		c := s.b[s.off]
		if c == '"' {
			p := s.b[start:s.off:s.off]
			s.off++
			if !utf8.Valid(p) {
				return nil, false, s.errf(ErrMalformed, "string is not valid UTF-8")
			}
			return p, false, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		s.off++
	}
	out := append([]byte(nil), s.b[start:s.off]...)
	for {
		if s.off >= len(s.b) {
			return nil, false, s.errf(ErrTruncated, "input ends inside a string")
		}
		c := s.b[s.off]
		switch {
		case c == '"':
			s.off++
			if !utf8.Valid(out) {
				return nil, false, s.errf(ErrMalformed, "string is not valid UTF-8")
			}
			return out, true, nil
		case c < 0x20:
			return nil, false, s.errf(ErrMalformed, "control character 0x%02x in a string", c)
		case c != '\\':
			out = append(out, c)
			s.off++
			continue
		}
		s.off++
		if s.off >= len(s.b) {
			return nil, false, s.errf(ErrTruncated, "input ends inside an escape")
		}
		e := s.b[s.off]
		s.off++
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, err := s.hex4()
			if err != nil {
				return nil, false, err
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xdc00 || len(s.b)-s.off < 6 || s.b[s.off] != '\\' || s.b[s.off+1] != 'u' {
					return nil, false, s.errf(ErrMalformed, "lone UTF-16 surrogate \\u%04x", r)
				}
				s.off += 2
				r2, err := s.hex4()
				if err != nil {
					return nil, false, err
				}
				if r2 < 0xdc00 || r2 > 0xdfff {
					return nil, false, s.errf(ErrMalformed, "lone UTF-16 surrogate \\u%04x", r)
				}
				r = utf16.DecodeRune(r, r2)
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, false, s.errf(ErrMalformed, "invalid escape \\%c", e)
		}
	}
}

// decodeTyped parses a whole document written by Frontera's _convert_and_save_type, one [type, value] pair,
// straight into a frontier.Value (no intermediate tree). The JSON is Python-flavoured: NaN, Infinity and
// -Infinity are numbers. Objects never occur in it and are rejected.
func decodeTyped(p []byte) (frontier.Value, error) {
	s := jsonScanner{b: p}
	v, err := s.typed(0, false)
	if err != nil {
		return nil, err
	}
	s.ws()
	if s.off != len(s.b) {
		return nil, s.errf(ErrMalformed, "trailing data")
	}
	return v, nil
}

// expect skips white space and consumes c.
func (s *jsonScanner) expect(c byte, what string) error {
	s.ws()
	if s.off >= len(s.b) {
		return s.errf(ErrTruncated, "input ends where %s should be", what)
	}
	if s.b[s.off] != c {
		if s.b[s.off] == '{' {
			return s.errf(ErrMalformed, "JSON object where Frontera's codec writes only arrays")
		}
		return s.errf(ErrMalformed, "want %s, got %q", what, s.b[s.off])
	}
	s.off++
	return nil
}

// arrayStart consumes the '[' of a JSON array and reports whether the array is empty (then its ']' is consumed
// too). Elements are then read with arrayNext between them:
//
//	for more, err := s.arrayStart(what); more; more, err = s.arrayNext(what) { … }
func (s *jsonScanner) arrayStart(what string) (more bool, err error) {
	if err := s.expect('[', what); err != nil {
		return false, err
	}
	s.ws()
	if s.off < len(s.b) && s.b[s.off] == ']' {
		s.off++
		return false, nil
	}
	return true, nil
}

// arrayNext consumes the ',' before another element (more is true) or the closing ']' (more is false).
func (s *jsonScanner) arrayNext(what string) (more bool, err error) {
	s.ws()
	if s.off >= len(s.b) {
		return false, s.errf(ErrTruncated, "input ends inside %s", what)
	}
	switch s.b[s.off] {
	case ',':
		s.off++
		return true, nil
	case ']':
		s.off++
		return false, nil
	}
	return false, s.errf(ErrMalformed, "want , or ] in %s, got %q", what, s.b[s.off])
}

// typed reads one [type, value] pair. For a dict key (isKey), the bytes keys Frontera uses come from
// internedKey, as in the msgpack decoder.
func (s *jsonScanner) typed(depth int, isKey bool) (frontier.Value, error) {
	if depth > MaxDepth {
		return nil, s.errf(ErrMalformed, "nesting deeper than %d", MaxDepth)
	}
	if err := s.expect('[', "a [type, value] pair"); err != nil {
		return nil, err
	}
	s.ws()
	if s.off >= len(s.b) {
		return nil, s.errf(ErrTruncated, "input ends inside a [type, value] pair")
	}
	if s.b[s.off] != '"' {
		return nil, s.errf(ErrMalformed, "type of a [type, value] pair is %q, want a string", s.b[s.off])
	}
	tagAt := s.off
	tag, _, err := s.rawStr()
	if err != nil {
		return nil, err
	}
	if err := s.expect(',', "',' after the type of a [type, value] pair"); err != nil {
		return nil, err
	}
	s.ws()
	var v frontier.Value
	switch string(tag) {
	case "bytes":
		if s.off >= len(s.b) || s.b[s.off] != '"' {
			return nil, s.errf(ErrMalformed, "bytes value is not a string")
		}
		p, fresh, err := s.rawStr()
		if err != nil {
			return nil, err
		}
		if isKey {
			if k, ok := internedKey(p); ok {
				v = k
				break
			}
		}
		if !fresh {
			p = bytes.Clone(p)
			if p == nil {
				p = []byte{}
			}
		}
		v = p
	case "dict":
		m := make(frontier.Map, 0, 8) // meta and domain maps hold 6 to 8 entries
		more, err := s.arrayStart("a dict")
		for i := 0; more && err == nil; i++ {
			var k, val frontier.Value
			if err = s.expect('[', "a [key, value] dict item"); err != nil {
				break
			}
			if k, err = s.typed(depth+1, true); err != nil {
				return nil, fmt.Errorf("dict key %d: %w", i, err)
			}
			switch k.(type) {
			case frontier.Map, []frontier.Value, frontier.Tuple:
				return nil, fmt.Errorf("dict key %d is an unhashable %T: %w", i, k, ErrMalformed)
			}
			if err = s.expect(',', "',' in a [key, value] dict item"); err != nil {
				break
			}
			if val, err = s.typed(depth+1, false); err != nil {
				return nil, fmt.Errorf("[%s]: %w", describeKey(k), err)
			}
			if err = s.expect(']', "the end of a [key, value] dict item"); err != nil {
				break
			}
			m = append(m, frontier.Entry{Key: k, Value: val})
			more, err = s.arrayNext("a dict")
		}
		if err != nil {
			return nil, err
		}
		v = m
	case "list", "tuple":
		l := []frontier.Value{}
		more, err := s.arrayStart("a list")
		for i := 0; more && err == nil; i++ {
			var x frontier.Value
			if x, err = s.typed(depth+1, false); err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			l = append(l, x)
			more, err = s.arrayNext("a list")
		}
		if err != nil {
			return nil, err
		}
		if tag[0] == 't' {
			v = frontier.Tuple(l)
		} else {
			v = l
		}
	case "other":
		if v, err = s.scalar(); err != nil {
			return nil, err
		}
	default:
		s.off = tagAt
		return nil, s.errf(ErrMalformed, "unknown value type %q", tag)
	}
	if err := s.expect(']', "the end of a [type, value] pair"); err != nil {
		return nil, err
	}
	return v, nil
}

// scalar reads the value of an "other" pair: null, a bool, a number or a string.
func (s *jsonScanner) scalar() (frontier.Value, error) {
	if s.off >= len(s.b) {
		return nil, s.errf(ErrTruncated, "input ends where a value should start")
	}
	switch c := s.b[s.off]; {
	case c == '"':
		p, _, err := s.rawStr()
		return string(p), err
	case c == 'n':
		return s.lit("null", nil)
	case c == 't':
		return s.lit("true", true)
	case c == 'f':
		return s.lit("false", false)
	case c == 'N', c == 'I', c == '-' || c >= '0' && c <= '9':
		var n any
		var err error
		switch c {
		case 'N':
			n, err = s.lit("NaN", jsonNumber("NaN"))
		case 'I':
			n, err = s.lit("Infinity", jsonNumber("Infinity"))
		default:
			n, err = s.number()
		}
		if err != nil {
			return nil, err
		}
		at := s.off
		v, err := numberValue(n.(jsonNumber))
		if err != nil {
			s.off = at
			return nil, s.errf(ErrMalformed, "%v", err)
		}
		return v, nil
	case c == '[' || c == '{':
		return nil, s.errf(ErrMalformed, "other value is a container, want a scalar")
	}
	return nil, s.errf(ErrMalformed, "unexpected byte %q", s.b[s.off])
}

func numberValue(n jsonNumber) (frontier.Value, error) {
	s := string(n)
	switch s {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '.' || c == 'e' || c == 'E' {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil && !isRangeErr(err) {
				return nil, fmt.Errorf("number %s: %w", s, ErrMalformed)
			}
			return f, nil // Python gives inf for out-of-range floats, as ParseFloat does
		}
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return u, nil
	}
	return nil, fmt.Errorf("integer %.40s does not fit 64 bits: %w", s, ErrMalformed)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// dictField returns the value under the str key name; with duplicate keys the last wins, as in Python's dict().
func dictField(m frontier.Map, name string) (frontier.Value, error) {
	for i := len(m) - 1; i >= 0; i-- {
		if k, ok := m[i].Key.(string); ok && k == name {
			return m[i].Value, nil
		}
	}
	return nil, fmt.Errorf("missing key %q: %w", name, ErrMalformed)
}

func asDict(v frontier.Value, what string) (frontier.Map, error) {
	m, ok := v.(frontier.Map)
	if !ok {
		return nil, fmt.Errorf("%s is %T, want a dict: %w", what, v, ErrMalformed)
	}
	return m, nil
}

func asText(v frontier.Value, what string) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	}
	return "", fmt.Errorf("%s is %T, want str or bytes: %w", what, v, ErrMalformed)
}

func asInt(v frontier.Value, what string) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case float64: // Python's int() truncates a float
		if v >= math.MinInt64 && v < math.MaxInt64 && !math.IsNaN(v) {
			return int64(v), nil
		}
	}
	return 0, fmt.Errorf("%s is %T %v, want an int: %w", what, v, v, ErrMalformed)
}

func requestFromDict(v frontier.Value) (*frontier.Request, error) {
	d, err := asDict(v, "request")
	if err != nil {
		return nil, err
	}
	r := &frontier.Request{}
	if u, err := dictField(d, "url"); err != nil {
		return nil, err
	} else if r.URL, err = asText(u, "url"); err != nil {
		return nil, err
	}
	m, err := dictField(d, "method")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.URL, err)
	}
	if m != nil {
		if r.Method, err = asText(m, "method"); err != nil {
			return nil, fmt.Errorf("%s: %w", r.URL, err)
		}
		if s, ok := methods[r.Method]; ok {
			r.Method = s
		}
	}
	h, err := dictField(d, "headers")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.URL, err)
	}
	if r.Headers, err = headersFromValue(h); err != nil {
		return nil, fmt.Errorf("%s: %w", r.URL, err)
	}
	c, err := dictField(d, "cookies")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.URL, err)
	}
	if c != nil {
		cm, err := asDict(c, "cookies")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.URL, err)
		}
		for _, e := range cm {
			k, err1 := asText(e.Key, "cookie name")
			val, err2 := asText(e.Value, "cookie value")
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("%s: cookies: want str → str, got %T → %T: %w", r.URL, e.Key, e.Value, ErrMalformed)
			}
			r.Cookies = append(r.Cookies, frontier.Cookie{Name: k, Value: val})
		}
	}
	meta, err := dictField(d, "meta")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.URL, err)
	}
	if r.Meta, err = metaFromValue(meta, &r.Body); err != nil {
		return nil, fmt.Errorf("%s: %w", r.URL, err)
	}
	return r, nil
}

func metaFromValue(v frontier.Value, body *[]byte) (frontier.Map, error) {
	if v == nil {
		return nil, nil
	}
	m, err := asDict(v, "meta")
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	for i, e := range m {
		if k, ok := e.Key.([]byte); ok && string(k) == frontier.MetaKeyBody {
			if p, ok := e.Value.([]byte); ok {
				*body = p
				return append(m[:i], m[i+1:]...), nil
			}
		}
	}
	return m, nil
}

func headersFromValue(v frontier.Value) (frontier.Headers, error) {
	if v == nil {
		return nil, nil
	}
	m, err := asDict(v, "headers")
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	h := make(frontier.Headers, len(m))
	for i, e := range m {
		name, err := asText(e.Key, "header name")
		if err != nil {
			return nil, err
		}
		h[i].Name = []byte(name)
		switch x := e.Value.(type) {
		case nil:
		case []byte, string:
			s, _ := asText(x, "")
			h[i].Values = [][]byte{[]byte(s)}
		case []frontier.Value, frontier.Tuple:
			var l []frontier.Value
			if t, ok := x.(frontier.Tuple); ok {
				l = t
			} else {
				l = x.([]frontier.Value)
			}
			h[i].Values = make([][]byte, len(l))
			for j, y := range l {
				s, err := asText(y, "header value")
				if err != nil {
					return nil, fmt.Errorf("header %q: %w", name, err)
				}
				h[i].Values[j] = []byte(s)
			}
		default:
			return nil, fmt.Errorf("header %q value is %T, want a list of bytes: %w", name, x, ErrMalformed)
		}
	}
	return h, nil
}

func responseFromDict(v frontier.Value) (*frontier.Response, error) {
	d, err := asDict(v, "response")
	if err != nil {
		return nil, err
	}
	r := &frontier.Response{Request: &frontier.Request{}}
	if u, err := dictField(d, "url"); err != nil {
		return nil, err
	} else if r.URL, err = asText(u, "url"); err != nil {
		return nil, err
	}
	r.Request.URL = r.URL
	st, err := dictField(d, "status_code")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.URL, err)
	}
	n, err := asInt(st, "status_code")
	if err != nil || n < math.MinInt32 || n > math.MaxInt32 {
		return nil, fmt.Errorf("%s: status_code %v is not an int status: %w", r.URL, st, ErrMalformed)
	}
	r.Status = int(n)
	meta, err := dictField(d, "meta")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.URL, err)
	}
	if r.Request.Meta, err = metaFromValue(meta, &r.Request.Body); err != nil {
		return nil, fmt.Errorf("%s: %w", r.URL, err)
	}
	body, err := dictField(d, "body")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.URL, err)
	}
	if body != nil {
		s, err := asText(body, "body")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.URL, err)
		}
		if r.Body, err = base64.StdEncoding.DecodeString(s); err != nil {
			return nil, fmt.Errorf("%s: body is not base64 (%v): %w", r.URL, err, ErrMalformed)
		}
	}
	return r, nil
}

func requestList(v frontier.Value, what string) ([]*frontier.Request, error) {
	var l []frontier.Value
	switch x := v.(type) {
	case []frontier.Value:
		l = x
	case frontier.Tuple:
		l = x
	default:
		return nil, fmt.Errorf("%s is %T, want a list: %w", what, v, ErrMalformed)
	}
	out := make([]*frontier.Request, len(l))
	for i, x := range l {
		r, err := requestFromDict(x)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", what, i, err)
		}
		out[i] = r
	}
	return out, nil
}

func messageFromDict(v frontier.Value) (frontier.Message, string, error) {
	d, err := asDict(v, "message")
	if err != nil {
		return nil, "", err
	}
	t, err := dictField(d, "type")
	if err != nil {
		return nil, "", err
	}
	name, ok := t.(string)
	if !ok {
		return nil, "", fmt.Errorf("type is %T, want str: %w", t, ErrUnknownTag)
	}
	field := func(k string) (frontier.Value, error) { return dictField(d, k) }
	switch name {
	case "page_crawled":
		r, err := field("r")
		if err != nil {
			return nil, name, err
		}
		resp, err := responseFromDict(r)
		if err != nil {
			return nil, name, err
		}
		return &frontier.PageCrawled{Response: resp}, name, nil
	case "links_extracted", "request_error", "update_score":
		rv, err := field("r")
		if err != nil {
			return nil, name, err
		}
		req, err := requestFromDict(rv)
		if err != nil {
			return nil, name, fmt.Errorf("r: %w", err)
		}
		switch name {
		case "links_extracted":
			lv, err := field("links")
			if err != nil {
				return nil, name, err
			}
			links, err := requestList(lv, "links")
			if err != nil {
				return nil, name, err
			}
			return &frontier.LinksExtracted{Request: req, Links: links}, name, nil
		case "request_error":
			ev, err := field("error")
			if err != nil {
				return nil, name, err
			}
			e, err := asText(ev, "error")
			if err != nil {
				return nil, name, err
			}
			return &frontier.RequestError{Request: req, Error: e}, name, nil
		}
		sv, err := field("score")
		if err != nil {
			return nil, name, err
		}
		var score float64
		switch s := sv.(type) {
		case float64:
			score = s
		case int64:
			score = float64(s)
		case uint64:
			score = float64(s)
		default:
			return nil, name, fmt.Errorf("score is %T, want a float: %w", sv, ErrMalformed)
		}
		bv, err := field("schedule")
		if err != nil {
			return nil, name, err
		}
		sch, ok := bv.(bool)
		if !ok {
			return nil, name, fmt.Errorf("schedule is %T, want a bool: %w", bv, ErrMalformed)
		}
		return &frontier.UpdateScore{Request: req, Score: score, Schedule: sch}, name, nil
	case "new_job_id":
		jv, err := field("job_id")
		if err != nil {
			return nil, name, err
		}
		id, err := asInt(jv, "job_id")
		if err != nil {
			return nil, name, err
		}
		return &frontier.NewJobID{ID: id}, name, nil
	case "offset":
		pv, err := field("partition_id")
		if err != nil {
			return nil, name, err
		}
		p, err := asInt(pv, "partition_id")
		if err != nil {
			return nil, name, err
		}
		if p < math.MinInt32 || p > math.MaxInt32 {
			return nil, name, fmt.Errorf("partition_id %d out of range: %w", p, ErrMalformed)
		}
		ov, err := field("offset")
		if err != nil {
			return nil, name, err
		}
		o, err := asInt(ov, "offset")
		if err != nil {
			return nil, name, err
		}
		return &frontier.Offset{Partition: int(p), Offset: o}, name, nil
	case "stats":
		sv, err := field("stats")
		if err != nil {
			return nil, name, err
		}
		m, err := asDict(sv, "stats")
		if err != nil {
			return nil, name, err
		}
		return &frontier.Stats{Map: m}, name, nil
	case "add_seeds":
		sv, err := field("seeds")
		if err != nil {
			return nil, name, err
		}
		seeds, err := requestList(sv, "seeds")
		if err != nil {
			return nil, name, err
		}
		return &frontier.AddSeeds{Seeds: seeds}, name, nil
	}
	return nil, "", fmt.Errorf("type %q: %w", name, ErrUnknownTag)
}
