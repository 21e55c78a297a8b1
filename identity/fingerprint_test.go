package identity

import (
	"encoding/base64"
	"encoding/json"
	frontier "github.com/frontiercrawl/frontier"
	"os"
	"slices"
	"strings"
	"testing"
)

type fingerprintVectors struct {
	ScrapyVersion string `json:"scrapy_version"`
	Keys          []struct {
		Key              string `json:"key"`
		SHA1             string `json:"sha1"`
		MD5              string `json:"md5"`
		HostnameLocal    string `json:"hostname_local"`
		HostnameLocalErr string `json:"hostname_local_err"`
	} `json:"keys"`
	Domains []struct {
		URL         string            `json:"url"`
		Domain      map[string]string `json:"domain"`
		Fingerprint string            `json:"fingerprint"`
		Err         string            `json:"err"`
	} `json:"domains"`
	Scrapy []struct {
		URL            string          `json:"url"`
		Method         string          `json:"method"`
		BodyB64        string          `json:"body_b64"`
		Headers        [][]interface{} `json:"headers"`
		IncludeHeaders []string        `json:"include_headers"`
		KeepFragments  bool            `json:"keep_fragments"`
		VerbatimURL    bool            `json:"verbatim_url"`
		Fingerprint    string          `json:"fingerprint"`
		Fingerprint26  string          `json:"fingerprint_2_6"`
	} `json:"scrapy"`
}

