package robots

import (
	"testing"
	"time"

	"github.com/temoto/robotstxt"
)

const agent = "FrontierBot/1.0 (+https://example.com/bot)"

func TestAllowed(t *testing.T) {
	tests := []struct {
		name, txt, path string
		want            bool
	}{
		{"empty file", "", "/x", true},
		{"no group for us", "User-agent: other\nDisallow: /", "/x", true},
		{"star group", "User-agent: *\nDisallow: /", "/x", false},
		{"robots.txt always allowed", "User-agent: *\nDisallow: /", "/robots.txt", true},
		{"prefix", "User-agent: *\nDisallow: /private/", "/private/a.html", false},
		{"prefix miss", "User-agent: *\nDisallow: /private/", "/privat", true},
		{"longest wins allow", "User-agent: *\nDisallow: /private/\nAllow: /private/open.html", "/private/open.html", true},
		{"longest wins disallow", "User-agent: *\nAllow: /p\nDisallow: /private", "/private/x", false},
		{"order irrelevant", "User-agent: *\nAllow: /private/open.html\nDisallow: /private/", "/private/open.html", true},
		{"tie: allow wins", "User-agent: *\nDisallow: /page\nAllow: /page", "/page", true},
		{"tie: allow wins, reversed", "User-agent: *\nAllow: /page\nDisallow: /page", "/page", true},
		{"wildcard middle", "User-agent: *\nDisallow: /*sessionid=", "/a/b?sessionid=1", false},
		{"wildcard miss", "User-agent: *\nDisallow: /*sessionid=", "/a/b?sid=1", true},
		{"dollar end", "User-agent: *\nDisallow: /*.bak$", "/x/file.bak", false},
		{"dollar end miss", "User-agent: *\nDisallow: /*.bak$", "/x/file.bak?x=1", true},
		{"dollar exact", "User-agent: *\nDisallow: /$", "/", false},
		{"dollar exact miss", "User-agent: *\nDisallow: /$", "/a", true},
		{"dollar not at end is literal", "User-agent: *\nDisallow: /a$b", "/a$b/c", false},
		{"wildcard length ranking", "User-agent: *\nAllow: /*.html\nDisallow: /shop/", "/shop/x.html", true},
		{"wildcard shorter loses", "User-agent: *\nAllow: /*.htm\nDisallow: /shop/x", "/shop/x.htm", false},
		{"named group wins over star", "User-agent: *\nDisallow: /\n\nUser-agent: frontierbot\nAllow: /", "/x", true},
		{"named group case-insensitive", "User-agent: FRONTIERBOT\nDisallow: /a", "/a", false},
		{"product token only", "User-agent: FrontierBot/2.0\nDisallow: /a", "/a", false},
		{"other bot prefix not ours", "User-agent: frontier\nDisallow: /a", "/a", true},
		{"groups merged", "User-agent: frontierbot\nDisallow: /a\n\nUser-agent: frontierbot\nDisallow: /b", "/b", false},
		{"multi-agent group", "User-agent: x\nUser-agent: frontierbot\nDisallow: /a", "/a", false},
		{"rule before any agent ignored", "Disallow: /\nUser-agent: *\nAllow: /x", "/y", true},
		{"empty disallow means nothing", "User-agent: *\nDisallow:", "/y", true},
		{"comments", "User-agent: * # all\nDisallow: /a # not a\n# Disallow: /b", "/b", true},
		{"CRLF", "User-agent: *\r\nDisallow: /a\r\n", "/a/b", false},
		{"garbage lines skipped", "User-agent: *\nthis is junk\nDisallow: /a\n{{{", "/a", false},
		{"percent case", "User-agent: *\nDisallow: /%7euser", "/%7Euser/x", false},
		{"non-ascii rule", "User-agent: *\nDisallow: /föö", "/f%C3%B6%C3%B6", false},
		{"sitemap does not end group", "User-agent: *\nSitemap: http://x/s.xml\nDisallow: /a", "/a", false},
		{"empty path is /", "User-agent: *\nDisallow: /$", "", false},
		{"star star", "User-agent: *\nDisallow: /**a**b$", "/xxaxxb", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse([]byte(tt.txt))
			path := tt.path
			if got := r.Allowed(agent, path); got != tt.want {
				t.Errorf("Allowed(%q) = %v, want %v\nrobots.txt:\n%s", path, got, tt.want, tt.txt)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /a")
	tests := []struct {
		status  int
		path    string
		allowed bool
	}{
		{200, "/a", false},
		{200, "/b", true},
		{404, "/a", true},
		{403, "/a", true},
		{500, "/b", false},
		{503, "/b", false},
		{503, "/robots.txt", true},
	}
	for _, tt := range tests {
		if got := Decide(tt.status, body).Allowed(agent, tt.path); got != tt.allowed {
			t.Errorf("Decide(%d).Allowed(%q) = %v, want %v", tt.status, tt.path, got, tt.allowed)
		}
	}
	if !Decide(503, nil).DisallowsAll() || Decide(404, nil).DisallowsAll() {
		t.Error("DisallowsAll wrong")
	}
}

func TestCrawlDelay(t *testing.T) {
	tests := []struct {
		txt  string
		want time.Duration
		ok   bool
	}{
		{"User-agent: *\nCrawl-delay: 2", 2 * time.Second, true},
		{"User-agent: *\nCrawl-delay: 0.5", 500 * time.Millisecond, true},
		{"User-agent: *\nCrawl-delay: soon", 0, false},
		{"User-agent: *\nCrawl-delay: -1", 0, false},
		{"User-agent: other\nCrawl-delay: 5", 0, false},
		{"User-agent: *\nCrawl-delay: 5\n\nUser-agent: frontierbot\nDisallow: /x", 0, false},
		{"User-agent: *\nCrawl-delay: 1e9", 24 * time.Hour, true},
	}
	for _, tt := range tests {
		d, ok := Parse([]byte(tt.txt)).CrawlDelay(agent)
		if d != tt.want || ok != tt.ok {
			t.Errorf("%q: CrawlDelay = %v, %v; want %v, %v", tt.txt, d, ok, tt.want, tt.ok)
		}
	}
}

func TestProductToken(t *testing.T) {
	for in, want := range map[string]string{
		"FrontierBot/1.0 (+x)": "frontierbot",
		"Googlebot-News":       "googlebot-news",
		"*":                    "*",
		"  my_bot 2":           "my_bot",
		"/x":                   "",
	} {
		if got := ProductToken(in); got != want {
			t.Errorf("ProductToken(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTemotoDiffers records where github.com/temoto/robotstxt disagrees with RFC 9309, which is why this
// package exists (see the package doc). If temoto fixes one, the case fails and the doc should be updated.
func TestTemotoDiffers(t *testing.T) {
	tests := []struct {
		name, txt, path string
		rfc             bool
	}{
		// "/*.html" (7 octets) is longer than "/shop/" (6); temoto ranks it by the regexp "/.*\.html" (9)
		// and "Disallow: /shop/x" (8) would then lose; here the shorter literal must lose to the wildcard.
		{"wildcard length", "User-agent: *\nDisallow: /shop/xy\nAllow: /*.html", "/shop/xy.html", false},
		{"allow wins ties", "User-agent: *\nDisallow: /page\nAllow: /page", "/page", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ours := Parse([]byte(tt.txt)).Allowed(agent, tt.path)
			if ours != tt.rfc {
				t.Fatalf("ours = %v, RFC 9309 = %v", ours, tt.rfc)
			}
			td, err := robotstxt.FromString(tt.txt)
			if err != nil {
				t.Fatal(err)
			}
			if theirs := td.TestAgent(tt.path, agent); theirs == tt.rfc {
				t.Logf("temoto now agrees with RFC 9309 here")
			} else {
				t.Logf("temoto = %v, RFC 9309 = %v", theirs, tt.rfc)
			}
		})
	}
}

func TestMatchLinear(t *testing.T) {
	// A pathological pattern must not take exponential time (no timing assertion: it just has to finish).
	p := "/" + string(make([]byte, 0)) + "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"
	s := "/" + string(bytesOf('a', 5000))
	if match(p, s) {
		t.Fatal("matched")
	}
}

func bytesOf(c byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: /private/\nAllow: /private/open.html\nCrawl-delay: 2\n"), "/private/x")
	f.Add([]byte("User-agent: frontierbot\nDisallow: /*.bak$\nSitemap: http://x/s.xml"), "/a.bak")
	f.Add([]byte("\xff\xfe:::\n#\r\nuser-agent:\ndisallow:*$$"), "/%zz")
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		r := Parse(body)
		_ = r.Allowed(agent, path)
		_, _ = r.CrawlDelay(agent)
		if !r.Allowed(agent, "/robots.txt") {
			t.Fatal("robots.txt disallowed")
		}
	})
}
