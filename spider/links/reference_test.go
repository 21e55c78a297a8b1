package links

import (
	"bytes"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/identity"
	"golang.org/x/net/html"
)

// FuzzExtractReference holds Extract to the extractor as it was before its allocation cuts (the per-token
// TagName, the anchor-text builder, every absolute link and the base through the full URL Standard path):
// same links, same order, same fields.
func FuzzExtractReference(f *testing.F) {
	f.Add("http://example.com/dir/page.html", []byte(page))
	f.Add("http://127.0.0.4:40123/d1/page17.html", []byte(`<p><a href="http://127.0.0.9:40131/d2/p.html#x">next:  page
 2</a></p><a href="../d3/p.html">a&amp;b</a><a href="HTTP://H/">é x</a><base href="http://b.test/x/"><a href=" http://c.test/ ">`))
	f.Add("https://a.test:8443/", []byte(`<base href="//b.test/x/"><a href="../y?q#f">y</a><iframe src="\\z">`))
	f.Add("http://a.test/", []byte(`<a href="%zz%">`+"\x00\xff"+`<area href="http://[::1]:80/../">`))
	f.Fuzz(func(t *testing.T, pageURL string, body []byte) {
		u, err := url.Parse(pageURL)
		if err != nil || !u.IsAbs() {
			return
		}
		got := Extract(u, body, Options{MaxLinks: 1000, MaxTextBytes: 64})
		want := extractReference(u, bytes.NewReader(body), Options{MaxLinks: 1000, MaxTextBytes: 64})
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("Extract(%q, %q) differs from the reference (-want +got):\n%s", pageURL, body, d)
		}
	})
}

// resolveReference is resolve without its canonical-form fast path.
func resolveReference(base, ref string) (*url.URL, error) {
	s, err := identity.ResolveReference(base, ref)
	if err != nil {
		return nil, err
	}
	return parseResolved(s)
}

func extractReference(pageURL *url.URL, r io.Reader, opts Options) []frontier.Link {
	if opts.MaxLinks <= 0 {
		opts.MaxLinks = DefaultMaxLinks
	}
	if opts.MaxTextBytes <= 0 {
		opts.MaxTextBytes = DefaultMaxTextBytes
	}
	z := html.NewTokenizer(r)
	var (
		found       []raw
		baseHref    string
		haveBase    bool
		metaNoFollw bool
		inA         = -1 // index in found of the open <a>, collecting text
		text        strings.Builder
	)
	closeA := func() {
		if inA >= 0 {
			found[inA].text = strings.Join(strings.Fields(text.String()), " ")
			inA = -1
			text.Reset()
		}
	}
	for len(found) < opts.MaxLinks {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		switch tt {
		case html.TextToken:
			if inA >= 0 && text.Len() < opts.MaxTextBytes {
				t := z.Text()
				if n := opts.MaxTextBytes - text.Len(); len(t) > n {
					t = t[:n]
				}
				text.Write(t)
			}
			continue
		case html.EndTagToken:
			if rawTag(z.Raw(), 2) == "a" {
				closeA()
			}
			continue
		case html.StartTagToken, html.SelfClosingTagToken:
		default:
			continue
		}
		// The name is read from the raw token: TagName copies it (one allocation per tag), and most tags
		// are not ours.
		tag := rawTag(z.Raw(), 1)
		if tag == "" {
			continue
		}
		_, hasAttr := z.TagName()
		var href, src, rel, metaName, content string
		for hasAttr {
			var k, v []byte
			k, v, hasAttr = z.TagAttr()
			switch string(k) {
			case "href":
				href = string(v)
			case "src":
				src = string(v)
			case "rel":
				rel = string(v)
			case "name":
				metaName = string(v)
			case "content":
				content = string(v)
			}
		}
		switch tag {
		case "a", "area":
			if tag == "a" {
				closeA() // an <a> inside an <a> closes the first, as the HTML parser does
			}
			if href == "" {
				continue
			}
			found = append(found, raw{href: href, rel: rel, tag: tag, nofollow: hasToken(rel, "nofollow")})
			if tag == "a" && tt == html.StartTagToken {
				inA = len(found) - 1
			}
		case "link":
			if href != "" && (hasToken(rel, "canonical") || hasToken(rel, "alternate")) {
				found = append(found, raw{href: href, rel: rel, tag: tag, nofollow: hasToken(rel, "nofollow")})
			}
		case "frame", "iframe":
			if src != "" {
				found = append(found, raw{href: src, tag: tag})
			}
		case "base":
			if !haveBase && href != "" {
				baseHref, haveBase = href, true
			}
		case "meta":
			if strings.EqualFold(strings.TrimSpace(metaName), "robots") {
				c := strings.ToLower(content)
				if hasListToken(c, "nofollow") || hasListToken(c, "none") {
					metaNoFollw = true
				}
			}
		}
	}
	closeA()

	base := pageURL.String()
	if haveBase {
		if b, err := resolveReference(base, baseHref); err == nil {
			base = b.String()
		}
	}
	baseURL, _ := resolveReference("", base) // the base as the URL Standard serialises it, for the fast path
	out := make([]frontier.Link, 0, len(found))
	seen := make(map[string]int, len(found))
	for _, r := range found {
		u, ok := fastResolve(baseURL, r.href)
		var err error
		if !ok {
			u, err = resolveReference(base, r.href)
		}
		if err != nil {
			continue
		}
		s := u.String()
		if i, dup := seen[s]; dup {
			if !r.nofollow && !metaNoFollw {
				out[i].NoFollow = false // followable from somewhere on the page
			}
			continue
		}
		seen[s] = len(out)
		out = append(out, frontier.Link{URL: s, Text: r.text, Rel: r.rel, NoFollow: r.nofollow || metaNoFollw, Tag: r.tag})
	}
	return out
}
