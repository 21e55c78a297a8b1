// Package links finds the outgoing links of an HTML page and resolves them the way a browser does.
//
// Extract tokenizes the page with golang.org/x/net/html (a streaming tokenizer: no DOM, memory proportional to
// one token) and collects:
//
//	<a href> <area href>                     Tag "a"/"area", with rel and (for a) the anchor text
//	<link href rel~=canonical|alternate>     Tag "link"
//	<frame src> <iframe src>                 Tag "frame"/"iframe"
//
// The first <base href> sets the base URL of the whole document, as in browsers and Scrapy (links written
// before the base element are resolved against it too). A link is marked NoFollow when its rel contains
// "nofollow" or the page has <meta name="robots"> with "nofollow" or "none"; dropping such links is the
// caller's choice (spider.Config.HonourNoFollow).
//
// Resolve and Normalize apply the WHATWG URL Standard through the identity layer's identity.ResolveReference,
// as a browser would: surrounding C0 controls and spaces trimmed, tabs and newlines removed, backslashes read as
// slashes, scheme and host lower-cased, the host IDNA-mapped and IPv4 forms made dotted-decimal, the default
// port dropped (w3lib keeps ":80", which would make every page reachable under two netlocs), dot segments
// removed, an empty path made "/", characters outside the Standard's sets percent-encoded. The fragment is
// dropped. Only http and https URLs are returned; canonicalisation and fingerprinting (query sorting,
// percent-encoding normalisation) are the identity layer's next step.
//
// The package imports the standard library, golang.org/x/net/html and the root frontier package. Its functions are safe for
// concurrent use.
package links

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/identity"
	"golang.org/x/net/html"
)

// Options tune Extract.
type Options struct {
	// MaxLinks stops extraction after this many links (0 = DefaultMaxLinks). Pages with more are usually traps.
	MaxLinks int
	// MaxTextBytes caps the anchor text kept per link (0 = DefaultMaxTextBytes).
	MaxTextBytes int
}

// Defaults for Options.
const (
	DefaultMaxLinks     = 10000
	DefaultMaxTextBytes = 256
)

// ErrNotHTTP is wrapped by Resolve for a URL whose scheme is not http or https.
var ErrNotHTTP = errors.New("links: not an http(s) URL")

// notHTTPError is identity's error for a URL whose scheme is not http(s), matching ErrNotHTTP too; its message
// is identity's, which says so already.
type notHTTPError struct{ err error }

func (e notHTTPError) Error() string        { return e.err.Error() }
func (e notHTTPError) Unwrap() error        { return e.err }
func (e notHTTPError) Is(target error) bool { return target == ErrNotHTTP }

type raw struct {
	href, text, rel, tag string
	nofollow             bool
}

// Extract returns the http(s) links of the HTML page body fetched from pageURL, in document order, resolved
// (see Resolve) and without duplicates (the first occurrence wins). Links that do not resolve are skipped.
// It never fails on bad HTML: the tokenizer recovers as browsers do.
func Extract(pageURL *url.URL, body []byte, opts Options) []frontier.Link {
	return ExtractReader(pageURL, bytes.NewReader(body), opts)
}

