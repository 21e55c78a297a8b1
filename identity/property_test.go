package identity

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	frontier "github.com/frontiercrawl/frontier"
)

func b64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPropertyRun compares generated URLs with the live Python packages: oracle/gen_property.py (run by
// oracle/record.sh; a few thousand cases with a fixed seed, FRONTIER_PROPERTY_CASES for a larger run)
// draws them with hypothesis (w3lib's own strategy, arbitrary text and a hostile-URL strategy) and
// records w3lib 2.5's canonicalize_url with drawn options, w3lib 2.5's and 1.22's with the defaults, and
// Frontera 0.8.1's sha1, md5 and hostname_local fingerprints of the canonical form; then Scrapy requests
// (header names given as str and as bytes, include_headers respelled) with Scrapy 2.19's fingerprint() and
// the 2.6 formula. Every case is compared; none is skipped.
func TestPropertyRun(t *testing.T) {
	f := openOracleFile(t, "property.jsonl", "the property-run cases")
	type result struct {
		Value *string `json:"value"`
		Error *string `json:"error"`
	}
	type pcase struct {
		Header          bool    `json:"header"`
		Strategy        string  `json:"strategy"`
		URL             string  `json:"url"`
		KeepBlankValues bool    `json:"keep_blank_values"`
		KeepFragments   bool    `json:"keep_fragments"`
		Canon           result  `json:"canon"`
		CanonDefault    result  `json:"canon_default"`
		Canon122        result  `json:"canon_122"`
		SHA1            *result `json:"sha1"`
		// strategy "requests"
		Method         string              `json:"method"`
		Body           string              `json:"body"`
		Headers        [][]json.RawMessage `json:"headers"`
		IncludeHeaders []string            `json:"include_headers"`
		VerbatimURL    bool                `json:"verbatim_url"`
		Scrapy         *result             `json:"scrapy"`
		Scrapy26       *result             `json:"scrapy_2_6"`
		MD5            *result             `json:"md5"`
		HostnameLocal  *result             `json:"hostname_local"`
	}
	check := func(what string, want result, got string, err error) string {
		switch {
		case want.Error != nil && err == nil:
			return fmt.Sprintf("%s = %q, Python raises %s", what, got, *want.Error)
		case want.Error == nil && want.Value == nil:
			return what + ": no value recorded"
		case want.Error == nil && err != nil:
			return fmt.Sprintf("%s: %v; Python gives %q", what, err, *want.Value)
		case want.Error == nil && got != *want.Value:
			return fmt.Sprintf("%s = %q, Python gives %q", what, got, *want.Value)
		}
		return ""
	}
	type tally struct{ cases, comparisons, agreed int }
	per := map[string]*tally{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	line, fails := 0, 0
	for sc.Scan() {
		line++
		var c pcase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("property.jsonl line %d: %v", line, err)
		}
		if c.Header {
			t.Logf("property cases: %s", sc.Bytes())
			continue
		}
		tl := per[c.Strategy]
		if tl == nil {
			tl = &tally{}
			per[c.Strategy] = tl
		}
		tl.cases++
		var diffs []string
		cmp := func(d string) {
			tl.comparisons++
			if d != "" {
				diffs = append(diffs, d)
				return
			}
			tl.agreed++
		}
		if c.Strategy == "requests" {
			r := &frontier.Request{URL: c.URL, Method: c.Method, Body: b64(t, c.Body)}
			for _, h := range c.Headers {
				var name string
				var vals []string
				if json.Unmarshal(h[0], &name) != nil || json.Unmarshal(h[1], &vals) != nil {
					t.Fatalf("property.jsonl line %d: bad header %s", line, h)
				}
				hd := frontier.Header{Name: b64(t, name)}
				for _, v := range vals {
					hd.Values = append(hd.Values, b64(t, v))
				}
				r.Headers = append(r.Headers, hd)
			}
			so := ScrapyOptions{IncludeHeaders: c.IncludeHeaders, KeepFragments: c.KeepFragments, VerbatimURL: c.VerbatimURL}
			what := fmt.Sprintf("(%q %s, headers %q, %+v)", c.URL, c.Method, r.Headers, so)
			fp, err := ScrapyFingerprint(r, CanonOptions{}, so)
			cmp(check("fingerprint"+what, *c.Scrapy, fp.Hex(), err))
			fp, err = ScrapyFingerprint26(r, CanonOptions{}, so)
			cmp(check("request_fingerprint 2.6"+what, *c.Scrapy26, fp.Hex(), err))
		} else {
			o := CanonOptions{DropBlankValues: !c.KeepBlankValues, KeepFragments: c.KeepFragments}
			got, err := o.Canonicalize(c.URL)
			cmp(check(fmt.Sprintf("canonicalize_url(%q, %+v)", c.URL, o), c.Canon, got, err))
			got, err = Canonicalize(c.URL)
			cmp(check(fmt.Sprintf("canonicalize_url(%q)", c.URL), c.CanonDefault, got, err))
			got, err = CanonOptions{Mode: CanonW3lib122}.Canonicalize(c.URL)
			cmp(check(fmt.Sprintf("w3lib 1.22 canonicalize_url(%q)", c.URL), c.Canon122, got, err))
			for _, fp := range []struct {
				name string
				want *result
			}{{"sha1", c.SHA1}, {"md5", c.MD5}, {"hostname_local", c.HostnameLocal}} {
				if fp.want == nil {
					continue // the canonical form failed (compared above): Frontera computes no fingerprint
				}
				fr, _ := ParseFingerprinter(fp.name, CanonOptions{}, ScrapyOptions{})
				d, err := fr.URL(c.URL)
				cmp(check(fmt.Sprintf("%s(canonicalize_url(%q))", fp.name, c.URL), *fp.want, d.Hex(), err))
			}
		}
		for _, d := range diffs {
			if fails++; fails <= 50 {
				t.Errorf("%s: %s", c.Strategy, d)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(per))
	total := 0
	for n := range per {
		names = append(names, n)
		total += per[n].cases
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("%-8s %6d cases, %7d comparisons, %7d agree", n, per[n].cases, per[n].comparisons, per[n].agreed)
	}
	if fails > 50 {
		t.Errorf("%d disagreements in all (the first 50 shown)", fails)
	}
	if total < 1000 {
		t.Errorf("only %d property cases: is the recording complete?", total)
	}
}
