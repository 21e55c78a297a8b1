package scope

import (
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// checkRef is Check as it was before CheckURL (one url.Parse, strings.Split and a map of the segments): the
// reference the faster path is held to.
func checkRef(f *Filter, raw string) string {
	if len(raw) > f.cfg.MaxURLBytes {
		return ReasonURLLength
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ReasonScheme
	}
	if !f.schemes[strings.ToLower(u.Scheme)] {
		return ReasonScheme
	}
	p := u.EscapedPath()
	if ext := path.Ext(p); len(ext) > 1 && f.exts[strings.ToLower(ext[1:])] {
		return ReasonExtension
	}
	for _, re := range f.exclude {
		if re.MatchString(raw) {
			return ReasonExclude
		}
	}
	if len(f.include) > 0 && !slices.ContainsFunc(f.include, func(re *regexp.Regexp) bool { return re.MatchString(raw) }) {
		return ReasonInclude
	}
	segs := strings.Split(strings.Trim(p, "/"), "/")
	if len(segs) > f.cfg.MaxPathSegments {
		return ReasonPathDepth
	}
	if len(segs) > f.cfg.MaxRepeatedSegments {
		seen := make(map[string]int, len(segs))
		for _, s := range segs {
			if s == "" {
				continue
			}
			if seen[s]++; seen[s] > f.cfg.MaxRepeatedSegments {
				return ReasonRepeatedSegments
			}
		}
	}
	return ""
}

// checkFilters are configurations that exercise every rule: the default, include/exclude patterns, a tight
// and a loose segment limit (the map path of repeated), no denied extensions.
func checkFilters(tb testing.TB) []*Filter {
	var out []*Filter
	for _, edit := range []func(*Config){
		func(*Config) {},
		func(c *Config) { c.Include, c.Exclude = []string{`a\.test`}, []string{`/logout`} },
		func(c *Config) { c.MaxRepeatedSegments, c.MaxPathSegments = 1, 4 },
		func(c *Config) { c.MaxRepeatedSegments, c.MaxPathSegments = 70, 200 },
		func(c *Config) { c.DenyExtensions, c.Schemes = nil, []string{"https"} },
	} {
		cfg := DefaultConfig()
		edit(&cfg)
		f, err := New(cfg)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

func sameCheck(t *testing.T, fs []*Filter, raw string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		u = nil
	}
	for i, f := range fs {
		want := checkRef(f, raw)
		if got := f.Check(raw); got != want {
			t.Errorf("filter %d: Check(%q) = %q, want %q", i, raw, got, want)
		}
		if got := f.CheckURL(raw, u); got != want {
			t.Errorf("filter %d: CheckURL(%q) = %q, want %q", i, raw, got, want)
		}
	}
}

// TestCheckURL holds Check and CheckURL (the worker's path: the URL parsed once per batch) to checkRef.
func TestCheckURL(t *testing.T) {
	fs := checkFilters(t)
	for _, raw := range []string{
		"http://a.test/", "https://a.test/page.html?x=1", "HTTP://a.test/X", "ftp://a.test/file", "mailto:x@a.test",
		"http://a.test/" + strings.Repeat("a", 2048), "http://a.test/img/logo.PNG", "http://a.test/a.Js",
		"http://a.test/dl/file.tar.gz", "http://a.test/file.zip?download=1", "http://a.test/doc.pdf", "http://a.test/zip",
		"http://a.test/account/logout", "http://b.test/x", "http://a.test/a/b/a/b/a/b/a/b", "http://a.test/a/a",
		"http://a.test/a//a//a//a", "http://a.test//////", "http://a.test/x/x/x", "http://a.test/x/x/x/x",
		"http://a.test/%2F/%2F/%2F/%2F", "http://a.test/a%2Fb/a%2Fb/a%2Fb/a%2Fb", "http://a.test/é/é/é/é",
		"http://a.test/" + strings.Repeat("s/", 40), "http://a.test/" + strings.Repeat("s/", 80),
		"http://a.test/" + strings.Repeat("s/t/", 40), deep(31), deep(32), deep(33), "http://[::1]:80/%zz", "", ":",
		"http://a.test/../../a/./b", "http://a.test/.", "http://a.test/a.", "*", "http://a.test/p;x/p;x/p;x/p;x",
	} {
		sameCheck(t, fs, raw)
	}
}

// FuzzCheckURL: Check and CheckURL answer what checkRef answers, for every input and filter.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"http://a.test/", "https://a.test/s/x/x/x/x/", "ftp://x", "http://a.test/a.PNG?x=1",
		"http://[::1]:80/%zz", "http://a.test/" + strings.Repeat("a/", 70), "", ":", "http://a.test/../../a/./b",
		"http://a.test/a//a//a//a", "HTTPS://A.TEST/logout"} {
		f.Add(s)
	}
	fs := checkFilters(f)
	f.Fuzz(func(t *testing.T, raw string) { sameCheck(t, fs, raw) })
}

// BenchmarkCheck is the cost per URL of Check as it was (CheckBefore: checkRef), Check (parses the URL) and CheckURL (the caller parsed it) over links
// shaped like the fast web's (/p/N), with a few longer paths.
//
//	go test -run '^$' -bench BenchmarkCheck ./scope/
func BenchmarkCheck(b *testing.B) {
	f, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	raws := []string{"http://127.0.0.1:8080/p/1234", "http://127.0.0.2:8080/p/56", "https://www.a.test/docs/guide/intro.html",
		"http://a.test/2024/05/12/a-title-of-a-post?ref=home", "http://a.test/static/logo.png", "http://a.test/a/b/c/d/e/f"}
	us := make([]*url.URL, len(raws))
	for i, r := range raws {
		us[i], _ = url.Parse(r)
	}
	run := func(b *testing.B, check func(i int) string) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			for i := range raws {
				_ = check(i)
			}
			n += len(raws)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/url")
	}
	b.Run("CheckBefore", func(b *testing.B) { run(b, func(i int) string { return checkRef(f, raws[i]) }) })
	b.Run("Check", func(b *testing.B) { run(b, func(i int) string { return f.Check(raws[i]) }) })
	b.Run("CheckURL", func(b *testing.B) { run(b, func(i int) string { return f.CheckURL(raws[i], us[i]) }) })
}