// ExtractReader is Extract over a body read from r as it arrives (the spider parses a large body while it
// streams in, instead of keeping it). It reads until the page ends, r fails or opts.MaxLinks links are
// found, whichever comes first; a read error ends the page like its end.
func ExtractReader(pageURL *url.URL, r io.Reader, opts Options) []frontier.Link {
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
		if b, err := resolve(base, baseHref); err == nil {
			base = b.String()
		}
	}
	baseURL, _ := resolve("", base) // the base as the URL Standard serialises it, for the fast path
	out := make([]frontier.Link, 0, len(found))
	seen := make(map[string]int, len(found))
	for _, r := range found {
		u, ok := fastResolve(baseURL, r.href)
		var err error
		if !ok {
			u, err = resolve(base, r.href)
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

// rawTag returns the name of the tag token whose unmodified text is raw ("<name ..." from 1, "</name ..." from
// 2) when it is one Extract looks at (a, area, link, frame, iframe, base, meta), or "". It reads the name where
// the tokenizer does (up to white space, '/' or '>') and compares it ASCII case-insensitively, as the
// tokenizer lower-cases it; a name with a NUL (which TagName would replace) is none of these.
func rawTag(raw []byte, from int) string {
	if from > len(raw) {
		return ""
	}
	end := from
	for end < len(raw) && !strings.ContainsRune(" \n\r\t\f/>", rune(raw[end])) {
		end++
	}
	name := raw[from:end]
	var want string
	switch len(name) {
	case 1:
		want = "a"
	case 4:
		switch name[0] | 0x20 {
		case 'a':
			want = "area"
		case 'l':
			want = "link"
		case 'b':
			want = "base"
		case 'm':
			want = "meta"
		}
	case 5:
		want = "frame"
	case 6:
		want = "iframe"
	}
	if want == "" {
		return ""
	}
	for i := range len(name) {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != want[i] {
			return ""
		}
	}
	return want
}

// hasToken reports whether the space-separated list s contains tok (ASCII case-insensitive).
func hasToken(s, tok string) bool {
	for _, f := range strings.Fields(s) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}

// hasListToken reports whether the comma- or space-separated list s contains tok.
func hasListToken(s, tok string) bool {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if f == tok {
			return true
		}
	}
	return false
}

// Resolve resolves ref against base with the WHATWG rules listed in the package doc and returns an absolute
// http(s) URL without fragment. base may be nil when ref is absolute.
func Resolve(base *url.URL, ref string) (*url.URL, error) {
	b := ""
	if base != nil {
		b = base.String()
	}
	return resolve(b, ref)
}

// resolve is Resolve with the base already serialised (Extract resolves many links against one base).
func resolve(base, ref string) (*url.URL, error) {
	s, err := identity.ResolveReference(base, ref)
	if err != nil {
		if errors.Is(err, identity.ErrUnsupportedScheme) {
			return nil, notHTTPError{err}
		}
		return nil, err // identity's error names the URL and the reason
	}
	return parseResolved(s)
}

// fastResolve resolves the common case without the full URL Standard parser: a relative reference (path,
// query or fragment; no scheme, no "//") made only of characters that neither the Standard nor net/url
// escape or reinterpret, against a base already in the Standard's form. For those, net/url's
// ResolveReference gives the same URL as identity.ResolveReference (FuzzFastResolve holds it to that);
// anything else returns false and takes the full path.
func fastResolve(base *url.URL, ref string) (*url.URL, bool) {
	if base == nil || ref == "" || strings.HasPrefix(ref, "//") {
		return nil, false
	}
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-' || c == '.' || c == '_' || c == '~' || c == '/' || c == '?' || c == '=' || c == '&' ||
			c == ';' || c == ',' || c == '+' || c == '!' || c == '$' || c == '(' || c == ')' || c == '*' || c == '#':
		case c == '%':
			if i+2 >= len(ref) || !ishex(ref[i+1]) || !ishex(ref[i+2]) || ref[i+1] == '2' && (ref[i+2] == 'e' || ref[i+2] == 'E') {
				return nil, false // a bad escape, or "%2e" (a dot segment to the Standard)
			}
		case c == ':':
			if !strings.ContainsAny(ref[:i], "/?#") {
				return nil, false // a scheme
			}
		default:
			return nil, false
		}
	}
	r, err := url.Parse(ref)
	if err != nil || r.Scheme != "" || r.Host != "" || r.Opaque != "" {
		return nil, false
	}
	u := base.ResolveReference(r)
	u.Fragment, u.RawFragment = "", ""
	return u, true
}

// parseResolved parses a WHATWG serialisation with net/url and drops the fragment. The URL Standard keeps a
// '%' that starts no escape ("/100%.html"), which net/url refuses: such bytes are percent-encoded first.
func parseResolved(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		if u, err = url.Parse(escapeInvalid(s)); err != nil {
			return nil, fmt.Errorf("links: %q: %w", s, err)
		}
	}
	if u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("links: %q is not an absolute http(s) URL", s)
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// Normalize applies the WHATWG rules to an absolute URL (see Resolve): it returns a copy serialised as a
// browser would, without fragment. Non-http(s) URLs wrap ErrNotHTTP.
func Normalize(u *url.URL) (*url.URL, error) {
	return resolve("", u.String())
}

// escapeInvalid percent-encodes bytes Go's URL parser rejects: '%' not followed by two hex digits, spaces,
// controls and non-ASCII bytes.
func escapeInvalid(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && (i+2 >= len(s) || !ishex(s[i+1]) || !ishex(s[i+2])):
			b.WriteString("%25")
		case c <= ' ' || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '`' || c == '{' || c == '}' || c == '|' || c == '^':
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func ishex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
