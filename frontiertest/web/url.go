package web

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/idna"
)

// Normalize resolves ref against base (base may be "" when ref is absolute) and returns the canonical form this
// package keys pages by: the way a browser resolves a link (WHATWG: surrounding spaces and inner tabs and
// newlines removed, '\' read as '/', scheme and host lower-cased, default port dropped, dot segments removed,
// empty path → "/"), then canonicalised as w3lib's canonicalize_url does for the
// ASCII URLs this site generates (escapes of unreserved characters decoded, other escapes upper-cased, query
// arguments sorted, fragment dropped). Only http and https URLs are accepted.
func Normalize(base, ref string) (string, error) {
	var b *url.URL
	if base != "" {
		var err error
		if b, err = url.Parse(base); err != nil {
			return "", fmt.Errorf("web: base URL %q: %w", base, err)
		}
	}
	u, err := normalizeURL(b, ref)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

// whatwgClean does what the WHATWG URL parser does to its input first: strip leading and trailing C0 controls
// and spaces, remove every tab and newline, and (for http and https) read '\' as '/'.
func whatwgClean(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	return strings.Map(func(r rune) rune {
		switch r {
		case '\t', '\n', '\r':
			return -1
		case '\\':
			return '/'
		}
		return r
	}, s)
}

func normalizeURL(base *url.URL, ref string) (*url.URL, error) {
	r, err := url.Parse(whatwgClean(ref))
	if err != nil {
		return nil, fmt.Errorf("web: URL %q: %w", ref, err)
	}
	if base != nil {
		r = base.ResolveReference(r)
	}
	scheme := strings.ToLower(r.Scheme)
	if scheme != "http" && scheme != "https" {
		return nil, fmt.Errorf("web: URL %q: scheme %q is not http or https", ref, r.Scheme)
	}
	host := strings.ToLower(r.Hostname())
	if host == "" {
		return nil, fmt.Errorf("web: URL %q has no host", ref)
	}
	if !isASCII(host) {
		a, err := idna.Lookup.ToASCII(host)
		if err != nil {
			return nil, fmt.Errorf("web: URL %q: host: %w", ref, err)
		}
		host = a
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6
	}
	if port := r.Port(); port != "" && !(scheme == "http" && port == "80") && !(scheme == "https" && port == "443") {
		host += ":" + port
	}
	path := normEscapes(removeDots(r.EscapedPath()))
	if path == "" {
		path = "/"
	}
	out := &url.URL{Scheme: scheme, Host: host}
	if err := setEscapedPath(out, path); err != nil {
		return nil, fmt.Errorf("web: URL %q: %w", ref, err)
	}
	if r.RawQuery != "" || r.ForceQuery {
		out.RawQuery = sortQuery(r.RawQuery)
	}
	return out, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// setEscapedPath sets both Path and RawPath so that String() prints exactly p.
func setEscapedPath(u *url.URL, p string) error {
	dec, err := url.PathUnescape(p)
	if err != nil {
		return err
	}
	u.Path = dec
	if u.EscapedPath() != p {
		u.RawPath = p
		if u.EscapedPath() != p {
			return errors.New("path cannot be represented")
		}
	}
	return nil
}

// removeDots removes "." and ".." segments as RFC 3986 §5.2.4 does.
func removeDots(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	var out []string
	segs := strings.Split(p, "/")
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if strings.HasPrefix(p, "/") && !strings.HasPrefix(r, "/") {
		r = "/" + r
	}
	return r
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// normEscapes decodes %XX of unreserved characters and upper-cases the hex of the others.
func normEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				c := hi<<4 | lo
				if isUnreserved(c) {
					b.WriteByte(c)
				} else {
					b.WriteString(strings.ToUpper(s[i : i+3]))
				}
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// sortQuery sorts the arguments of a raw query by name, then value, as w3lib does; blank values are kept.
func sortQuery(q string) string {
	if q == "" {
		return ""
	}
	type kv struct{ k, v, raw string }
	var args []kv
	for part := range strings.SplitSeq(q, "&") {
		if part == "" {
			continue
		}
		part = normEscapes(part)
		k, v, _ := strings.Cut(part, "=")
		args = append(args, kv{k, v, k + "=" + v})
	}
	slices.SortStableFunc(args, func(a, b kv) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.v, b.v)
	})
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.raw
	}
	return strings.Join(parts, "&")
}

// pathQuery returns the path?query part of a normalised URL, the key a host routes by.
func pathQuery(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}
