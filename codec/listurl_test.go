package codec

import (
	"runtime"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	frontier "github.com/frontiercrawl/frontier"
)

// TestListURLs decodes lists of requests (a links_extracted's links, an add_seeds' seeds) whose URLs are cut
// from the reader's URL slabs (listURL): every URL comes out as it went in, whatever the lengths' order (a
// long URL after short ones needs a new slab), from a borrowed input overwritten after the decode, and a URL
// sent as a bin holding UTF-8 reads as one sent as a str.
func TestListURLs(t *testing.T) {
	long := "http://example.com/" + strings.Repeat("a", 300)
	huge := "http://example.com/" + strings.Repeat("h", maxURLSlab+10)
	many := make([]string, 200)
	for i := range many {
		many[i] = "http://example.com/p/" + strings.Repeat("x", i%37)
	}
	for _, tc := range []struct {
		name string
		urls []string
	}{
		{"none", nil},
		{"one", []string{"http://a.example/"}},
		{"same length", []string{"http://a.example/1", "http://a.example/2", "http://a.example/3"}},
		{"short then long", []string{"http://a.example/", "http://a.example/b", long, "http://a.example/c"}},
		{"long then short", []string{long, "http://a.example/", "http://a.example/b"}},
		{"empty URLs", []string{"", "http://a.example/", "", ""}},
		{"past the slab bound", []string{"http://a.example/", huge, huge, "http://a.example/z"}},
		{"non-ASCII", []string{"http://a.example/é", "http://a.example/日本"}},
		{"many", many},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := &frontier.Request{URL: "http://a.example/page", Meta: frontier.Map{}}
			links := make([]*frontier.Request, len(tc.urls))
			for i, u := range tc.urls {
				links[i] = &frontier.Request{URL: u, Meta: frontier.Map{}}
			}
			for _, m := range []frontier.Message{&frontier.LinksExtracted{Request: page, Links: links},
				&frontier.AddSeeds{Seeds: links}} {
				in, err := AppendMessage(nil, m)
				if err != nil {
					t.Fatal(err)
				}
				got, err := NewMsgpackDecoder().DecodeMessageSkim(in, Skim{Borrow: true})
				if err != nil {
					t.Fatal(err)
				}
				for i := range in {
					in[i] = 0xff // the decoded strings must not alias the input
				}
				runtime.GC() // nor be collected while the requests hold them
				var reqs []*frontier.Request
				switch g := got.(type) {
				case *frontier.LinksExtracted:
					if g.Request.URL != page.URL {
						t.Errorf("%s: page URL %q, want %q", m.Name(), g.Request.URL, page.URL)
					}
					reqs = g.Links
				case *frontier.AddSeeds:
					reqs = g.Seeds
				}
				if len(reqs) != len(tc.urls) {
					t.Fatalf("%s: %d requests, want %d", m.Name(), len(reqs), len(tc.urls))
				}
				for i, r := range reqs {
					if r.URL != tc.urls[i] {
						t.Errorf("%s: request %d URL %.40q (%d bytes), want %.40q (%d bytes)", m.Name(), i, r.URL,
							len(r.URL), tc.urls[i], len(tc.urls[i]))
					}
				}
			}
		})
	}
}

// TestListURLBinAndErrors: a list URL sent as a bin holding UTF-8 decodes as if sent as a str; one that is not
// UTF-8, or not a str or bin, is an error, as for any other URL.
func TestListURLBinAndErrors(t *testing.T) {
	link := func(url any) []any {
		return []any{url, []byte("GET"), map[string]any{}, map[string]any{}, map[string]any{}}
	}
	for _, tc := range []struct {
		name    string
		urls    []any
		want    []string
		wantErr bool
	}{
		{"bin URLs", []any{[]byte("http://a.example/1"), "http://a.example/2", []byte("http://a.example/3")},
			[]string{"http://a.example/1", "http://a.example/2", "http://a.example/3"}, false},
		{"empty bin", []any{[]byte{}, "http://a.example/"}, []string{"", "http://a.example/"}, false},
		{"bin not UTF-8", []any{"http://a.example/", []byte{0xff, 0xfe}}, nil, true},
		{"int URL", []any{"http://a.example/", 7}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var links []any
			for _, u := range tc.urls {
				links = append(links, link(u))
			}
			in, err := msgpack.Marshal([]any{[]byte(frontier.TagAddSeeds), links})
			if err != nil {
				t.Fatal(err)
			}
			m, err := Msgpack{}.DecodeMessage(in)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("decoded %v, want an error", m)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			seeds := m.(*frontier.AddSeeds).Seeds
			if len(seeds) != len(tc.want) {
				t.Fatalf("%d seeds, want %d", len(seeds), len(tc.want))
			}
			for i, s := range seeds {
				if s.URL != tc.want[i] {
					t.Errorf("seed %d URL %q, want %q", i, s.URL, tc.want[i])
				}
			}
		})
	}
}

// TestIsContainer: isContainer agrees with typeName on every type byte.
func TestIsContainer(t *testing.T) {
	for c := range 256 {
		want := typeName(byte(c)) == "map" || typeName(byte(c)) == "array"
		if got := isContainer(byte(c)); got != want {
			t.Errorf("isContainer(0x%02x) = %v, want %v (%s)", c, got, want, typeName(byte(c)))
		}
	}
}
