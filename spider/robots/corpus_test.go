package robots

import (
	"net/url"
	"strings"
	"testing"
)

// corpusCase is one fact about robots.txt matching: with file txt, agent may (or may not) fetch rawURL.
type corpusCase struct {
	group, txt, agent, rawURL string
	want                      bool
}

// The cases below restate, as facts in this package's own table, the expectations published with Google's
// open-source robots.txt parser (its robots_test.cc, which tests that parser against RFC 9309): the same files,
// agents, URLs and verdicts, grouped as there. Cases that test a Google-only extension are in
// corpusGoogleOnly with this package's verdict and the reason it differs.
const (
	fooDisallowAll = "user-agent: FooBot\ndisallow: /\n"
	groupsFile     = "allow: /foo/bar/\n\nuser-agent: FooBot\ndisallow: /\nallow: /x/\nuser-agent: BarBot\ndisallow: /\n" +
		"allow: /y/\n\n\nallow: /w/\nuser-agent: BazBot\n\nuser-agent: FooBot\nallow: /z/\ndisallow: /\n"
	fishDocs = "user-agent: FooBot\ndisallow: /\nallow: "
)

var corpus = []corpusCase{
	// System: empty file, empty agent.
	{"system", "", "FooBot", "", true},
	{"system", fooDisallowAll, "", "", true},
	{"system", fooDisallowAll, "FooBot", "", false}, // an empty URL is "/"
	{"system", "", "", "", true},

	// Line syntax (RFC 9309 §2.1): unknown names are not rules.
	{"line syntax", fooDisallowAll, "FooBot", "http://foo.bar/x/y", false},
	{"line syntax", "foo: FooBot\nbar: /\n", "FooBot", "http://foo.bar/x/y", true},

	// Groups: several agent lines, groups of one agent merged, rules outside groups ignored.
	{"groups", groupsFile, "FooBot", "http://foo.bar/x/b", true},
	{"groups", groupsFile, "FooBot", "http://foo.bar/z/d", true},
	{"groups", groupsFile, "FooBot", "http://foo.bar/y/c", false},
	{"groups", groupsFile, "BarBot", "http://foo.bar/y/c", true},
	{"groups", groupsFile, "BarBot", "http://foo.bar/w/a", true},
	{"groups", groupsFile, "BarBot", "http://foo.bar/z/d", false},
	{"groups", groupsFile, "BazBot", "http://foo.bar/z/d", true},
	{"groups", groupsFile, "FooBot", "http://foo.bar/foo/bar/", false},
	{"groups", groupsFile, "BarBot", "http://foo.bar/foo/bar/", false},
	{"groups", groupsFile, "BazBot", "http://foo.bar/foo/bar/", false},

	// A group is not closed by lines other than the REP's.
	{"groups, other lines", "User-agent: BarBot\nSitemap: https://foo.bar/sitemap\nUser-agent: *\nDisallow: /\n", "FooBot", "http://foo.bar/", false},
	{"groups, other lines", "User-agent: BarBot\nSitemap: https://foo.bar/sitemap\nUser-agent: *\nDisallow: /\n", "BarBot", "http://foo.bar/", false},
	{"groups, other lines", "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n", "FooBot", "http://foo.bar/", false},
	{"groups, other lines", "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n", "BarBot", "http://foo.bar/", false},

	// Line names are case-insensitive.
	{"names case", "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n", "FooBot", "http://foo.bar/x/y", true},
	{"names case", "user-agent: FooBot\nallow: /x/\ndisallow: /\n", "FooBot", "http://foo.bar/x/y", true},
	{"names case", "uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n", "FooBot", "http://foo.bar/x/y", true},
	{"names case", "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n", "FooBot", "http://foo.bar/a/b", false},
	{"names case", "user-agent: FooBot\nallow: /x/\ndisallow: /\n", "FooBot", "http://foo.bar/a/b", false},
	{"names case", "uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n", "FooBot", "http://foo.bar/a/b", false},

	// User-agent values are case-insensitive (the value's product token: "FOO BAR" names foo).
	{"agent case", "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n", "Foo", "http://foo.bar/x/y", true},
	{"agent case", "User-Agent: foo bar\nAllow: /x/\nDisallow: /\n", "Foo", "http://foo.bar/x/y", true},
	{"agent case", "User-Agent: FoO bAr\nAllow: /x/\nDisallow: /\n", "Foo", "http://foo.bar/x/y", true},
	{"agent case", "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n", "Foo", "http://foo.bar/a/b", false},
	{"agent case", "User-Agent: foo bar\nAllow: /x/\nDisallow: /\n", "foo", "http://foo.bar/a/b", false},
	{"agent case", "User-Agent: FoO bAr\nAllow: /x/\nDisallow: /\n", "foo", "http://foo.bar/x/y", true},
	{"agent up to first space", "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n", "Foo", "http://foo.bar/x/y", true},

	// No group for the agent: the "*" group, else no rules.
	{"global group", "", "FooBot", "http://foo.bar/x/y", true},
	{"global group", "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n", "FooBot", "http://foo.bar/x/y", false},
	{"global group", "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n", "BarBot", "http://foo.bar/x/y", true},
	{"global group", "user-agent: FooBot\nallow: /\nuser-agent: BarBot\ndisallow: /\nuser-agent: BazBot\ndisallow: /\n", "QuxBot", "http://foo.bar/x/y", true},

	// Rule values are case-sensitive.
	{"value case", "user-agent: FooBot\ndisallow: /x/\n", "FooBot", "http://foo.bar/x/y", false},
	{"value case", "user-agent: FooBot\ndisallow: /X/\n", "FooBot", "http://foo.bar/x/y", true},

	// The longest match wins; on a tie allow wins; the agent's own group replaces "*".
	{"longest match", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/\n", "FooBot", "http://foo.bar/x/page.html", false},
	{"longest match", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot", "http://foo.bar/x/page.html", true},
	{"longest match", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot", "http://foo.bar/x/", false},
	{"longest match", "user-agent: FooBot\ndisallow: \nallow: \n", "FooBot", "http://foo.bar/x/page.html", true},
	{"longest match", "user-agent: FooBot\ndisallow: /\nallow: /\n", "FooBot", "http://foo.bar/x/page.html", true},
	{"longest match", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "http://foo.bar/x", false},
	{"longest match", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "http://foo.bar/x/", true},
	{"longest match", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n", "FooBot", "http://foo.bar/x/page.html", true},
	{"longest match", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot", "http://foo.bar/page.html", false},
	{"longest match", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot", "http://foo.bar/page", true},
	{"longest match", "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot", "http://foo.bar/x/page.html", true},
	{"longest match", "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot", "http://foo.bar/x/y.html", false},
	{"longest match", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot", "http://foo.bar/x/page", true},
	{"longest match", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot", "http://foo.bar/y/page", false},

	// Encoding (RFC 9309 §2.2.2): non-ASCII octets of a rule are percent-encoded before comparing; an
	// encoded unreserved character is not decoded.
	{"encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n", "FooBot", "http://foo.bar/foo/bar?qux=taz&baz=http://foo.bar?tar&par", true},
	{"encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", "FooBot", "http://foo.bar/foo/bar/%E3%83%84", true},
	{"encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot", "http://foo.bar/foo/bar/%E3%83%84", true},
	{"encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot", "http://foo.bar/foo/bar/baz", false},
	{"encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot", "http://foo.bar/foo/bar/%62%61%7A", true},

	// Special characters: "*", "$" at the end, "#" comments.
	{"special", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://foo.bar/foo/bar/quz", false},
	{"special", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://foo.bar/foo/quz", true},
	{"special", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://foo.bar/foo//quz", true},
	{"special", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://foo.bar/foo/bax/quz", true},
	{"special", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://foo.bar/foo/bar", false},
	{"special", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://foo.bar/foo/bar/qux", true},
	{"special", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://foo.bar/foo/bar/", true},
	{"special", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://foo.bar/foo/bar/baz", true},
	{"special", "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n", "FooBot", "http://foo.bar/foo/bar", true},
	{"special", "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n", "FooBot", "http://foo.bar/foo/quz", false},

	// Path matching examples ("/fish", "/fish*", "/fish/", "/*.php", "/*.php$", "/fish*.php").
	{"/fish", fishDocs + "/fish\n", "FooBot", "http://foo.bar/bar", false},
	{"/fish", fishDocs + "/fish\n", "FooBot", "http://foo.bar/fish", true},
	{"/fish", fishDocs + "/fish\n", "FooBot", "http://foo.bar/fish.html", true},
	{"/fish", fishDocs + "/fish\n", "FooBot", "http://foo.bar/fish/salmon.html", true},
	{"/fish", fishDocs + "/fish\n", "FooBot", "http://foo.bar/fishheads", true},
	{"/fish", fishDocs + "/fish\n", "FooBot", "http://foo.bar/fishheads/yummy.html", true},
	{"/fish", fishDocs + "/fish\n", "FooBot", "http://foo.bar/fish.html?id=anything", true},
	{"/fish", fishDocs + "/fish\n", "FooBot", "http://foo.bar/Fish.asp", false},
	{"/fish", fishDocs + "/fish\n", "FooBot", "http://foo.bar/catfish", false},
	{"/fish", fishDocs + "/fish\n", "FooBot", "http://foo.bar/?id=fish", false},
	{"/fish*", fishDocs + "/fish*\n", "FooBot", "http://foo.bar/bar", false},
	{"/fish*", fishDocs + "/fish*\n", "FooBot", "http://foo.bar/fish", true},
	{"/fish*", fishDocs + "/fish*\n", "FooBot", "http://foo.bar/fish.html", true},
	{"/fish*", fishDocs + "/fish*\n", "FooBot", "http://foo.bar/fish/salmon.html", true},
	{"/fish*", fishDocs + "/fish*\n", "FooBot", "http://foo.bar/fishheads", true},
	{"/fish*", fishDocs + "/fish*\n", "FooBot", "http://foo.bar/fishheads/yummy.html", true},
	{"/fish*", fishDocs + "/fish*\n", "FooBot", "http://foo.bar/fish.html?id=anything", true},
	{"/fish*", fishDocs + "/fish*\n", "FooBot", "http://foo.bar/Fish.bar", false},
	{"/fish*", fishDocs + "/fish*\n", "FooBot", "http://foo.bar/catfish", false},
	{"/fish*", fishDocs + "/fish*\n", "FooBot", "http://foo.bar/?id=fish", false},
	{"/fish/", fishDocs + "/fish/\n", "FooBot", "http://foo.bar/bar", false},
	{"/fish/", fishDocs + "/fish/\n", "FooBot", "http://foo.bar/fish/", true},
	{"/fish/", fishDocs + "/fish/\n", "FooBot", "http://foo.bar/fish/salmon", true},
	{"/fish/", fishDocs + "/fish/\n", "FooBot", "http://foo.bar/fish/?salmon", true},
	{"/fish/", fishDocs + "/fish/\n", "FooBot", "http://foo.bar/fish/salmon.html", true},
	{"/fish/", fishDocs + "/fish/\n", "FooBot", "http://foo.bar/fish/?id=anything", true},
	{"/fish/", fishDocs + "/fish/\n", "FooBot", "http://foo.bar/fish", false},
	{"/fish/", fishDocs + "/fish/\n", "FooBot", "http://foo.bar/fish.html", false},
	{"/fish/", fishDocs + "/fish/\n", "FooBot", "http://foo.bar/Fish/Salmon.html", false},
	{"/*.php", fishDocs + "/*.php\n", "FooBot", "http://foo.bar/bar", false},
	{"/*.php", fishDocs + "/*.php\n", "FooBot", "http://foo.bar/filename.php", true},
	{"/*.php", fishDocs + "/*.php\n", "FooBot", "http://foo.bar/folder/filename.php", true},
	{"/*.php", fishDocs + "/*.php\n", "FooBot", "http://foo.bar/folder/filename.php?parameters", true},
	{"/*.php", fishDocs + "/*.php\n", "FooBot", "http://foo.bar//folder/any.php.file.html", true},
	{"/*.php", fishDocs + "/*.php\n", "FooBot", "http://foo.bar/filename.php/", true},
	{"/*.php", fishDocs + "/*.php\n", "FooBot", "http://foo.bar/index?f=filename.php/", true},
	{"/*.php", fishDocs + "/*.php\n", "FooBot", "http://foo.bar/php/", false},
	{"/*.php", fishDocs + "/*.php\n", "FooBot", "http://foo.bar/index?php", false},
	{"/*.php", fishDocs + "/*.php\n", "FooBot", "http://foo.bar/windows.PHP", false},
	{"/*.php$", fishDocs + "/*.php$\n", "FooBot", "http://foo.bar/bar", false},
	{"/*.php$", fishDocs + "/*.php$\n", "FooBot", "http://foo.bar/filename.php", true},
	{"/*.php$", fishDocs + "/*.php$\n", "FooBot", "http://foo.bar/folder/filename.php", true},
	{"/*.php$", fishDocs + "/*.php$\n", "FooBot", "http://foo.bar/filename.php?parameters", false},
	{"/*.php$", fishDocs + "/*.php$\n", "FooBot", "http://foo.bar/filename.php/", false},
	{"/*.php$", fishDocs + "/*.php$\n", "FooBot", "http://foo.bar/filename.php5", false},
	{"/*.php$", fishDocs + "/*.php$\n", "FooBot", "http://foo.bar/php/", false},
	{"/*.php$", fishDocs + "/*.php$\n", "FooBot", "http://foo.bar/filename?php", false},
	{"/*.php$", fishDocs + "/*.php$\n", "FooBot", "http://foo.bar/aaaphpaaa", false},
	{"/*.php$", fishDocs + "/*.php$\n", "FooBot", "http://foo.bar//windows.PHP", false},
	{"/fish*.php", fishDocs + "/fish*.php\n", "FooBot", "http://foo.bar/bar", false},
	{"/fish*.php", fishDocs + "/fish*.php\n", "FooBot", "http://foo.bar/fish.php", true},
	{"/fish*.php", fishDocs + "/fish*.php\n", "FooBot", "http://foo.bar/fishheads/catfish.php?parameters", true},
	{"/fish*.php", fishDocs + "/fish*.php\n", "FooBot", "http://foo.bar/Fish.PHP", false},

	// Order of precedence.
	{"precedence", "user-agent: FooBot\nallow: /p\ndisallow: /\n", "FooBot", "http://example.com/page", true},
	{"precedence", "user-agent: FooBot\nallow: /folder\ndisallow: /folder\n", "FooBot", "http://example.com/folder/page", true},
	{"precedence", "user-agent: FooBot\nallow: /page\ndisallow: /*.htm\n", "FooBot", "http://example.com/page.htm", false},
	{"precedence", "user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot", "http://example.com/", true},
	{"precedence", "user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot", "http://example.com/page.html", false},

	// Line endings: LF, CRLF, CR, none at the end, mixed.
	{"line endings", "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /\n", "bar", "http://x.test/a", false},
	{"line endings", "User-Agent: foo\r\nAllow: /some/path\r\nUser-Agent: bar\r\n\r\n\r\nDisallow: /\r\n", "bar", "http://x.test/a", false},
	{"line endings", "User-Agent: foo\rAllow: /some/path\rUser-Agent: bar\r\r\rDisallow: /\r", "bar", "http://x.test/a", false},
	{"line endings", "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /", "bar", "http://x.test/a", false},
	{"line endings", "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /", "bar", "http://x.test/a", false},

	// A UTF-8 byte order mark (whole or partial) at the start is skipped; a broken one or one elsewhere
	// spoils its line only.
	{"bom", "\xEF\xBB\xBFUser-Agent: foo\nDisallow: /AnyValue\n", "foo", "http://x.test/AnyValue", false},
	{"bom", "\xEF\xBBUser-Agent: foo\nDisallow: /AnyValue\n", "foo", "http://x.test/AnyValue", false},
	{"bom", "\xEFUser-Agent: foo\nDisallow: /AnyValue\n", "foo", "http://x.test/AnyValue", false},
	{"bom", "\xEF\x11\xBFUser-Agent: foo\nDisallow: /AnyValue\n", "foo", "http://x.test/AnyValue", true},
	{"bom", "User-Agent: foo\n\xEF\xBB\xBFDisallow: /AnyValue\n", "foo", "http://x.test/AnyValue", true},

	// Google's extension that this package follows: a missing colon after a REP name is assumed.
	{"missing colon", "user-agent FooBot\ndisallow /\n", "FooBot", "http://foo.bar/x/y", false},
}

// corpusGoogleOnly are the published cases of Google-only extensions where this package, following RFC 9309
// alone, gives another verdict; each says why.
var corpusGoogleOnly = []struct {
	corpusCase
	google bool
	why    string
}{
	{corpusCase{"index.html", "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n", "foobot", "http://foo.com/allowed-slash/", false},
		true, "Google reads a rule ending in index.html as its directory too; RFC 9309 matches the rule as written"},
	{corpusCase{"agent with a space", "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n", "Foo Bar", "http://foo.bar/x/y", true},
		false, "Google refuses to obey an agent name with a space; this package takes the product token of a User-Agent value (foo)"},
	{corpusCase{"non-ASCII URL", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", "FooBot", "http://foo.bar/foo/bar/ツ", true},
		false, "Google leaves encoding the URL to its caller; RFC 9309 §2.2.2 encodes the URL's octets too before comparing"},
}

// pathQuery is the path and query of rawURL as a spider sends it ("" for an empty URL).
func pathQuery(t *testing.T, rawURL string) string {
	t.Helper()
	if rawURL == "" {
		return ""
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("%q: %v", rawURL, err)
	}
	return u.RequestURI()
}

// TestCorpus checks Parse and Allowed against the corpus.
func TestCorpus(t *testing.T) {
	for i, c := range corpus {
		if got := Parse([]byte(c.txt)).Allowed(c.agent, pathQuery(t, c.rawURL)); got != c.want {
			t.Errorf("case %d (%s): agent %q, %s: allowed = %v, want %v\nrobots.txt:\n%s", i, c.group, c.agent, c.rawURL,
				got, c.want, strings.TrimSpace(c.txt))
		}
	}
	for _, c := range corpusGoogleOnly {
		if got := Parse([]byte(c.txt)).Allowed(c.agent, pathQuery(t, c.rawURL)); got != c.want {
			t.Errorf("Google-only %s: agent %q, %s: allowed = %v, want %v (Google: %v; %s)", c.group, c.agent, c.rawURL,
				got, c.want, c.google, c.why)
		}
	}
}

// TestSitemapLines: Sitemap lines are collected wherever they are in the file.
func TestSitemapLines(t *testing.T) {
	for _, txt := range []string{
		"User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nSitemap: http://foo.bar/sitemap.xml\n",
		"Sitemap: http://foo.bar/sitemap.xml\nUser-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\n",
	} {
		if got := Parse([]byte(txt)).Sitemap; len(got) != 1 || got[0] != "http://foo.bar/sitemap.xml" {
			t.Errorf("Sitemap = %v, want [http://foo.bar/sitemap.xml]\n%s", got, txt)
		}
	}
}
