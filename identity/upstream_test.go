package identity

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	frontier "github.com/frontiercrawl/frontier"
)

// The upstream projects' own test suites, replayed through this package.
//
// oracle/record.sh (run by deploy/test.sh after oracle/setup.sh) runs w3lib 2.5.0's tests/test_url.py and
// Scrapy 2.19.0's tests/test_utils_request.py from their source distributions with a pytest plugin
// (oracle/upstream_record.py) that records every canonicalize_url and fingerprint call with its live
// result, and the Scrapy 2.6 request_fingerprint formula beside each fingerprint call. The tests here
// replay every recorded call. The calls that cannot apply, and the upstream tests that are not run, are
// the rows of oracle/upstream_exclusions.tsv, each with its reason; nothing else is skipped.

// oracleDir is where oracle/setup.sh and oracle/record.sh put what they download and record.
func oracleDir() string {
	if d := os.Getenv("FRONTIER_ORACLE_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", ".oracle")
}

// openOracleFile opens a file under oracleDir, skipping the test when it is missing, or failing it
// under CI=true, where the test command builds it.
func openOracleFile(t *testing.T, name, what string) *os.File {
	t.Helper()
	p := filepath.Join(oracleDir(), name)
	f, err := os.Open(p)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (%s) is missing under CI=true: deploy/test.sh builds it with oracle/setup.sh and oracle/record.sh: %v", p, what, err)
		}
		t.Skipf("%s (%s) is missing; run oracle/setup.sh and oracle/record.sh: %v", p, what, err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// exclusions is oracle/upstream_exclusions.tsv: kind, key, reason per row. Kinds: "deselect" (an upstream
// test not run, read by oracle/record.sh), "call" (a rule classifying recorded calls, see classifyCall),
// "whatwg" (one urltestdata.json case, key = strconv.Quote(base) + " " + strconv.Quote(input)).
type exclusions map[string]map[string]string // kind → key → reason

func loadExclusions(t *testing.T) exclusions {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "oracle", "upstream_exclusions.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	ex := exclusions{}
	for i, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 || f[2] == "" {
			t.Fatalf("upstream_exclusions.tsv line %d: want kind, key and a reason, tab-separated: %q", i+1, line)
		}
		if ex[f[0]] == nil {
			ex[f[0]] = map[string]string{}
		}
		ex[f[0]][f[1]] = f[2]
	}
	return ex
}

// pyValue is a Python value as oracle/upstream_record.py encodes it.
type pyValue struct {
	Str   *string   `json:"str"`
	Bytes *string   `json:"bytes"`
	Type  string    `json:"type"`
	Repr  string    `json:"repr"`
	Items []pyValue `json:"items"`
}

// text returns the value as a Go string: a str as UTF-8, bytes as they are.
func (v *pyValue) text() (string, bool) {
	switch {
	case v == nil:
		return "", false
	case v.Str != nil:
		return *v.Str, true
	case v.Bytes != nil:
		b, err := base64.StdEncoding.DecodeString(*v.Bytes)
		return string(b), err == nil
	}
	return "", false
}

func (v *pyValue) String() string {
	switch {
	case v == nil:
		return "None"
	case v.Str != nil:
		return strconv.Quote(*v.Str)
	case v.Bytes != nil:
		s, _ := v.text()
		return "b" + strconv.Quote(s)
	}
	return v.Repr
}

