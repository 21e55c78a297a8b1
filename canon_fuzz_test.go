package frontier

import (
	"net/url"
	"testing"
)

// FuzzCanonicalize: never panics in either mode; the w3lib 2.5 form is a fixed point (canonicalising it
// again changes nothing; w3lib 1.22 is not idempotent, e.g. "%2541" → "%41" → "A", so only "no panic"
// holds there); and when the input parses with net/url, so does the output.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{
		"http://www.example.com", "HTTP://WWW.Example.COM:80/a%7eb/%2fc%3F/%41?q=%7e&z&b=a+b;c=d#frag",
		"http://user:PASS@Example.com:/p;params?x=1", "http://www.exämple.com/", "http://[::1]:8080/a/../b",
		"http://x.com/?c=%E9", "http://\xff/", "", "//a/b?c#d",
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
		if hasInvalidEscape(in) {
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
		if _, err := url.Parse(in); err == nil {
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
