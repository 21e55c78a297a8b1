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
		inA         = -1   // index in found of the open <a>, collecting text
		text        []byte // the open <a>'s text so far (reused from link to link)
	)
	closeA := func() {
		if inA >= 0 {
			found[inA].text = collapseSpace(text)
			inA = -1
			text = text[:0]
		}
	}
	for len(found) < opts.MaxLinks {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		switch tt {
		case html.TextToken:
			if inA >= 0 && len(text) < opts.MaxTextBytes {
				t := z.Text()
				if n := opts.MaxTextBytes - len(text); len(t) > n {
					t = t[:n]
				}
				text = append(text, t...)
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
		// TagAttr reads the attributes without TagName first (which would copy the name) and returns no key
		// when the tag has none.
		var href, src, rel, metaName, content string
		for more := true; more; {
			var k, v []byte
			k, v, more = z.TagAttr()
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
		var s string // the link as the URL Standard serialises it, without fragment
		u, ok := fastResolve(baseURL, r.href)
		if !ok && baseURL != nil {
			// Absolute and already in the Standard's form: the base plays no part, and the serialisation is
			// the reference up to its fragment.
			if u, ok = canonicalURL(r.href); ok {
				s, _, _ = strings.Cut(r.href, "#")
			}
		}
		var err error
		if !ok {
			u, err = resolve(base, r.href)
		}
		if err != nil {
			continue
		}
		if s == "" {
			s = u.String()
		}
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

// collapseSpace is strings.Join(strings.Fields(string(b)), " "), in one allocation when b is ASCII text
// without runs of white space or white space at its ends (most anchor text).
func collapseSpace(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	prevSpace := true // so that leading white space takes the general path
	for _, c := range b {
		switch {
		case c >= 0x80, c == '\t', c == '\n', c == '\v', c == '\f', c == '\r':
			return strings.Join(strings.Fields(string(b)), " ")
		case c == ' ':
			if prevSpace {
				return strings.Join(strings.Fields(string(b)), " ")
			}
			prevSpace = true
		default:
			prevSpace = false
		}
	}
	if prevSpace {
		return strings.Join(strings.Fields(string(b)), " ")
	}
	return string(b)
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
scan:
	for ; end < len(raw); end++ {
		switch raw[end] {
		case ' ', '\n', '\r', '\t', '\f', '/', '>':
			break scan
		}
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
	if base == "" {
		if u, ok := canonicalURL(ref); ok {
			return u, nil
		}
	}
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

// canonicalURL parses s with net/url when s is an absolute http(s) URL already in the form the URL Standard
// serialises it to, so that identity.ResolveReference("", s) would return s unchanged (FuzzCanonicalURL
// holds it to that): lower-case scheme and host, the host a name of ASCII letters, digits and hyphens (no
// IDNA "xn--" label, no label that ends in a number unless the host is a dotted-decimal IPv4 address), no
// userinfo, no default or zero-led port, a path from "/" without dot segments, and path, query and fragment
// made only of characters neither the Standard nor net/url escape or reinterpret. Anything else returns
// false and takes the full path. The fragment is dropped, as parseResolved does; the URL's String is then s
// up to its '#'.
func canonicalURL(s string) (*url.URL, bool) {
	var rest, defPort string
	switch {
	case strings.HasPrefix(s, "http://"):
		rest, defPort = s[len("http://"):], "80"
	case strings.HasPrefix(s, "https://"):
		rest, defPort = s[len("https://"):], "443"
	default:
		return nil, false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 || rest[end] != '/' {
		return nil, false // an empty path serialises as "/"
	}
	host, port, hasPort := strings.Cut(rest[:end], ":")
	if hasPort && !canonicalPort(port, defPort) || !canonicalHost(host) {
		return nil, false
	}
	tail := rest[end:]
	seg, inPath := 1, true // the start of the current path segment; still in the path
	for i := 1; i < len(tail); i++ {
		c := tail[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-' || c == '.' || c == '_' || c == '~' || c == '=' || c == '&' || c == ';' || c == ',' ||
			c == '+' || c == '!' || c == '$' || c == '(' || c == ')' || c == '*' || c == ':' || c == '@':
		case c == '/' || c == '?' || c == '#':
			if inPath {
				if isDotSegment(tail[seg:i]) {
					return nil, false
				}
				seg, inPath = i+1, c == '/'
			}
		case c == '%':
			if i+2 >= len(tail) || !ishex(tail[i+1]) || !ishex(tail[i+2]) || tail[i+1] == '2' && (tail[i+2] == 'e' || tail[i+2] == 'E') {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	if inPath && isDotSegment(tail[seg:]) {
		return nil, false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host != rest[:end] {
		return nil, false
	}
	u.Fragment, u.RawFragment = "", ""
	return u, true
}

func isDotSegment(s string) bool { return s == "." || s == ".." }

// canonicalPort reports whether port (digits) is serialised as is for a scheme whose default port is def.
func canonicalPort(port, def string) bool {
	if port == "" || port == def || len(port) > 5 || port[0] == '0' {
		return false
	}
	n := 0
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
		n = n*10 + int(port[i]-'0')
	}
	return n <= 65535
}

// canonicalHost reports whether h is a host the URL Standard serialises unchanged: a dotted-decimal IPv4
// address, or lower-case ASCII labels of letters, digits and inner hyphens, none an IDNA "xn--" label or
// with "--" at the third position, the last starting with a letter.
func canonicalHost(h string) bool {
	if h == "" {
		return false
	}
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last != "" && last[0] >= '0' && last[0] <= '9' {
		return canonicalIPv4(h)
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' || len(label) >= 4 && label[2:4] == "--" {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// canonicalIPv4 reports whether h is four decimal numbers of 0-255 without leading zeros.
func canonicalIPv4(h string) bool {
	parts := 0
	for p := range strings.SplitSeq(h, ".") {
		parts++
		if p == "" || len(p) > 3 || len(p) > 1 && p[0] == '0' {
			return false
		}
		n := 0
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
			n = n*10 + int(p[i]-'0')
		}
		if n > 255 {
			return false
		}
	}
	return parts == 4
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

// NormalizeString is Normalize(url.Parse(s)), url.Parse's error when s does not parse: the spider's reading
// of a feed URL. A URL already in the Standard's form (see canonicalURL) is parsed once, not twice.
// FuzzNormalizeString holds the two to the same answer.
func NormalizeString(s string) (*url.URL, error) {
	if u, ok := canonicalURL(s); ok {
		return u, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	return Normalize(u)
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