type upstreamCall struct {
	Suite string `json:"suite"`
	Test  string `json:"test"`
	Func  string `json:"func"`
	// canonicalize_url
	URL             *pyValue        `json:"url"`
	Unparsed        *pyValue        `json:"unparsed"`
	KeepBlankValues bool            `json:"keep_blank_values"`
	KeepFragments   bool            `json:"keep_fragments"`
	Encoding        *pyValue        `json:"encoding"`
	QuerySeparator  *pyValue        `json:"query_separator"`
	Result          json.RawMessage `json:"result"`
	Error           *string         `json:"error"`
	// fingerprint
	Request *struct {
		Type        string       `json:"type"`
		Repr        string       `json:"repr"`
		URL         *pyValue     `json:"url"`
		Method      *pyValue     `json:"method"`
		Body        *pyValue     `json:"body"`
		Headers     [][]pyValue0 `json:"headers"`
		VerbatimURL bool         `json:"verbatim_url"`
	} `json:"request"`
	IncludeHeaders *pyValue `json:"include_headers"`
	Result26       *string  `json:"result_2_6"`
	Error26        *string  `json:"error_2_6"`
}

// pyValue0 is one element of a [name, [values]] header pair.
type pyValue0 = json.RawMessage

func isUTF8Name(v *pyValue) bool {
	if v == nil {
		return true
	}
	s, ok := v.text()
	if !ok {
		return false
	}
	switch strings.ReplaceAll(strings.ToLower(s), "-", "") {
	case "utf8", "utf_8", "u8", "utf":
		return true
	}
	return false
}

// classifyCall returns the exclusion rule (a "call" key of upstream_exclusions.tsv) that applies to c, or
// "" when c must be replayed. The rules look at the arguments only, never at the outcome.
func classifyCall(c *upstreamCall) string {
	switch c.Func {
	case "canonicalize_url":
		if c.URL == nil || c.URL.Type == "str-surrogates" {
			return "url-lone-surrogates"
		}
		if c.URL.Str == nil && c.URL.Bytes == nil && c.Unparsed == nil {
			return "url-other-type"
		}
		if !isUTF8Name(c.Encoding) {
			return "encoding-not-utf8"
		}
		if sep, _ := c.QuerySeparator.text(); sep != "&" {
			return "query-separator"
		}
	case "fingerprint":
		if c.Request == nil || c.Request.Type != "Request" {
			return "request-other-type"
		}
		if c.IncludeHeaders != nil {
			if c.IncludeHeaders.Items == nil {
				return "include-headers-other-type"
			}
			for _, it := range c.IncludeHeaders.Items {
				if it.Bytes != nil {
					if s, _ := it.text(); !isASCII(s) {
						return "include-headers-non-ascii-bytes"
					}
				}
				if it.Str == nil && it.Bytes == nil {
					return "include-headers-other-type"
				}
			}
		}
	default:
		return "unknown-function"
	}
	return ""
}

func decodeB64Value(t *testing.T, raw json.RawMessage) []byte {
	var v pyValue
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	s, ok := v.text()
	if !ok {
		t.Fatalf("header value %s is neither str nor bytes", raw)
	}
	return []byte(s)
}