func loadFingerprintVectors(t *testing.T) fingerprintVectors {
	t.Helper()
	b, err := os.ReadFile("testdata/fingerprint/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v fingerprintVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestFronteraKeyFingerprints(t *testing.T) {
	v := loadFingerprintVectors(t)
	if len(v.Keys) < 1000 {
		t.Fatalf("only %d keys", len(v.Keys))
	}
	hexOf := func(f KeyFingerprintFunc, key string) (string, error) {
		b, err := f(nil, key)
		return frontier.Fingerprint(b).Hex(), err
	}
	for _, k := range v.Keys {
		if got, _ := hexOf(SHA1Key, k.Key); got != k.SHA1 {
			t.Errorf("sha1(%q) = %s, want %s", k.Key, got, k.SHA1)
		}
		if got, _ := hexOf(MD5Key, k.Key); got != k.MD5 {
			t.Errorf("md5(%q) = %s, want %s", k.Key, got, k.MD5)
		}
		got, err := hexOf(HostnameLocalKey, k.Key)
		switch {
		case k.HostnameLocalErr != "" && err == nil:
			t.Errorf("hostname_local(%q) = %s, want an error (%s)", k.Key, got, k.HostnameLocalErr)
		case k.HostnameLocalErr == "" && err != nil:
			t.Errorf("hostname_local(%q): %v", k.Key, err)
		case k.HostnameLocalErr == "" && got != k.HostnameLocal:
			t.Errorf("hostname_local(%q) = %s, want %s", k.Key, got, k.HostnameLocal)
		}
	}
}

func TestDomainInfoVectors(t *testing.T) {
	v := loadFingerprintVectors(t)
	for _, d := range v.Domains {
		got, err := DomainInfo(d.URL)
		if d.Err != "" {
			if err == nil {
				t.Errorf("DomainInfo(%q) = %+v, want an error (%s)", d.URL, got, d.Err)
			}
			continue
		}
		if err != nil {
			t.Errorf("DomainInfo(%q): %v", d.URL, err)
			continue
		}
		want := frontier.MetaDomain{Netloc: d.Domain["netloc"], Name: d.Domain["name"], Scheme: d.Domain["scheme"]}
		if got != want {
			t.Errorf("DomainInfo(%q) = %+v, want %+v", d.URL, got, want)
		}
		if fp := DomainFingerprint(got.Name).Hex(); fp != d.Fingerprint {
			t.Errorf("DomainFingerprint(%q) = %s, want %s", got.Name, fp, d.Fingerprint)
		}
	}
}

func TestScrapyFingerprintVectors(t *testing.T) {
	v := loadFingerprintVectors(t)
	t.Logf("%d requests from Scrapy %s", len(v.Scrapy), v.ScrapyVersion)
	for _, s := range v.Scrapy {
		body, _ := base64.StdEncoding.DecodeString(s.BodyB64)
		r := &frontier.Request{URL: s.URL, Method: s.Method, Body: body}
		for _, h := range s.Headers {
			var vals [][]byte
			for _, x := range h[1].([]interface{}) {
				b, _ := base64.StdEncoding.DecodeString(x.(string))
				vals = append(vals, b)
			}
			r.Headers = append(r.Headers, frontier.Header{Name: []byte(h[0].(string)), Values: vals})
		}
		o := ScrapyOptions{IncludeHeaders: s.IncludeHeaders, KeepFragments: s.KeepFragments, VerbatimURL: s.VerbatimURL}
		fp, err := ScrapyFingerprint(r, CanonOptions{}, o)
		if err != nil || fp.Hex() != s.Fingerprint {
			t.Errorf("ScrapyFingerprint(%+v, %+v) = %s, %v; want %s", r, o, fp.Hex(), err, s.Fingerprint)
		}
		if s.Fingerprint26 != "" {
			fp, err := ScrapyFingerprint26(r, CanonOptions{}, o)
			if err != nil || fp.Hex() != s.Fingerprint26 {
				t.Errorf("ScrapyFingerprint26(%+v, %+v) = %s, %v; want %s", r, o, fp.Hex(), err, s.Fingerprint26)
			}
		}
	}
}

// TestFingerprintSpecVectors holds reference figures of Frontera 0.8 and Scrapy fingerprints for a few URLs
// (oracle/gen_fingerprints.py generates the full vector set from the real packages).
func TestFingerprintSpecVectors(t *testing.T) {
	hexKey := func(f KeyFingerprintFunc, key string) string {
		b, err := f(nil, key)
		if err != nil {
			t.Fatal(err)
		}
		return frontier.Fingerprint(b).Hex()
	}
	for _, tc := range []struct{ got, want string }{
		{hexKey(SHA1Key, "TestString"), "d598b03bee8866ae03b54cb6912efdfef107fd6d"},
		{hexKey(HostnameLocalKey, "https://news.yandex.ru/yandsearch?cl4url=top.rbc.ru/politics/14/07/2015/55a50b509a79473f583e104c&lang=ru&lr=54#fragment"), "1be68ff5587d241e22865288133b37d63ab49e13"},
		{hexKey(HostnameLocalKey, "TestString"), "97ddb3f898d2460d60d3f4d6cb7dbc5d0b8025f8"},
		{DomainFingerprint("www.example.com").Hex(), "068503358dddd23cf6cf00f5d6ad9a45cd0a8e03"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
	get := &frontier.Request{URL: "http://www.example.com/", Method: "GET"}
	for _, tc := range []struct {
		name, url, want string
	}{
		{"sha1", "http://www.example.com", "89e6a0649e06d83370cdf2cbfb05f363934a8d0c"},
		{"scrapy", "http://www.example.com/", "28fd680a059847ede1289d72f7a0e1c470f3d8d2"},
		{"scrapy_2.6", "http://www.example.com/", "818492beabce92630298c5cc9d88fbe69a26be47"},
	} {
		f, err := ParseFingerprinter(tc.name, CanonOptions{}, ScrapyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fp, err := f.URL(tc.url)
		if err != nil || fp.Hex() != tc.want {
			t.Errorf("%s(%s) = %s, %v; want %s", tc.name, tc.url, fp.Hex(), err, tc.want)
		}
		if tc.name != "sha1" {
			if fp, _ := f.Request(get); fp.Hex() != tc.want {
				t.Errorf("%s.Request = %s, want %s", tc.name, fp.Hex(), tc.want)
			}
		}
	}
}

func TestParseFingerprinter(t *testing.T) {
	for _, name := range append(FingerprinterNames(), "") {
		f, err := ParseFingerprinter(name, CanonOptions{}, ScrapyOptions{})
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if _, err := f.URL("http://example.com/a?b=1"); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
	_, err := ParseFingerprinter("crc64", CanonOptions{}, ScrapyOptions{})
	if err == nil || !strings.Contains(err.Error(), "crc64") || !strings.Contains(err.Error(), "hostname_local") {
		t.Errorf("unknown name: error %v should name it and list the known ones", err)
	}
	if !slices.Contains(FingerprinterNames(), "scrapy_2.6") {
		t.Error("scrapy_2.6 missing")
	}
	f, _ := ParseFingerprinter("sha1", CanonOptions{}, ScrapyOptions{})
	if _, err := f.URL("http://[::1/"); err == nil {
		t.Error("invalid URL: no error")
	}
	if _, err := ParseCanonMode("w3lib-1.9"); err == nil || !strings.Contains(err.Error(), "w3lib-1.22") {
		t.Errorf("ParseCanonMode: %v", err)
	}
	for _, m := range []CanonMode{CanonW3lib25, CanonW3lib122} {
		if got, err := ParseCanonMode(m.String()); err != nil || got != m {
			t.Errorf("ParseCanonMode(%q) = %v, %v", m.String(), got, err)
		}
	}
}

// TestScrapyHeaderLookupASCIITitle is B1 (issue 16): Scrapy looks an include_headers name up with
// bytes.title(), which title-cases ASCII only, so a header whose stored name has a non-ASCII cased letter
// is never hashed. The header names are Scrapy's stored ones (request.headers.keys()); the expected
// digests are live Scrapy 2.19 fingerprint() and the 2.6 request_fingerprint formula.
func TestScrapyHeaderLookupASCIITitle(t *testing.T) {
	for _, tc := range []struct {
		stored   string // Scrapy's stored header name
		include  []string
		fp, fp26 string
	}{
		// Request(headers={"X-Ünï": b"1"}): stored "X-Ünï".title(); the lookup b"X-\xc3\xbcN\xc3\xaf" misses.
		{"X-\u00dcn\u00ef", []string{"X-\u00dcn\u00ef"}, "cebe46deeab7ee5915824a38cf73ee6f7eb0aba5", "628735d3a16b67b1dd5fbfbd10a15f2c28362bbd"},
		{"X-\u00dcn\u00ef", nil, "cebe46deeab7ee5915824a38cf73ee6f7eb0aba5", "628735d3a16b67b1dd5fbfbd10a15f2c28362bbd"},
		{"\u00c4", []string{"\u00e4"}, "cebe46deeab7ee5915824a38cf73ee6f7eb0aba5", "628735d3a16b67b1dd5fbfbd10a15f2c28362bbd"},
		// Request(headers={b"x-\xc3\xbcn": b"1"}): stored with bytes.title(), so the lookup hits.
		{"X-\u00fcN", []string{"x-\u00fcn"}, "472824316bc379808f405dafad630455053dc6e6", "193f092239d19c298d4fda7545c7904c0b70c890"},
		// An uncased non-ASCII character ends a word in both title()s.
		{"X-\u20acN", []string{"X-\u20acN"}, "3e3d049b0103dac659b98ed13e894de07aabeb77", "7aa0c575c8b4b2cb6dbc0a6200b87814965a32c9"},
		{"Accept", []string{"accept"}, "07b0eb91f3fc929f1a2410fdc8dbee0a7b1f2c22", "3bea5bc4bff0dad69d689a0dc436836d2fe07f9a"},
		// An ASCII name in another case is title-cased first, as Scrapy's Headers would have stored it.
		{"accept", []string{"ACCEPT"}, "07b0eb91f3fc929f1a2410fdc8dbee0a7b1f2c22", "3bea5bc4bff0dad69d689a0dc436836d2fe07f9a"},
	} {
		r := &frontier.Request{URL: "http://example.com/", Method: "GET",
			Headers: frontier.Headers{{Name: []byte(tc.stored), Values: [][]byte{[]byte("1")}}}}
		o := ScrapyOptions{IncludeHeaders: tc.include}
		if fp, err := ScrapyFingerprint(r, CanonOptions{}, o); err != nil || fp.Hex() != tc.fp {
			t.Errorf("ScrapyFingerprint(%q, include %q) = %s, %v; want %s", tc.stored, tc.include, fp.Hex(), err, tc.fp)
		}
		if fp, err := ScrapyFingerprint26(r, CanonOptions{}, o); err != nil || fp.Hex() != tc.fp26 {
			t.Errorf("ScrapyFingerprint26(%q, include %q) = %s, %v; want %s", tc.stored, tc.include, fp.Hex(), err, tc.fp26)
		}
	}
}
