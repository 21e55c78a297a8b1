package identity

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Browser-style resolution (WHATWG URL Standard), for links and seeds before Canonicalize.
//
// w3lib keeps "http://example.com:80/a" and "http://example.com/a" apart and leaves "/a/./b" alone under
// 1.22; a browser sends the same request for both. ResolveReference and NormalizeURL apply the URL
// Standard's parsing to http and https URLs, so that the identity layer sees what a browser would fetch:
//
//   - surrounding C0 controls and spaces stripped, tabs and newlines removed, "\" read as "/";
//   - scheme and host lower-cased; the host IDNA-mapped (UTS #46, non-transitional, as browsers do,
//     through golang.org/x/net/idna), an IPv4 host in any of its number forms (0x7f.1, 2130706433)
//     printed dotted-decimal, an IPv6 host in RFC 5952 form;
//   - the default port (80, 443) dropped, an empty port dropped, leading zeros removed;
//   - "." and ".." segments (also "%2e" forms) resolved; an empty path becomes "/";
//   - characters outside the URL Standard's path, query, fragment and userinfo sets percent-encoded
//     (existing escapes are kept as they are: w3lib normalises them afterwards);
//   - only http and https are accepted: other schemes (mailto:, javascript:, data:, ftp:) are an error,
//     as is a URL without a host, a bad port or a forbidden host code point; so is (stricter than the
//     Standard) a host character net/url rejects, such as "`" or "{", since no fetch could follow.
//
// It is a reduced implementation of the Standard's state machine: what a crawler needs for http(s), not
// file: or blob: URLs; it does not reproduce every validation error, and the host is mapped with UTS #46
// tables of golang.org/x/text's Unicode version.

// ErrUnsupportedScheme is wrapped by the resolution errors for URLs that are not http or https.
var ErrUnsupportedScheme = errors.New("identity: not an http or https URL")

// NormalizeURL parses an absolute http(s) URL the way a browser does and returns its serialisation.
func NormalizeURL(rawURL string) (string, error) {
	return ResolveReference("", rawURL)
}

// ResolveReference resolves ref against base (both as a browser reads them) and returns the absolute
// URL. An empty base requires ref to be absolute.
func ResolveReference(base, ref string) (string, error) {
	var b *webURL
	if base != "" {
		pb, err := parseWebURL(nil, base)
		if err != nil {
			return "", &URLError{URL: base, Base: true, Err: err}
		}
		b = pb
	}
	u, err := parseWebURL(b, ref)
	if err != nil {
		return "", &URLError{URL: ref, Err: err}
	}
	return u.String(), nil
}

// URLError is an URL that cannot be resolved, with the reason. Err may be ErrUnsupportedScheme (use
// errors.Is). Callers that name the URL themselves print Reason.
type URLError struct {
	URL  string
	Base bool // the base URL, not the reference, is invalid
	Err  error
}

func (e *URLError) Error() string {
	what := "URL"
	if e.Base {
		what = "base URL"
	}
	return fmt.Sprintf("identity: %s %q: %s", what, e.URL, e.Reason())
}

// Reason is what is wrong with the URL, without the package prefix or the URL.
func (e *URLError) Reason() string { return strings.TrimPrefix(e.Err.Error(), "identity: ") }

func (e *URLError) Unwrap() error { return e.Err }

type webURL struct {
	scheme, userinfo, host, port, path string
	query, fragment                    *string
}

func (u *webURL) String() string {
	var b strings.Builder
	b.WriteString(u.scheme)
	b.WriteString("://")
	if u.userinfo != "" {
		b.WriteString(u.userinfo)
		b.WriteByte('@')
	}
	b.WriteString(u.host)
	if u.port != "" {
		b.WriteByte(':')
		b.WriteString(u.port)
	}
	b.WriteString(u.path)
	if u.query != nil {
		b.WriteByte('?')
		b.WriteString(*u.query)
	}
	if u.fragment != nil {
		b.WriteByte('#')
		b.WriteString(*u.fragment)
	}
	return b.String()
}

// Percent-encode sets of the URL Standard (beyond C0 controls and non-ASCII, always encoded).
const (
	fragmentSet     = " \"<>`"
	querySet        = " \"#<>'" // special-query set
	pathSet         = " \"#<>?`{}"
	userinfoSetMore = "/:;=@[\\]^|"
)

func webEncode(s, set string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7F || strings.IndexByte(set, c) >= 0 {
			if b == nil {
				b = append(make([]byte, 0, len(s)+8), s[:i]...)
			}
			b = append(b, '%', upperHex[c>>4], upperHex[c&15])
		} else if b != nil {
			b = append(b, c)
		}
	}
	if b == nil {
		return s
	}
	return string(b)
}