// replayCall runs c through Frontier and returns a description of the disagreement, or "".
func replayCall(t *testing.T, c *upstreamCall) string {
	switch c.Func {
	case "canonicalize_url":
		in, _ := c.URL.text()
		if c.Unparsed != nil {
			in, _ = c.Unparsed.text()
		}
		o := CanonOptions{DropBlankValues: !c.KeepBlankValues, KeepFragments: c.KeepFragments}
		got, err := o.Canonicalize(in)
		var want pyValue
		_ = json.Unmarshal(c.Result, &want)
		w, ok := want.text()
		switch {
		case c.Error != nil && err == nil:
			return fmt.Sprintf("canonicalize_url(%s, %+v) = %q, w3lib raises %s", c.URL, o, got, *c.Error)
		case c.Error == nil && !ok:
			return fmt.Sprintf("canonicalize_url(%s): w3lib returned %s", c.URL, c.Result)
		case c.Error == nil && err != nil:
			return fmt.Sprintf("canonicalize_url(%s, %+v): %v; w3lib gives %q", c.URL, o, err, w)
		case c.Error == nil && got != w:
			return fmt.Sprintf("canonicalize_url(%s, %+v) = %q, w3lib gives %q", c.URL, o, got, w)
		}
	case "fingerprint":
		q := c.Request
		u, _ := q.URL.text()
		m, _ := q.Method.text()
		body, _ := q.Body.text()
		r := &frontier.Request{URL: u, Method: m, Body: []byte(body)}
		for _, h := range q.Headers {
			var vals []json.RawMessage
			if err := json.Unmarshal(h[1], &vals); err != nil {
				t.Fatal(err)
			}
			hd := frontier.Header{Name: decodeB64Value(t, h[0])}
			for _, v := range vals {
				hd.Values = append(hd.Values, decodeB64Value(t, v))
			}
			r.Headers = append(r.Headers, hd)
		}
		o := ScrapyOptions{KeepFragments: c.KeepFragments, VerbatimURL: q.VerbatimURL}
		if c.IncludeHeaders != nil {
			o.IncludeHeaders = []string{}
			for _, it := range c.IncludeHeaders.Items {
				s, _ := it.text()
				o.IncludeHeaders = append(o.IncludeHeaders, s)
			}
		}
		var want string
		_ = json.Unmarshal(c.Result, &want)
		fp, err := ScrapyFingerprint(r, CanonOptions{}, o)
		switch {
		case c.Error != nil && err == nil:
			return fmt.Sprintf("fingerprint(%q, %+v) = %s, Scrapy raises %s", u, o, fp.Hex(), *c.Error)
		case c.Error == nil && (err != nil || fp.Hex() != want):
			return fmt.Sprintf("fingerprint(%q %s, %+v) = %s, %v; Scrapy gives %s", u, m, o, fp.Hex(), err, want)
		}
		fp26, err := ScrapyFingerprint26(r, CanonOptions{}, o)
		switch {
		case c.Error26 != nil && err == nil:
			return fmt.Sprintf("request_fingerprint 2.6 (%q, %+v) = %s, the formula raises %s", u, o, fp26.Hex(), *c.Error26)
		case c.Error26 == nil && (c.Result26 == nil || err != nil || fp26.Hex() != *c.Result26):
			return fmt.Sprintf("request_fingerprint 2.6 (%q %s, %+v) = %s, %v; the formula gives %v", u, m, o, fp26.Hex(), err, *c.Result26)
		}
	}
	return ""
}

// TestUpstreamSuites replays every call recorded from the w3lib and Scrapy test suites.
func TestUpstreamSuites(t *testing.T) {
	ex := loadExclusions(t)
	f := openOracleFile(t, "upstream.jsonl", "the recorded upstream calls")
	type tally struct{ replayed, agreed int }
	perSuite := map[string]*tally{}
	excluded := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		n++
		var c upstreamCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("upstream.jsonl line %d: %v", n, err)
		}
		if rule := classifyCall(&c); rule != "" {
			if _, ok := ex["call"][rule]; !ok {
				t.Errorf("%s: call excluded by rule %q, which upstream_exclusions.tsv does not list", c.Test, rule)
			}
			excluded[rule]++
			continue
		}
		key := c.Suite + " " + c.Func
		if perSuite[key] == nil {
			perSuite[key] = &tally{}
		}
		perSuite[key].replayed++
		if d := replayCall(t, &c); d != "" {
			t.Errorf("%s: %s", c.Test, d)
			continue
		}
		perSuite[key].agreed++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("upstream.jsonl has no calls: the recording plugin saw none")
	}
	keys := make([]string, 0, len(perSuite))
	for k := range perSuite {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	total := 0
	for _, k := range keys {
		t.Logf("%-28s %4d replayed, %4d agree", k, perSuite[k].replayed, perSuite[k].agreed)
		total += perSuite[k].replayed
	}
	for _, k := range []string{"w3lib canonicalize_url", "scrapy fingerprint"} {
		if perSuite[k] == nil || perSuite[k].replayed < 50 {
			t.Errorf("%s: fewer than 50 calls replayed (%v): is the recording complete?", k, perSuite[k])
		}
	}
	rules := make([]string, 0, len(excluded))
	for r := range excluded {
		rules = append(rules, r)
	}
	sort.Strings(rules)
	for _, r := range rules {
		t.Logf("excluded %4d: %s (%s)", excluded[r], r, ex["call"][r])
	}
	t.Logf("%d calls recorded, %d replayed, %d excluded", n, total, n-total)
}

