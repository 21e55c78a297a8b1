package scope

import (
	"net/url"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Exclude = []string{`/logout\b`}
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	inc := DefaultConfig()
	inc.Include = []string{`^https?://[^/]+/docs/`}
	fi, err := New(inc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f    *Filter
		url  string
		want string
	}{
		{f, "http://a.test/", ""},
		{f, "https://a.test/page.html?x=1", ""},
		{f, "ftp://a.test/file", ReasonScheme},
		{f, "mailto:x@a.test", ReasonScheme},
		{f, "http://a.test/" + strings.Repeat("a", 2048), ReasonURLLength},
		{f, "http://a.test/img/logo.PNG", ReasonExtension},
		{f, "http://a.test/dl/file.tar.gz", ReasonExtension},
		{f, "http://a.test/file.zip?download=1", ReasonExtension},
		{f, "http://a.test/doc.pdf", ""},
		{f, "http://a.test/zip", ""},
		{f, "http://a.test/account/logout", ReasonExclude},
		{f, "http://a.test/account/logouts", ""},
		{fi, "http://a.test/docs/x.html", ""},
		{fi, "http://a.test/blog/x.html", ReasonInclude},
		{f, "http://a.test/s/x/x/x/", ""},
		{f, "http://a.test/s/x/x/x/x/", ReasonRepeatedSegments},
		{f, "http://a.test/a/b/a/b/a/b/a/b/", ReasonRepeatedSegments},
		{f, "http://a.test/" + deep(32), ""},
		{f, "http://a.test/" + deep(33), ReasonPathDepth},
	} {
		if got := tc.f.Check(tc.url); got != tc.want {
			t.Errorf("Check(%.80q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

func deep(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(string(rune('a'+i%26)) + strings.Repeat("x", i/26) + "/")
	}
	return b.String()
}

func TestKeyAndDomain(t *testing.T) {
	for _, tc := range []struct {
		follow, host, want string
	}{
		{FollowDomains, "www.example.co.uk", "example.co.uk"},
		{FollowDomains, "blog.Example.com", "example.com"},
		{FollowDomains, "host1.test", "host1.test"},
		{FollowDomains, "www.host1.test", "host1.test"},
		{FollowDomains, "127.0.0.2", "127.0.0.2"},
		{FollowDomains, "127.0.0.2:8080", "127.0.0.2"},
		{FollowDomains, "com", "com"},
		{FollowHosts, "WWW.example.com", "www.example.com"},
		{FollowAny, "anything.example", ""},
	} {
		cfg := DefaultConfig()
		cfg.Follow = tc.follow
		f, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Key(tc.host); got != tc.want {
			t.Errorf("%s: Key(%q) = %q, want %q", tc.follow, tc.host, got, tc.want)
		}
	}
}

func TestDepthAndVariants(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxDepth, cfg.MaxQueryVariants, cfg.MaxTrackedPaths = 2, 2, 3
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if f.CheckDepth(2) != "" || f.CheckDepth(3) != ReasonDepth {
		t.Error("depth 2 must pass and 3 be dropped with max_depth 2")
	}
	u := func(s string) *url.URL { p, _ := url.Parse(s); return p }
	for _, s := range []string{"http://a/cal?m=1", "http://a/cal?m=2"} {
		if !f.QueryVariant(u(s)) {
			t.Errorf("%s refused", s)
		}
		f.AddVariant(u(s))
	}
	if f.QueryVariant(u("http://a/cal?m=3")) {
		t.Error("a third variant of /cal accepted with max_query_variants 2")
	}
	if !f.QueryVariant(u("http://a/other?m=3")) || !f.QueryVariant(u("http://b/cal?m=3")) || !f.QueryVariant(u("http://a/cal")) {
		t.Error("variants are counted per host and path, and a URL without a query is not one")
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"follow", func(c *Config) { c.Follow = "everywhere" }, "follow"},
		{"include", func(c *Config) { c.Include = []string{"("} }, "include[0]"},
		{"exclude", func(c *Config) { c.Exclude = []string{"a", "[z-a]"} }, "exclude[1]"},
		{"no schemes", func(c *Config) { c.Schemes = nil }, "schemes"},
		{"scheme case", func(c *Config) { c.Schemes = []string{"HTTP"} }, "schemes"},
		{"extension dot", func(c *Config) { c.DenyExtensions = []string{".png"} }, "deny_extensions"},
		{"depth", func(c *Config) { c.MaxDepth = -1 }, "max_depth"},
		{"url bytes", func(c *Config) { c.MaxURLBytes = 0 }, "max_url_bytes"},
		{"repeats", func(c *Config) { c.MaxRepeatedSegments = 0 }, "max_repeated_segments"},
		{"segments", func(c *Config) { c.MaxPathSegments = 0 }, "max_path_segments"},
		{"variants", func(c *Config) { c.MaxQueryVariants = -1 }, "max_query_variants"},
		{"tracked", func(c *Config) { c.MaxTrackedPaths = 0 }, "max_tracked_paths"},
		{"budget", func(c *Config) { c.HostBudget = -5 }, "host_budget"},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.want)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

func TestInScope(t *testing.T) {
	in, err := InScope(DefaultConfig(), []string{"http://host1.test/", "http://www.example.co.uk/"})
	if err != nil {
		t.Fatal(err)
	}
	for u, want := range map[string]bool{
		"http://host1.test/x": true, "http://www.host1.test/": true, "http://blog.example.co.uk/a": true,
		"http://host2.test/": false, "http://co.uk/": false, "http://host1.test/a.png": false,
	} {
		if got := in(u); got != want {
			t.Errorf("InScope(%s) = %v, want %v", u, got, want)
		}
	}
}
