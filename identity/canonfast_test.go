package identity

import "testing"

var fastCanonSeeds = []string{
	"http://www.example.com/", "https://example.com/a/b.html", "http://127.0.0.4:40123/d1/page0.html",
	"http://127.0.0.9:40131/d2/page1.html#from-host3.test", "http://h/d0/page3.html#top", "http://h/?a=1&b=2",
	"http://h/?b=1&a=2", "http://h/?a=2&a=1", "http://h/?a+b=1&a=1", "http://h/?a=&b", "http://h/?", "http://h/?#x",
	"http://h/?a=1&&b=2", "http://h/?a=1&", "http://h/a/./b", "http://h/a/../b", "http://h/a/.b", "http://h/a/..",
	"http://h/.?x=1", "http://h:080/", "http://h:65535/", "http://h:65536/", "http://h:/", "http://h", "http://H/",
	"HTTP://h/", "http://h/a;p", "http://h/%41", "http://h/a b", "http://h/a\\b", "http://h/#\x00 \t\xff",
	"http://u@h/", "http://[::1]/", "ftp://h/", "http://h/a|b", "http://h/a'b?x='", "http://h/?x=a=b",
	"http://h/?=1", "http://h/?a=1#", "http://h/#", "http://h/p?q=%20",
}

// TestFastCanon25 checks the fast path's verdicts on its seeds against the full algorithm, in every option
// combination of w3lib 2.5, and that the usual shapes take it.
func TestFastCanon25(t *testing.T) {
	for _, s := range fastCanonSeeds {
		checkFastCanon(t, s)
	}
	for _, s := range []string{"http://127.0.0.4:40123/d1/page0.html", "http://h/d0/page3.html#top", "https://e.com/?a=1&b=x+y"} {
		if _, ok := (CanonOptions{}).fastCanon25(s); !ok {
			t.Errorf("%q does not take the fast path", s)
		}
	}
}

func checkFastCanon(t *testing.T, s string) {
	t.Helper()
	for _, o := range []CanonOptions{{}, {DropBlankValues: true}, {KeepFragments: true}, {DropBlankValues: true, KeepFragments: true}} {
		fast, ok := o.fastCanon25(s)
		if !ok {
			continue
		}
		slow, err := o.canon25Slow(nil, s)
		if err != nil {
			t.Fatalf("%+v: fast path gives %q for %q, the full algorithm an error: %v", o, fast, s, err)
		}
		if string(slow) != fast {
			t.Fatalf("%+v: fast path gives %q for %q, the full algorithm %q", o, fast, s, slow)
		}
	}
}

// FuzzCanonicalFast holds the fast path of the w3lib 2.5 canonical form (fastCanon25) to the full algorithm:
// whatever it accepts, canon25Slow must give the same canonical form.
//
//	go test -run XXX -fuzz FuzzCanonicalFast -fuzztime 30s ./identity/
func FuzzCanonicalFast(f *testing.F) {
	for _, s := range fastCanonSeeds {
		f.Add(s)
	}
	f.Fuzz(checkFastCanon)
}

// BenchmarkCanonicalizeSHA1Links is the spider's case: the links of the loopback web's pages (absolute, some
// with a fragment), canonicalised and fingerprinted (sha1) into reused buffers.
//
//	go test -run XXX -bench BenchmarkCanonicalizeSHA1Links ./identity/
func BenchmarkCanonicalizeSHA1Links(b *testing.B) {
	urls := []string{
		"http://127.0.0.4:40123/d1/page0.html", "http://127.0.0.9:40131/d2/page1.html#from-host3.test",
		"http://127.0.0.4:40123/d3/page2.html", "http://127.0.0.4:40123/d0/page3.html#top",
		"https://www.example.com/2024/05/article-title.html", "http://shop.example.com/catalog/item?color=red&id=1234&size=m",
	}
	benchFingerprintSHA1(b, urls)
}