// whatwgCase is one object of WPT's url/resources/urltestdata.json.
type whatwgCase struct {
	Input   string  `json:"input"`
	Base    *string `json:"base"`
	Href    string  `json:"href"`
	Failure bool    `json:"failure"`
}

func webScheme(s string) string {
	s = strings.TrimLeft(s, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	s = removeTabNewline(s)
	scheme, _ := splitScheme(s)
	return scheme
}

// TestWHATWGURLTestData drives ResolveReference with the URL Standard's shared test data (urltestdata.json,
// installed by oracle/setup.sh from a registry package that ships it; .oracle/whatwg/SOURCE names it):
// every case with an http(s) base, and every case whose input is an absolute http(s) URL. The result must
// be the expected href, or an error where the Standard fails; a reference that resolves to another scheme
// must be ErrUnsupportedScheme.
func TestWHATWGURLTestData(t *testing.T) {
	ex := loadExclusions(t)
	f := openOracleFile(t, "whatwg/urltestdata.json", "WPT urltestdata.json")
	var raw []json.RawMessage
	if err := json.NewDecoder(f).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	if src, err := os.ReadFile(filepath.Join(oracleDir(), "whatwg", "SOURCE")); err == nil {
		t.Logf("urltestdata.json: %s", strings.TrimSpace(string(src)))
	}
	var withBase, absolute, agreed, otherScheme, excluded int
	for _, r := range raw {
		var c whatwgCase
		if json.Unmarshal(r, &c) != nil { // the comment strings
			continue
		}
		base := ""
		if c.Base != nil {
			base = *c.Base
		}
		bs, is := webScheme(base), webScheme(c.Input)
		var gotURL string
		var err error
		switch {
		case bs == "http" || bs == "https":
			withBase++
			gotURL, err = ResolveReference(base, c.Input)
		case is == "http" || is == "https":
			// An absolute http(s) input does not read a base of another scheme.
			absolute++
			gotURL, err = ResolveReference("", c.Input)
		default:
			continue
		}
		key := strconv.Quote(base) + " " + strconv.Quote(c.Input)
		if reason, ok := ex["whatwg"][key]; ok {
			excluded++
			t.Logf("excluded %s: %s (got %q, %v; the Standard: %q failure=%v)", key, reason, gotURL, err, c.Href, c.Failure)
			continue
		}
		hs := webScheme(c.Href)
		switch {
		case c.Failure:
			if err != nil {
				agreed++
				continue
			}
			t.Errorf("ResolveReference(%q, %q) = %q, the Standard fails", base, c.Input, gotURL)
		case hs != "http" && hs != "https":
			if errors.Is(err, ErrUnsupportedScheme) {
				otherScheme++
				agreed++
				continue
			}
			t.Errorf("ResolveReference(%q, %q) = %q, %v; want ErrUnsupportedScheme (the Standard: %q)", base, c.Input, gotURL, err, c.Href)
		case err != nil || gotURL != c.Href:
			t.Errorf("ResolveReference(%q, %q) = %q, %v; the Standard: %q", base, c.Input, gotURL, err, c.Href)
		default:
			agreed++
		}
	}
	t.Logf("%d cases with an http(s) base, %d absolute http(s) inputs: %d agree (%d of them rejected as another scheme), %d excluded",
		withBase, absolute, agreed, otherScheme, excluded)
	if withBase < 100 {
		t.Errorf("only %d cases with an http(s) base: is urltestdata.json complete?", withBase)
	}
}