var webIDNA = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.CheckHyphens(false),
	idna.CheckJoiners(true), idna.BidiRule(), idna.StrictDomainName(false), idna.VerifyDNSLength(false))

func parseWebURL(base *webURL, s string) (*webURL, error) {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	s = removeTabNewline(s)
	if !utf8.ValidString(s) {
		return nil, errors.New("not valid UTF-8")
	}
	scheme, rest := splitScheme(s)
	if scheme == "" {
		if base == nil {
			return nil, errors.New("relative URL without a base")
		}
		return resolveRelative(base, s)
	}
	if scheme != "http" && scheme != "https" {
		return nil, fmt.Errorf("%w: scheme %q", ErrUnsupportedScheme, scheme)
	}
	rest = backslashes(rest)
	if base != nil && base.scheme == scheme && !strings.HasPrefix(rest, "//") {
		// "http:foo" and "http:/foo" against an http base are relative (special relative or authority
		// state: only two slashes, or backslashes, start an authority).
		return resolveRelative(base, rest)
	}
	// special authority ignore slashes state
	rest = strings.TrimLeft(rest, "/")
	u := &webURL{scheme: scheme}
	if err := u.setAuthorityAndRest(rest); err != nil {
		return nil, err
	}
	return u, nil
}

// backslashes turns "\" into "/" before the query and fragment.
func backslashes(s string) string {
	cut := len(s)
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		cut = i
	}
	if strings.IndexByte(s[:cut], '\\') < 0 {
		return s
	}
	return strings.ReplaceAll(s[:cut], "\\", "/") + s[cut:]
}

func (u *webURL) setAuthorityAndRest(rest string) error {
	end := len(rest)
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		end = i
	}
	auth, tail := rest[:end], rest[end:]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		// "user:" serialises without the empty password, "@" alone without userinfo.
		user, pass, _ := strings.Cut(auth[:at], ":")
		u.userinfo = webEncode(user, userinfoSetMore+pathSet)
		if pass != "" {
			u.userinfo += ":" + webEncode(pass, userinfoSetMore+pathSet)
		}
		auth = auth[at+1:]
	}
	hostport := auth
	var port string
	if strings.HasPrefix(hostport, "[") {
		i := strings.IndexByte(hostport, ']')
		if i < 0 {
			return errors.New("unterminated IPv6 host")
		}
		if r := hostport[i+1:]; r != "" {
			if r[0] != ':' {
				return errors.New("junk after IPv6 host")
			}
			port = r[1:]
		}
		hostport = hostport[:i+1]
	} else if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
		hostport, port = hostport[:i], hostport[i+1:]
	}
	host, err := webHost(hostport)
	if err != nil {
		return err
	}
	u.host = host
	if port != "" {
		for i := 0; i < len(port); i++ {
			if port[i] < '0' || port[i] > '9' {
				return fmt.Errorf("invalid port %q", port)
			}
		}
		n, err := strconv.ParseUint(port, 10, 32)
		if err != nil || n > 65535 {
			return fmt.Errorf("port %q out of range", port)
		}
		if !(u.scheme == "http" && n == 80) && !(u.scheme == "https" && n == 443) {
			u.port = strconv.FormatUint(n, 10)
		}
	}
	u.setPathQueryFragment(tail, nil)
	return nil
}

// setPathQueryFragment parses "path?query#fragment"; when basePath is not nil the path is relative to it.
func (u *webURL) setPathQueryFragment(s string, basePath *string) {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		f := webEncode(s[i+1:], fragmentSet)
		u.fragment = &f
		s = s[:i]
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		q := webEncode(s[i+1:], querySet)
		u.query = &q
		s = s[:i]
	}
	p := s
	if basePath != nil && !strings.HasPrefix(p, "/") {
		dir := *basePath
		if i := strings.LastIndexByte(dir, '/'); i >= 0 {
			dir = dir[:i+1]
		} else {
			dir = "/"
		}
		p = dir + p
	}
	if p == "" {
		p = "/"
	}
	u.path = webEncode(webDotSegments(p), pathSet)
}

func isSingleDot(s string) bool { return s == "." || strings.EqualFold(s, "%2e") }
func isDoubleDot(s string) bool {
	switch strings.ToLower(s) {
	case "..", ".%2e", "%2e.", "%2e%2e":
		return true
	}
	return false
}

