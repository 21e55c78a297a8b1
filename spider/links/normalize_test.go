package links

import (
	"errors"
	"net/url"
	"reflect"
	"testing"

	"github.com/frontiercrawl/frontier/internal/cputime"
)

// normalizeTwice is what the spider did with a feed URL before NormalizeString.
func normalizeTwice(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	return Normalize(u)
}

// FuzzNormalizeString holds NormalizeString to Normalize(url.Parse(s)): the same URL, or an error from both
// (the same ErrNotHTTP-ness).
func FuzzNormalizeString(f *testing.F) {
	for _, s := range []string{"http://127.0.0.4:40123/d1/page17.html", "https://example.com/a?b=c#d", "http://EXAMPLE.com/",
		"http://a/b/../c", "http://a:80/", "ftp://a/", "http://a/%zz", "http://a/%41", "http://user@a/", "http://xn--nxasmq6b/",
		"http://a/b c", "mailto:x@y", "http://1.2.3/", "http://a/?q=%", "HTTP://a/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gerr := NormalizeString(s)
		want, werr := normalizeTwice(s)
		if (gerr == nil) != (werr == nil) || gerr != nil && errors.Is(gerr, ErrNotHTTP) != errors.Is(werr, ErrNotHTTP) {
			t.Fatalf("NormalizeString(%q): %v, %v; Normalize(url.Parse): %v, %v", s, got, gerr, want, werr)
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("NormalizeString(%q) = %#v, Normalize(url.Parse) = %#v", s, got, want)
		}
	})
}

// BenchmarkNormalizeString reads a feed URL as the spider's accept does, in one parse (NormalizeString) and
// as it did before (url.Parse, then Normalize, which serialises and parses again).
func BenchmarkNormalizeString(b *testing.B) {
	const s = "http://127.0.0.4:40123/d1/page17.html"
	for _, bc := range []struct {
		name string
		f    func(string) (*url.URL, error)
	}{{"once", NormalizeString}, {"twice", normalizeTwice}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			c0 := cputime.Process()
			for b.Loop() {
				if _, err := bc.f(s); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cputime.Process()-c0).Nanoseconds())/float64(b.N), "CPU-ns/URL")
		})
	}
}
