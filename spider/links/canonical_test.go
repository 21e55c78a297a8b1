package links

import (
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier/identity"
)

// FuzzCanonicalURL holds the canonical-form fast path to the URL Standard: a URL it takes is one the full
// resolution returns unchanged, and both parse to the same URL.
func FuzzCanonicalURL(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkCanonical(t, s)
	})
}

var canonicalSeeds = []string{
	"http://127.0.0.4:40123/p12", "https://example.com/a/b;c?d=e&f=g#h", "http://host1.test/", "http://a-b.c.d/x:y@z",
	"http://Example.com/", "http://example.com:80/", "https://example.com:443/", "http://example.com:080/", "http://example.com",
	"http://1.2.3.04/", "http://1.2.3/", "http://0x7f.1/", "http://a.1/", "http://xn--bcher-kva.test/", "http://ab--c.test/",
	"http://-a.test/", "http://a..b/", "http://a.b./", "http://u@h/", "http://h/a/./b", "http://h/a/../b", "http://h/a/%2e/b",
	"http://h/a/.", "http://h/..?x", "http://h/%zz", "http://h/a%41", "http://h/?a'b", "http://h/a b", "http://h//x",
	"http://h:65536/", "http://h:65535/", "http://h:/", "HTTP://h/", "http:/h/", "ftp://h/", "http://h/#a#b", "http://256.1.1.1/",
}

func checkCanonical(t *testing.T, s string) {
	t.Helper()
	fast, ok := canonicalURL(s)
	if !ok {
		return
	}
	want, err := identity.ResolveReference("", s)
	if err != nil {
		t.Fatalf("canonicalURL took %q; the full resolution fails: %v", s, err)
	}
	if want != s {
		t.Fatalf("canonicalURL took %q; the URL Standard serialises it %q", s, want)
	}
	slow, err := parseResolved(want)
	if err != nil || fast.String() != slow.String() || *fast != *slow {
		t.Fatalf("%q: fast %#v, full %#v %v", s, fast, slow, err)
	}
	if noFrag, _, _ := strings.Cut(s, "#"); fast.String() != noFrag {
		t.Fatalf("%q: String %q, want the URL up to its fragment %q", s, fast, noFrag)
	}
}

// FuzzCollapseSpace holds collapseSpace to strings.Fields and strings.Join.
func FuzzCollapseSpace(f *testing.F) {
	for _, s := range []string{"", " ", "a", "a b", " a", "a ", "a  b", "a\tb", "a\u00a0b", "a\u3000", "next: page 3", "\x85x", "é b"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := collapseSpace(b), strings.Join(strings.Fields(string(b)), " "); got != want {
			t.Fatalf("collapseSpace(%q) = %q, want %q", b, got, want)
		}
	})
}

func TestCanonicalURL(t *testing.T) {
	for _, s := range canonicalSeeds {
		checkCanonical(t, s)
	}
	for _, s := range []string{"http://127.0.0.4:40123/p12", "https://example.com/a/b;c?d=e&f=g#h", "http://host1.test/"} {
		if _, ok := canonicalURL(s); !ok {
			t.Errorf("canonicalURL refused %q", s)
		}
	}
}