// webDotSegments applies the URL Standard's path state to a path that starts with "/".
func webDotSegments(p string) string {
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch {
		case isDoubleDot(s):
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		case isSingleDot(s):
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return "/" + strings.Join(out, "/")
}

func resolveRelative(base *webURL, ref string) (*webURL, error) {
	ref = backslashes(ref)
	if strings.HasPrefix(ref, "//") {
		// special authority ignore slashes state: "///host" and "//\/host" name the host too.
		u := &webURL{scheme: base.scheme}
		if err := u.setAuthorityAndRest(strings.TrimLeft(ref, "/")); err != nil {
			return nil, err
		}
		return u, nil
	}
	u := &webURL{scheme: base.scheme, userinfo: base.userinfo, host: base.host, port: base.port}
	switch {
	case ref == "":
		u.path, u.query = base.path, base.query
	case ref[0] == '#':
		u.path, u.query = base.path, base.query
		f := webEncode(ref[1:], fragmentSet)
		u.fragment = &f
	case ref[0] == '?':
		u.path = base.path
		u.setPathQueryFragment(ref, &base.path)
		u.path = base.path
	default:
		u.setPathQueryFragment(ref, &base.path)
	}
	return u, nil
}

// webHost is the URL Standard's host parser for special schemes.
func webHost(h string) (string, error) {
	if h == "" {
		return "", errors.New("empty host")
	}
	if strings.HasPrefix(h, "[") {
		if !strings.HasSuffix(h, "]") || strings.IndexByte(h, '%') >= 0 {
			return "", fmt.Errorf("invalid IPv6 host %q", h)
		}
		a, err := netip.ParseAddr(h[1 : len(h)-1])
		if err != nil || !a.Is6() {
			return "", fmt.Errorf("invalid IPv6 host %q", h)
		}
		b16 := a.As16()
		var w [8]uint16
		for i := range w {
			w[i] = uint16(b16[2*i])<<8 | uint16(b16[2*i+1])
		}
		return "[" + pyFormatIPv6(w, "") + "]", nil
	}
	var dec []byte
	dec = appendUnquote(dec, h, false)
	if !utf8.Valid(dec) {
		return "", fmt.Errorf("host %q is not UTF-8 after percent-decoding", h)
	}
	ascii, err := webIDNA.ToASCII(string(dec))
	if err != nil {
		return "", fmt.Errorf("host %q: %w", h, err)
	}
	if ascii == "" {
		return "", errors.New("empty host")
	}
	for i := 0; i < len(ascii); i++ {
		// forbidden domain code points: C0 controls, space, DEL and #%/:<>?@[\]^|
		if c := ascii[i]; c <= ' ' || c == 0x7F || strings.IndexByte("#%/:<>?@[\\]^|", c) >= 0 {
			return "", fmt.Errorf("forbidden host code point %q in %q", c, h)
		}
		// Stricter than the Standard: a host character net/url (and so the fetcher) cannot carry, such
		// as "`", "{" or "}", makes the URL unfetchable, so it is refused here.
		if c := ascii[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' ||
			strings.IndexByte("-._~!$&'()*+,;=", c) >= 0) {
			return "", fmt.Errorf("host character %q in %q cannot be fetched", c, h)
		}
	}
	if v4, ok, err := webIPv4(ascii); err != nil {
		return "", err
	} else if ok {
		return v4, nil
	}
	return ascii, nil
}

// webIPv4 is the URL Standard's IPv4 parser: it applies when the host ends in a number (the last label is
// all digits or parses as an IPv4 number, whatever its size), and then the host must be a valid IPv4
// address: "0xffffffff1" is an error, not a domain name.
func webIPv4(h string) (string, bool, error) {
	parts := strings.Split(h, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if _, ok := webIPv4Number(last); !ok && !isAllDigits(last) {
		return "", false, nil
	}
	if len(parts) > 4 {
		return "", false, fmt.Errorf("IPv4 host %q has more than 4 parts", h)
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := webIPv4Number(p)
		if !ok {
			return "", false, fmt.Errorf("invalid IPv4 host %q", h)
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return "", false, fmt.Errorf("IPv4 host %q out of range", h)
		}
	}
	if nums[len(nums)-1] >= 1<<(8*(5-len(nums))) {
		return "", false, fmt.Errorf("IPv4 host %q out of range", h)
	}
	ip := nums[len(nums)-1]
	for i, n := range nums[:len(nums)-1] {
		ip += n << (8 * (3 - i))
	}
	return fmt.Sprintf("%d.%d.%d.%d", ip>>24&255, ip>>16&255, ip>>8&255, ip&255), true, nil
}

func isAllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// webIPv4Number is the URL Standard's IPv4 number parser. ok reports whether s is a number in its syntax
// (decimal, 0-prefixed octal, 0x-prefixed hex); a number too large for an address saturates above 2^32,
// so that the caller fails it as out of range rather than taking the host for a domain name.
func webIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	const saturated = 1 << 40
	var n uint64
	for i := 0; i < len(s); i++ {
		d, ok := unhex(s[i])
		if !ok || uint64(d) >= base {
			return 0, false
		}
		if n < saturated {
			n = n*base + uint64(d)
		}
	}
	return n, true
}
