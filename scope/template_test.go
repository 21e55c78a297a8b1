package scope

import (
	"net/url"
	"strings"
	"testing"
)

func TestTemplate(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"http://a.test", "/"},
		{"http://a.test/", "/"},
		{"http://a.test/cal/1", "/cal/{x}"},
		{"http://a.test/cal/20261125", "/cal/{x}"},
		{"http://a.test/cal/2026/11/25/", "/cal/{x}/{x}/{x}/"},
		{"http://a.test/events?date=2026-11-25", "/events?date={x}-{x}-{x}"},
		{"http://a.test/events?date=2026-11-26#x", "/events?date={x}-{x}-{x}"},
		{"http://a.test/events?view=day&date=2026-11-26", "/events?date={x}-{x}-{x}&view=day"},
		{"http://a.test/events?date=2026-11-26&view=day", "/events?date={x}-{x}-{x}&view=day"},
		{"http://a.test/events?view=week&date=2026-11-26", "/events?date={x}-{x}-{x}&view=week"},
		{"http://a.test/post/123", "/post/{x}"},
		{"http://a.test/d3/page17.html", "/{x}/page{x}.html"}, // d3 is hex
		{"http://a.test/page9", "/page{x}"},
		{"http://a.test/page10", "/page{x}"},
		{"http://a.test/articles/apple-pie", "/articles/apple-pie"},
		{"http://a.test/articles/plum-jam", "/articles/plum-jam"},
		{"http://a.test/articles/top-10-tips", "/articles/top-{x}-tips"},
		{"http://a.test/questions/123/how-to-x", "/questions/{x}/how-to-x"},
		{"http://a.test/u/550e8400-e29b-41d4-a716-446655440000", "/u/{x}-{x}-{x}-{x}-{x}"},
		{"http://a.test/s/5f3a9c0e", "/s/{x}"},
		{"http://a.test/s/deadbeef", "/s/deadbeef"}, // no digit: a word as far as Template can tell
		{"http://a.test/i/aZ3kQ9xB", "/i/{x}"},
		{"http://a.test/i/mp3", "/i/mp{x}"},
		{"http://a.test/shop?sid=17", "/shop?sid={x}"},
		{"http://a.test/list?lang=en", "/list?lang=en"},
		{"http://a.test/list?lang=fr", "/list?lang=fr"},
		{"http://a.test/a%20b/%C3%A9t%C3%A9", "/a%20b/%C3%A9t%C3%A9"},
		{"http://a.test/item[3]?a[1]=x", "/item[{x}]?a[{x}]=x"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := Template(u); got != tc.want {
			t.Errorf("Template(%s) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

func TestTemplateKey(t *testing.T) {
	key := func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return TemplateKey(u)
	}
	same := [][2]string{
		{"http://a.test/cal/1", "http://A.test/cal/2"},
		{"http://a.test/x?date=2026-11-25", "http://a.test/x?date=2026-11-26"},
	}
	for _, p := range same {
		if key(p[0]) != key(p[1]) {
			t.Errorf("%s and %s: keys %q, %q, want one", p[0], p[1], key(p[0]), key(p[1]))
		}
	}
	differ := [][2]string{
		{"http://a.test/cal/1", "http://b.test/cal/1"},
		{"http://a.test/articles/apple", "http://a.test/articles/plum"},
		{"http://a.test/cal/1", "http://a.test/cal/1?x=1"},
	}
	for _, p := range differ {
		if key(p[0]) == key(p[1]) {
			t.Errorf("%s and %s: one key %q, want two", p[0], p[1], key(p[0]))
		}
	}
	if k := key("http://a.test/" + strings.Repeat("word/", 400)); len(k) > 40 {
		t.Errorf("key of a long URL is %d bytes: %q", len(k), k)
	}
}

// FuzzTemplate: Template never panics, keeps no digit outside percent-escapes and tokens it cannot collapse
// without losing their letters, and is idempotent on the path (a template's path is its own template).
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"http://a.test/cal/1", "http://a.test/e?date=2026-11-25&v=d", "http://a.test/%zz/%41",
		"http://a.test/u/550e8400-e29b-41d4-a716-446655440000", "http://a.test/a;b=1;c=2", "http://a.test/?&&=",
		"http://a.test/x%2", "http://a.test/page10x20y30z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		tpl := Template(u)
		_ = TemplateKey(u)
		for i := 0; i < len(tpl); i++ {
			c := tpl[i]
			if c == '%' && i+2 < len(tpl) && isHex(tpl[i+1]) && isHex(tpl[i+2]) {
				i += 2
				continue
			}
			if c >= '0' && c <= '9' {
				t.Fatalf("Template(%q) = %q keeps a digit", raw, tpl)
			}
		}
		if u.RawQuery == "" {
			if again := Template(&url.URL{Path: tpl, RawPath: tpl}); again != tpl && url.PathEscape(tpl) == tpl {
				t.Fatalf("Template(%q) = %q, and its own template is %q", raw, tpl, again)
			}
		}
	})
}
