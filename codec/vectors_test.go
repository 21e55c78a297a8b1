package codec

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"

	frontier "github.com/frontiercrawl/frontier"
)

// vector is one line of testdata/vectors.jsonl.gz, written by oracle/gen_codec.py with Frontera's encoders.
type vector struct {
	Name    string          `json:"name"`
	Msg     json.RawMessage `json:"msg"`
	Msgpack string          `json:"msgpack"`
	JSON    *string         `json:"json"`
	Lossy   bool            `json:"lossy"`

	kind string
	msg  frontier.Message  // nil for feed items
	req  *frontier.Request // feed items
	mp   []byte
}

func loadVectors(t testing.TB) []*vector {
	t.Helper()
	f, err := os.Open("testdata/vectors.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(gz)
	sc.Buffer(nil, 16<<20)
	var out []*vector
	for sc.Scan() {
		v := &vector{}
		if err := json.Unmarshal(sc.Bytes(), v); err != nil {
			t.Fatalf("vector %d: %v", len(out), err)
		}
		if v.mp, err = hex.DecodeString(v.Msgpack); err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		if err := v.build(); err != nil {
			t.Fatalf("%s: build: %v", v.Name, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 500 {
		t.Fatalf("only %d vectors", len(out))
	}
	return out
}

// desc is the typed JSON form of a Python value (see desc() in oracle/gen_codec.py).
type desc map[string]json.RawMessage

func undesc(raw json.RawMessage) (frontier.Value, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var d desc
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	if len(d) != 1 {
		return nil, fmt.Errorf("description %s has %d keys", raw, len(d))
	}
	for k, v := range d {
		switch k {
		case "bool":
			var b bool
			err := json.Unmarshal(v, &b)
			return b, err
		case "i":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n, nil
			}
			return strconv.ParseUint(s, 10, 64)
		case "f":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			return strconv.ParseFloat(s, 64)
		case "s":
			var s string
			err := json.Unmarshal(v, &s)
			return s, err
		case "b":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			return hex.DecodeString(s)
		case "l", "t":
			var items []json.RawMessage
			if err := json.Unmarshal(v, &items); err != nil {
				return nil, err
			}
			l := make([]frontier.Value, len(items))
			for i, it := range items {
				x, err := undesc(it)
				if err != nil {
					return nil, err
				}
				l[i] = x
			}
			if k == "t" {
				return frontier.Tuple(l), nil
			}
			return l, nil
		case "m":
			var items [][2]json.RawMessage
			if err := json.Unmarshal(v, &items); err != nil {
				return nil, err
			}
			m := make(frontier.Map, len(items))
			for i, it := range items {
				k, err := undesc(it[0])
				if err != nil {
					return nil, err
				}
				x, err := undesc(it[1])
				if err != nil {
					return nil, err
				}
				m[i] = frontier.Entry{Key: k, Value: x}
			}
			return m, nil
		}
		return nil, fmt.Errorf("unknown description key %q", k)
	}
	panic("unreachable")
}

func undescMap(raw json.RawMessage) (frontier.Map, error) {
	v, err := undesc(raw)
	if err != nil || v == nil {
		return nil, err
	}
	m, ok := v.(frontier.Map)
	if !ok {
		return nil, fmt.Errorf("want a map, got %T", v)
	}
	return m, nil
}

func headersFromMap(m frontier.Map) (frontier.Headers, error) {
	var h frontier.Headers
	for _, e := range m {
		var name []byte
		switch k := e.Key.(type) {
		case []byte:
			name = k
		case string:
			name = []byte(k)
		default:
			return nil, fmt.Errorf("header name %T", e.Key)
		}
		x := frontier.Header{Name: name}
		switch v := e.Value.(type) {
		case []byte:
			x.Values = [][]byte{v}
		case []frontier.Value:
			for _, y := range v {
				x.Values = append(x.Values, y.([]byte))
			}
		}
		h = append(h, x)
	}
	return h, nil
}

type reqDesc struct {
	URL     string          `json:"url"`
	Method  string          `json:"method"`
	Headers json.RawMessage `json:"headers"`
	Cookies [][2]string     `json:"cookies"`
	Meta    json.RawMessage `json:"meta"`
	Body    *string         `json:"body"`
}

func (d *reqDesc) build() (*frontier.Request, error) {
	r := &frontier.Request{URL: d.URL, Method: d.Method}
	hm, err := undescMap(d.Headers)
	if err != nil {
		return nil, err
	}
	if r.Headers, err = headersFromMap(hm); err != nil {
		return nil, err
	}
	for _, c := range d.Cookies {
		r.Cookies = append(r.Cookies, frontier.Cookie{Name: c[0], Value: c[1]})
	}
	if r.Meta, err = undescMap(d.Meta); err != nil {
		return nil, err
	}
	if d.Body != nil {
		if r.Body, err = hex.DecodeString(*d.Body); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func buildRequests(ds []reqDesc) ([]*frontier.Request, error) {
	out := make([]*frontier.Request, len(ds))
	for i := range ds {
		r, err := ds[i].build()
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

func (v *vector) build() error {
	var m struct {
		Kind     string    `json:"kind"`
		Request  reqDesc   `json:"request"`
		Links    []reqDesc `json:"links"`
		Seeds    []reqDesc `json:"seeds"`
		Error    string    `json:"error"`
		Score    string    `json:"score"`
		Schedule bool      `json:"schedule"`
		ID       int64     `json:"id"`
		Part     int       `json:"partition"`
		Offset   int64     `json:"offset"`
		Stats    json.RawMessage
		Response struct {
			URL     string          `json:"url"`
			Status  int             `json:"status"`
			Headers json.RawMessage `json:"headers"`
			Body    *string         `json:"body"`
			Meta    json.RawMessage `json:"meta"`
		} `json:"response"`
	}
	if err := json.Unmarshal(v.Msg, &m); err != nil {
		return err
	}
	v.kind = m.Kind
	var err error
	switch m.Kind {
	case "feed":
		v.req, err = m.Request.build()
	case "le":
		msg := &frontier.LinksExtracted{}
		if msg.Request, err = m.Request.build(); err == nil {
			msg.Links, err = buildRequests(m.Links)
		}
		v.msg = msg
	case "re":
		msg := &frontier.RequestError{Error: m.Error}
		msg.Request, err = m.Request.build()
		v.msg = msg
	case "us":
		msg := &frontier.UpdateScore{Schedule: m.Schedule}
		if msg.Score, err = strconv.ParseFloat(m.Score, 64); err == nil {
			msg.Request, err = m.Request.build()
		}
		v.msg = msg
	case "of":
		v.msg = &frontier.Offset{Partition: m.Part, Offset: m.Offset}
	case "njid":
		v.msg = &frontier.NewJobID{ID: m.ID}
	case "st":
		msg := &frontier.Stats{}
		msg.Map, err = undescMap(m.Stats)
		v.msg = msg
	case "as":
		msg := &frontier.AddSeeds{}
		msg.Seeds, err = buildRequests(m.Seeds)
		v.msg = msg
	case "pc":
		rd := m.Response
		resp := &frontier.Response{URL: rd.URL, Status: rd.Status, Request: &frontier.Request{URL: rd.URL}}
		var hm frontier.Map
		if hm, err = undescMap(rd.Headers); err != nil {
			return err
		}
		if resp.Headers, err = headersFromMap(hm); err != nil {
			return err
		}
		if rd.Body != nil {
			if resp.Body, err = hex.DecodeString(*rd.Body); err != nil {
				return err
			}
		}
		resp.Request.Meta, err = undescMap(rd.Meta)
		v.msg = &frontier.PageCrawled{Response: resp}
	default:
		return fmt.Errorf("unknown kind %q", m.Kind)
	}
	return err
}

func (v *vector) encode(c Codec) ([]byte, error) {
	if v.req != nil {
		return c.EncodeRequest(v.req)
	}
	return c.EncodeMessage(v.msg)
}

func (v *vector) decodeAndReencode(c Codec, p []byte) ([]byte, error) {
	if v.kind == "feed" {
		r, err := c.DecodeRequest(p)
		if err != nil {
			return nil, err
		}
		return c.EncodeRequest(r)
	}
	m, err := c.DecodeMessage(p)
	if err != nil {
		return nil, err
	}
	if m.Tag() != v.kind {
		return nil, fmt.Errorf("decoded a %s, want %s", m.Tag(), v.kind)
	}
	return c.EncodeMessage(m)
}

func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(i-16, 0)
	return fmt.Sprintf("first difference at byte %d of %d/%d:\n got  …%x\n want …%x", i, len(a), len(b), a[lo:min(i+16, len(a))], b[lo:min(i+16, len(b))])
}

func firstDiffText(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(i-60, 0)
	return fmt.Sprintf("first difference at byte %d of %d/%d:\n got  …%s\n want …%s", i, len(a), len(b), a[lo:min(i+60, len(a))], b[lo:min(i+60, len(b))])
}

// TestEncodeMatchesFrontera builds each message in Go and compares our bytes with Frontera's (direction 1).
func TestEncodeMatchesFrontera(t *testing.T) {
	var nmp, njs int
	for _, v := range loadVectors(t) {
		if v.Lossy {
			continue
		}
		got, err := v.encode(Msgpack{})
		if err != nil {
			t.Errorf("%s: msgpack: %v", v.Name, err)
		} else if !bytes.Equal(got, v.mp) {
			t.Errorf("%s: msgpack bytes differ from Frontera's: %s", v.Name, firstDiff(got, v.mp))
		} else {
			nmp++
		}
		got, err = v.encode(JSON{})
		switch {
		case v.JSON == nil && err == nil:
			t.Errorf("%s: json: Frontera cannot encode this message (non-UTF-8 bytes) but we did", v.Name)
		case v.JSON == nil:
			njs++
		case err != nil:
			t.Errorf("%s: json: %v", v.Name, err)
		case string(got) != *v.JSON:
			t.Errorf("%s: json differs from Frontera's: %s", v.Name, firstDiffText(got, []byte(*v.JSON)))
		default:
			njs++
		}
	}
	t.Logf("msgpack: %d vectors byte-equal; json: %d agree", nmp, njs)
}

// TestDecodeFrontera decodes Frontera's bytes, re-encodes them and compares (direction 2).
func TestDecodeFrontera(t *testing.T) {
	var n int
	for _, v := range loadVectors(t) {
		got, err := v.decodeAndReencode(Msgpack{}, v.mp)
		switch {
		case err != nil:
			t.Errorf("%s: msgpack: %v", v.Name, err)
		case !v.Lossy && !bytes.Equal(got, v.mp):
			t.Errorf("%s: msgpack re-encoding differs: %s", v.Name, firstDiff(got, v.mp))
		default:
			n++
		}
		if v.JSON == nil {
			continue
		}
		got, err = v.decodeAndReencode(JSON{}, []byte(*v.JSON))
		switch {
		case err != nil:
			t.Errorf("%s: json: %v", v.Name, err)
		case !v.Lossy && string(got) != *v.JSON:
			t.Errorf("%s: json re-encoding differs: %s", v.Name, firstDiffText(got, []byte(*v.JSON)))
		default:
			n++
		}
	}
	t.Logf("%d decodings agree", n)
}

// TestMsgpackDecoderFrontera decodes Frontera's vectors twice over with one MsgpackDecoder (the second pass meets
// every domain map it decoded in the first) and holds it to Msgpack.DecodeMessage: the same errors, byte-equal
// re-encodings.
func TestMsgpackDecoderFrontera(t *testing.T) {
	vs := loadVectors(t)
	dec := NewMsgpackDecoder()
	var n int
	for pass := range 2 {
		for _, v := range vs {
			if v.kind == "feed" {
				continue
			}
			want, werr := Msgpack{}.DecodeMessage(v.mp)
			got, err := dec.DecodeMessage(v.mp)
			if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
				t.Errorf("pass %d, %s: error %v, want %v", pass, v.Name, err, werr)
				continue
			}
			if err != nil {
				continue
			}
			a, err1 := Msgpack{}.EncodeMessage(want)
			b, err2 := Msgpack{}.EncodeMessage(got)
			if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
				t.Errorf("pass %d, %s: re-encodings differ (%v, %v): %s", pass, v.Name, err1, err2, firstDiff(b, a))
			}
			n++
		}
	}
	t.Logf("%d decodings agree", n)
}
