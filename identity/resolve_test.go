package identity

import (
	"errors"
	"testing"
)

// TestResolveReference: the expected values are Node.js 20's WHATWG URL (new URL(ref, base).href), except
// that schemes other than http and https are an error here (want "").
func TestResolveReference(t *testing.T) {
	for _, tc := range []struct{ base, ref, want string }{
		{"", "HTTP://WWW.Example.COM:80/a/./b/../c", "http://www.example.com/a/c"},
		{"", "https://example.com:443/", "https://example.com/"},
		{"", "https://example.com:8443/x", "https://example.com:8443/x"},
		{"", "http://example.com:/p", "http://example.com/p"},
		{"", "http://example.com:0080/p", "http://example.com/p"},
		{"", "  http://example.com/a\tb\nc  ", "http://example.com/abc"},
		{"", "http:\\\\example.com\\a\\b?c\\d#e\\f", "http://example.com/a/b?c\\d#e\\f"},
		{"", "http://example.com/a/%2e%2E/b/%2e/c", "http://example.com/b/c"},
		{"", "http://example.com", "http://example.com/"},
		{"", "http://example.com?q=1", "http://example.com/?q=1"},
		{"", "http://exa mple.com/", ""},
		{"", "http://www.Ex\u00c4mple.com/", "http://www.xn--exmple-cua.com/"},
		{"", "http://fa\u00df.de/", "http://xn--fa-hia.de/"},
		{"", "http://0x7f.1/", "http://127.0.0.1/"},
		{"", "http://2130706433/", "http://127.0.0.1/"},
		{"", "http://[2001:DB8:0:0:0:0:0:1]:80/", "http://[2001:db8::1]/"},
		{"", "http://[::ffff:1.2.3.4]/", "http://[::ffff:102:304]/"},
		{"", "http://user:pass@Example.com/", "http://user:pass@example.com/"},
		{"", "http://user:@example.com/", "http://user@example.com/"},
		{"", "http://@example.com/", "http://example.com/"},
		{"", "http://example.com/a b?c d#e f", "http://example.com/a%20b?c%20d#e%20f"},
		{"", "http://example.com/\u00e4?\u00f6#\u00fc", "http://example.com/%C3%A4?%C3%B6#%C3%BC"},
		{"", "http://example.com/{x}`|^", "http://example.com/%7Bx%7D%60|^"},
		{"", "http://example.com/?a='b'", "http://example.com/?a=%27b%27"},
		{"", "http:example.com/x", "http://example.com/x"},
		{"", "http:/example.com/x", "http://example.com/x"},
		{"", "mailto:a@b.com", ""},
		{"", "javascript:alert(1)", ""},
		{"", "ftp://example.com/", ""},
		{"", "/relative", ""},
		{"", "http://example.com:99999/", ""},
		{"", "http://example.com:8a/", ""},
		{"", "http:///x", "http://x/"},
		{"", "http://a%41.com/", "http://aa.com/"},
		{"", "http://1.2.3.256/", ""},
		{"", "http://example.com./a", "http://example.com./a"},
		{"", "http://EXAMPLE.com/%7e/%41", "http://example.com/%7e/%41"},
		{"http://example.com/a/b/c?q#f", "d", "http://example.com/a/b/d"},
		{"http://example.com/a/b/c?q#f", "../d", "http://example.com/a/d"},
		{"http://example.com/a/b/c?q#f", "../../../../d", "http://example.com/d"},
		{"http://example.com/a/b/c?q#f", "/d?x", "http://example.com/d?x"},
		{"http://example.com/a/b/c?q#f", "?x", "http://example.com/a/b/c?x"},
		{"http://example.com/a/b/c?q#f", "#g", "http://example.com/a/b/c?q#g"},
		{"http://example.com/a/b/c?q#f", "", "http://example.com/a/b/c?q"},
		{"http://example.com/a/b/c?q#f", "//other.com/x", "http://other.com/x"},
		{"http://example.com/a/b/c?q#f", "https://other.com:443/x/./y", "https://other.com/x/y"},
		{"http://example.com/a/b/c?q#f", "http:d", "http://example.com/a/b/d"},
		{"http://example.com/a/b/c?q#f", "https:d", "https://d/"},
		{"http://example.com/a/b/", ".", "http://example.com/a/b/"},
		{"http://example.com/a/b/", "..", "http://example.com/a/"},
		{"http://example.com/a/b/", "./", "http://example.com/a/b/"},
		{"http://example.com:8080/a", "b", "http://example.com:8080/b"},
		{"http://user@example.com/a", "b", "http://user@example.com/b"},
		{"http://example.com/a", "\\\\other.com\\x", "http://other.com/x"},
		{"http://example.com/a", "  b  ", "http://example.com/b"},
		{"https://example.com/a", "mailto:x@y", ""},
		// B2 (issue 16): one slash after a base's own special scheme is a path (special relative or
		// authority state, then relative state).
		{"http://example.org/foo/bar", "http:/example.com/", "http://example.org/example.com/"},
		{"https://example.org/foo/bar", "https:/x/../y", "https://example.org/y"},
		{"http://example.org/foo/bar", "http:\\\\example.com/", "http://example.com/"},
		{"http://example.org/foo/bar", "https:/example.com/", "https://example.com/"},
		// B3: after "//" the special authority ignore slashes state skips every further "/" and "\".
		{"http://example.org/foo/bar", "///test", "http://test/"},
		{"http://example.org/foo/bar", "///\\//\\//test", "http://test/"},
		{"http://example.org/foo/bar", "///example.org/path", "http://example.org/path"},
		{"http://example.org/foo/bar", "/\\/\\//example.org/../path", "http://example.org/path"},
		{"https://example.org/", "////", ""},
		// B4: a host that ends in a number is an IPv4 address or an error (IPv4 parser, ends-in-a-number).
		{"", "http://0xffffffff1", ""},
		{"", "http://foo.0XFfFfFfFfFfFfFfFfFfAcE123", ""},
		{"", "http://foo.0x", ""},
		{"", "http://foo.09", ""},
		{"", "http://4294967296/", ""},
		{"", "http://0xffffffff/", "http://255.255.255.255/"},
		{"", "http://foo.0xz/", "http://foo.0xz/"},
	} {
		got, err := ResolveReference(tc.base, tc.ref)
		if tc.want == "" {
			if err == nil {
				t.Errorf("ResolveReference(%q, %q) = %q, want an error", tc.base, tc.ref, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ResolveReference(%q, %q) = %q, %v; want %q", tc.base, tc.ref, got, err, tc.want)
		}
	}
}

func TestNormalizeURLThenCanonicalize(t *testing.T) {
	// The reason the spider normalises first: w3lib keeps an explicit default port and dot segments
	// (1.22), so one page would get two fingerprints.
	a, _ := NormalizeURL("HTTP://Example.COM:80/a/./b?z=1&a=2#top")
	b, _ := NormalizeURL("http://example.com/a/b?z=1&a=2")
	for _, m := range []CanonMode{CanonW3lib25, CanonW3lib122} {
		ca, err1 := CanonOptions{Mode: m}.Canonicalize(a)
		cb, err2 := CanonOptions{Mode: m}.Canonicalize(b)
		if err1 != nil || err2 != nil || ca != cb || ca != "http://example.com/a/b?a=2&z=1" {
			t.Errorf("%v: %q vs %q (%v, %v)", m, ca, cb, err1, err2)
		}
	}
	if _, err := NormalizeURL("mailto:a@b.c"); !errors.Is(err, ErrUnsupportedScheme) {
		t.Errorf("mailto: %v", err)
	}
}
