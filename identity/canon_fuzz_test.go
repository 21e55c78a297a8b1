package identity

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzCanonicalize: never panics in either mode; the w3lib 2.5 form is a fixed point (canonicalising it
// again changes nothing; w3lib 1.22 is not idempotent, e.g. "%2541" → "%41" → "A", so only "no panic"
// holds there); and when the input parses with net/url as an absolute URL with a host, so does the output.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{
		"http://www.example.com", "HTTP://WWW.Example.COM:80/a%7eb/%2fc%3F/%41?q=%7e&z&b=a+b;c=d#frag",
		"http://user:PASS@Example.com:/p;params?x=1", "http://www.exämple.com/", "http://[::1]:8080/a/../b",
		"http://x.com/?c=%E9", "http://\xff/", "", "//a/b?c#d", "A://\u0384",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c25, err25 := CanonOptions{}.Canonicalize(in)
		_, _ = CanonOptions{Mode: CanonW3lib122}.Canonicalize(in)
		_, _ = CanonOptions{Mode: CanonW3lib122, KeepFragments: true, DropBlankValues: true}.Canonicalize(in)
		_, _ = CanonOptions{KeepFragments: true, DropBlankValues: true}.Canonicalize(in)
		if err25 != nil {
			return
		}
		if sc, _ := splitScheme(in); sc == "" || hasInvalidEscape(in) {
			// Idempotence is asked of URLs with a scheme: w3lib decodes "%41:0" to "A:0", which then
			// parses as scheme "a".
			// w3lib is not idempotent here either: decoding can assemble a new escape next to a literal
			// "%" (canonicalize_url("/%2%41") is "/%2A", whose canonical form is "/*").
			return
		}
		again, err := CanonOptions{}.Canonicalize(c25)
		if err != nil {
			t.Fatalf("canon(%q) = %q, which does not canonicalise: %v", in, c25, err)
		}
		if again != c25 {
			t.Fatalf("not idempotent: canon(%q) = %q, canon of that = %q", in, c25, again)
		}
		// Re-parsing is asked of absolute URLs only: w3lib turns the relative reference "%3A" into ":",
		// which net/url reads as an empty scheme.
		// Nor of a canonical form with a space: w3lib's IDNA 2003 mapping can put one in the host
		// (U+0384 maps to a space and U+0301, so canonicalize_url("http://\u0384/") is
		// "http://xn-- -xbb/" in w3lib 2.5 too), and net/url rejects a space in a host.
		if u, err := url.Parse(in); err == nil && u.Scheme != "" && u.Host != "" && !strings.Contains(c25, " ") {
			if _, err := url.Parse(c25); err != nil {
				t.Fatalf("canon(%q) = %q does not re-parse: %v", in, c25, err)
			}
		}
	})
}

func hasInvalidEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 >= len(s) {
				return true
			}
			if _, ok := unhex(s[i+1]); !ok {
				return true
			}
			if _, ok := unhex(s[i+2]); !ok {
				return true
			}
		}
	}
	return false
}

// FuzzCanonResolve: ResolveReference never panics, its result is a fixed point of NormalizeURL, parses
// with net/url (unless it holds a stray "%", which the URL Standard keeps), and canonicalises without error under w3lib 2.5.
func FuzzCanonResolve(f *testing.F) {
	for _, s := range [][2]string{
		{"http://example.com/a/b/c?q#f", "../d"}, {"", "HTTP://WWW.Example.COM:80/a/./b/../c"},
		{"http://example.com/", "//0x7f.1:0080/%2e%2E/x"}, {"https://a.b/", "http:\\\\x.y\\z?q#f"},
		{"http://[::1]/", "?a=b c"}, {"", "http://faß.de/"},
		{"http://example.org/foo/bar", "http:/example.com/"}, {"http://example.org/", "/\\/\\//example.org/../path"},
		{"https://a/", "///\\//\\//test"}, {"", "http://foo.0XFfFfFfFfFfFfFfFfFfAcE123"}, {"", "http://0x.1.0x"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, base, ref string) {
		u, err := ResolveReference(base, ref)
		if err != nil {
			return
		}
		again, err := NormalizeURL(u)
		if err != nil || again != u {
			t.Fatalf("ResolveReference(%q, %q) = %q, which normalises to %q, %v", base, ref, u, again, err)
		}
		// The URL Standard keeps a stray "%" as it is; net/url rejects it.
		if _, err := url.Parse(u); err != nil && !hasInvalidEscape(u) {
			t.Fatalf("ResolveReference(%q, %q) = %q does not parse: %v", base, ref, u, err)
		}
		if _, err := Canonicalize(u); err != nil {
			t.Fatalf("ResolveReference(%q, %q) = %q does not canonicalise: %v", base, ref, u, err)
		}
	})
}
