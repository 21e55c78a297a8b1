package identity

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

var errInvalidIPv6 = errors.New("invalid IPv6 URL")

func errBracketedHost(h string) error {
	return fmt.Errorf("bracketed host %q is not an IPv6 address or IPvFuture", h)
}

// canon25 is w3lib 2.5.0's canonicalize_url (w3lib/url.py and w3lib/_url.py), step by step.

type canonScratch struct {
	a, b, dec, net []byte
	pairs          []kv
}

var scratchPool = sync.Pool{New: func() any {
	return &canonScratch{a: make([]byte, 0, 256), b: make([]byte, 0, 256), dec: make([]byte, 0, 256), net: make([]byte, 0, 128), pairs: make([]kv, 0, 16)}
}}

// allIn reports whether every byte of s is in set (so quoting s with set is the identity).
func allIn(s string, set *byteSet) bool {
	for i := 0; i < len(s); i++ {
		if !set[s[i]] {
			return false
		}
	}
	return true
}

func (o CanonOptions) canon25(dst []byte, raw string) ([]byte, error) {
	if c, ok := o.fastCanon25(raw); ok {
		return append(dst, c...), nil
	}
	return o.canon25Slow(dst, raw)
}

// canon25Slow is canon25 without its fast path (canonfast.go).
func (o CanonOptions) canon25Slow(dst []byte, raw string) ([]byte, error) {
	s := raw
	clean, ascii := true, true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' {
			clean = false
		} else if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if !ascii && !utf8.ValidString(s) {
		s = percentEncodeInvalidUTF8(s)
	}
	if !clean {
		// _strip: surrounding C0 controls and spaces, then every tab and newline.
		s = removeTabNewline(strings.TrimFunc(s, func(r rune) bool { return r <= ' ' }))
	}
	// _urlsplit
	scheme, rest := splitScheme(s)
	special := isSpecialScheme(scheme)
	if special && strings.IndexByte(rest, '\\') >= 0 {
		cut := len(rest)
		if q := strings.IndexByte(rest, '?'); q >= 0 {
			cut = q
		}
		if h := strings.IndexByte(rest, '#'); h >= 0 && h < cut {
			cut = h
		}
		rest = strings.ReplaceAll(rest[:cut], "\\", "/") + rest[cut:]
	}
	var netloc, path, query, fragment string
	openBr := -1
	if len(rest) >= 2 && rest[0] == '/' && rest[1] == '/' {
		delim := len(rest)
		if i := strings.IndexAny(rest[2:], "/?#"); i >= 0 {
			delim = i + 2
		}
		netloc = rest[2:delim]
		openBr = strings.IndexByte(netloc, '[')
		closeBr := strings.IndexByte(netloc, ']')
		if (openBr >= 0) != (closeBr >= 0) {
			return dst, invalidURL(raw, "invalid IPv6 URL")
		}
		if openBr >= 0 {
			if err := checkBracketedNetloc25(netloc); err != nil {
				return dst, invalidURL(raw, err.Error())
			}
		}
		rest = rest[delim:]
	}
	if !ascii {
		if err := checkNetlocNFKC(netloc, "/?#@:\\"); err != nil {
			return dst, invalidURL(raw, err.Error())
		}
	}
	path = rest
	if i := strings.IndexByte(path, '#'); i >= 0 {
		path, fragment = path[:i], path[i+1:]
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path, query = path[:i], path[i+1:]
	}

	// netloc components (_SplitResult)
	var username, password, hostname, port string
	haveUser, havePass := false, false
	hostinfo := netloc
	if at := strings.LastIndexByte(netloc, '@'); at >= 0 {
		haveUser = true
		hostinfo = netloc[at+1:]
		username, password, havePass = strings.Cut(netloc[:at], ":")
	}
	if openBr >= 0 {
		_, after, _ := strings.Cut(hostinfo, "[")
		hostname, port, _ = strings.Cut(after, "]")
		_, port, _ = strings.Cut(port, ":")
	} else {
		hostname, port, _ = strings.Cut(hostinfo, ":")
	}
	portNum := -1
	if port != "" {
		for i := 0; i < len(port); i++ {
			if port[i] < '0' || port[i] > '9' {
				return dst, invalidURL(raw, "port could not be cast to integer value as "+strconv.Quote(port))
			}
		}
		trimmed := strings.TrimLeft(port, "0")
		if len(trimmed) > 5 {
			return dst, invalidURL(raw, "port out of range 0-65535")
		}
		n, _ := strconv.Atoi("0" + trimmed)
		if n > 65535 {
			return dst, invalidURL(raw, "port out of range 0-65535")
		}
		portNum = n
	}

	sc := scratchPool.Get().(*canonScratch)
	defer scratchPool.Put(sc)

	// Rebuild the netloc (_safe_url_split), then canonicalize_url's host rules: lower-case the host (not
	// the userinfo), drop one trailing ":", normalise an IPv6 literal.
	nb := sc.net[:0]
	if haveUser {
		sc.a = appendUnquote(sc.a[:0], username, false)
		nb = appendQuote(nb, unsafeString(sc.a), setUserinfoSafest)
		if havePass {
			nb = append(nb, ':')
			sc.a = appendUnquote(sc.a[:0], password, false)
			nb = appendQuote(nb, unsafeString(sc.a), setUserinfoSafest)
		}
		nb = append(nb, '@')
	}
	userLen := len(nb)
	lowered := false
	if !isASCII(hostname) && strings.IndexByte(hostname, '%') < 0 && strings.IndexByte(hostname, ':') < 0 {
		// The usual IDN case in one memo lookup: lower, NFKC, idna (or the raw host), lower again.
		nb = append(nb, host25Cached(hostname)...)
		lowered = true
	} else if h, zone, pct := strings.Cut(hostname, "%"); pct {
		hostname = lowerCached(h) + "%" + zone
	} else if !isASCII(hostname) {
		hostname = lowerCached(hostname)
	}
	switch {
	case lowered:
	case strings.IndexByte(hostname, ':') >= 0:
		if !isASCII(hostname) {
			return dst, invalidURL(raw, "non-ASCII IPv6 host")
		}
		nb = append(nb, '[')
		nb = append(nb, hostname...)
		nb = append(nb, ']')
	case isASCII(hostname):
		nb = append(nb, hostname...)
	default:
		if enc, err := idnaCached(nfkc14Cached(hostname)); err == nil {
			nb = append(nb, enc...)
		} else {
			nb = append(nb, hostname...)
		}
	}
	if portNum >= 0 {
		nb = append(nb, ':')
		nb = strconv.AppendInt(nb, int64(portNum), 10)
	}
	if host := nb[userLen:]; isASCIIBytes(host) {
		for i, c := range host {
			if 'A' <= c && c <= 'Z' {
				host[i] = c + 'a' - 'A'
			}
		}
	} else if !lowered {
		low := lowerCached(string(host))
		nb = append(nb[:userLen], low...)
	}
	if len(nb) > userLen && nb[len(nb)-1] == ':' {
		nb = nb[:len(nb)-1]
	}
	sc.net = nb
	netStr := unsafeString(nb)
	if strings.IndexByte(netStr, '[') >= 0 {
		netStr = normalizeIPv6Host(netStr)
	}

	if scheme != "" {
		dst = append(dst, scheme...)
		dst = append(dst, ':')
	}
	// Path: quoted with _PATH_SAFEST_CHARS, split from its params, then _unquotepath and quoted with
	// _PATH_SAFE_CHARS, dot segments resolved.
	qp := path
	if !allIn(path, setPathSafest) {
		sc.a = appendQuote(sc.a[:0], path, setPathSafest)
		qp = unsafeString(sc.a)
	}
	if qp == "" && query != "" && special {
		qp = "/"
	}
	p, params := splitParams(scheme, qp)
	if netStr != "" {
		dst = append(dst, '/', '/')
		dst = append(dst, netStr...)
		if p != "" && p[0] != '/' {
			// _urlunsplit puts a "/" between a netloc and a relative path.
			dst = append(dst, '/')
		}
	}
	pathStart := len(dst)
	switch {
	case p == "":
		dst = append(dst, '/')
	case strings.IndexByte(p, '%') < 0:
		dst = append(dst, p...) // already all _PATH_SAFEST_CHARS, a subset of _PATH_SAFE_CHARS
	default:
		sc.b = unquotePath25(sc.b[:0], p)
		dst = appendQuote(dst, unsafeString(sc.b), setPathSafe)
	}
	if dst[pathStart] == '/' {
		dst = removeDotSegments(dst, pathStart)
	}
	if params != "" {
		dst = append(dst, ';')
		dst = append(dst, params...)
	}
	if netStr == "" {
		pth := dst[pathStart:]
		if (len(pth) >= 2 && pth[0] == '/' && pth[1] == '/') || (scheme != "" && schemeUsesNetloc(scheme) && (len(pth) == 0 || pth[0] == '/')) {
			dst = append(dst, 0, 0)
			copy(dst[pathStart+2:], dst[pathStart:len(dst)-2])
			dst[pathStart], dst[pathStart+1] = '/', '/'
		}
	}
	if query != "" {
		qs := setPathSafest
		if special {
			qs = setSpecialQuerySaf
		}
		quoted := query
		if !allIn(query, qs) {
			sc.b = appendQuote(sc.b[:0], query, qs)
			quoted = unsafeString(sc.b)
		}
		qStart := len(dst)
		dst = append(dst, '?')
		dst, sc.dec, sc.pairs = o.appendQuery(dst, quoted, false, sc.dec[:0], sc.pairs[:0])
		if len(dst) == qStart+1 {
			dst = dst[:qStart]
		}
	}
	if o.KeepFragments && fragment != "" {
		dst = append(dst, '#')
		dst = appendQuote(dst, fragment, setPathSafest)
	}
	return dst, nil
}

// appendQuery parses a quoted query into (name, value) byte pairs (split on "&", and on ";" too when
// semicolons is set), decodes them with unquote_plus, sorts them and appends their urlencode()d form.
func (o CanonOptions) appendQuery(dst []byte, quoted string, semicolons bool, dec []byte, pairs []kv) ([]byte, []byte, []kv) {
	for len(quoted) > 0 {
		var field string
		i := strings.IndexByte(quoted, '&')
		if semicolons {
			if j := strings.IndexByte(quoted, ';'); j >= 0 && (i < 0 || j < i) {
				i = j
			}
		}
		if i < 0 {
			field, quoted = quoted, ""
		} else {
			field, quoted = quoted[:i], quoted[i+1:]
		}
		if field == "" {
			continue
		}
		k, v, hasEq := strings.Cut(field, "=")
		if o.DropBlankValues && (!hasEq || v == "") {
			continue
		}
		kd := len(dec)
		dec = appendUnquote(dec, k, true)
		vd := len(dec)
		dec = appendUnquote(dec, v, true)
		pairs = append(pairs, kv{k: dec[kd:vd:vd], v: dec[vd:]})
	}
	// dec may have been reallocated while appending: re-slice the pairs from the final buffer.
	pairs = reslicePairs(pairs, dec)
	dst = appendEncodedPairs(dst, pairs)
	return dst, dec, pairs[:0]
}

func isASCIIBytes(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// reslicePairs rebuilds pairs whose slices may point into earlier generations of dec: the pairs were
// appended in order, so their lengths locate them in the final buffer.
func reslicePairs(pairs []kv, dec []byte) []kv {
	off := 0
	for i := range pairs {
		kl, vl := len(pairs[i].k), len(pairs[i].v)
		pairs[i].k = dec[off : off+kl : off+kl]
		off += kl
		pairs[i].v = dec[off : off+vl : off+vl]
		off += vl
	}
	return pairs
}

// checkBracketedNetloc25 is w3lib's _check_bracketed_netloc.
func checkBracketedNetloc25(netloc string) error {
	hp := netloc
	if at := strings.LastIndexByte(netloc, '@'); at >= 0 {
		hp = netloc[at+1:]
	}
	before, bracketed, hasOpen := strings.Cut(hp, "[")
	var hostname string
	if hasOpen {
		if before != "" {
			return errInvalidIPv6
		}
		var port string
		hostname, port, _ = strings.Cut(bracketed, "]")
		if port != "" && port[0] != ':' {
			return errInvalidIPv6
		}
	} else {
		hostname, _, _ = strings.Cut(hp, ":")
	}
	if !pyCheckBracketedHost(hostname, true) {
		return errBracketedHost(hostname)
	}
	return nil
}

// unquotePath25 is w3lib 2.x's _unquotepath: "%25", "%2F", "%3B" and "%3F" survive decoding.
func unquotePath25(dst []byte, path string) []byte {
	if strings.IndexByte(path, '%') < 0 {
		return append(dst, path...)
	}
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c == '%' && i+2 < len(path) {
			h, ok1 := unhex(path[i+1])
			l, ok2 := unhex(path[i+2])
			if ok1 && ok2 {
				b := h<<4 | l
				switch {
				case b == 0x25 && path[i+1] == '2' && path[i+2] == '5':
					dst = append(dst, '%', '2', '5')
				case (b == 0x2F || b == 0x3B || b == 0x3F) && (path[i+1] == '2' || path[i+1] == '3'):
					dst = append(dst, '%', path[i+1], upperASCII(path[i+2]))
				default:
					dst = append(dst, b)
				}
				i += 2
				continue
			}
		}
		dst = append(dst, c)
	}
	return dst
}

func upperASCII(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// removeDotSegments is w3lib's _remove_dot_segments applied to dst[start:], which starts with "/".
func removeDotSegments(dst []byte, start int) []byte {
	if !hasDotSegment(dst[start:]) {
		return dst
	}
	p := string(dst[start:])
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	for _, s := range segs[:len(segs)-1] {
		switch s {
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case ".":
		default:
			out = append(out, s)
		}
	}
	switch last := segs[len(segs)-1]; last {
	case "..":
		if len(out) > 0 {
			out = out[:len(out)-1]
		}
		out = append(out, "")
	case ".":
		out = append(out, "")
	default:
		out = append(out, last)
	}
	dst = append(dst[:start], '/')
	return append(dst, strings.Join(out, "/")...)
}

// normalizeIPv6Host is w3lib's _normalize_ipv6_host.
func normalizeIPv6Host(netloc string) string {
	i := strings.IndexByte(netloc, '[')
	if i < 0 {
		return netloc
	}
	j := strings.IndexByte(netloc[i:], ']')
	if j < 0 {
		return netloc
	}
	j += i
	inner := netloc[i+1 : j]
	if _, ok := pyParseIPv4(inner); ok {
		return netloc
	}
	addr, scope, ok := pyParseIPv6(inner)
	if !ok {
		return netloc
	}
	return netloc[:i] + "[" + pyFormatIPv6(addr, scope) + "]" + netloc[j+1:]
}

// hasDotSegment reports whether the path has a "." or ".." segment (so "/.well-known" costs nothing).
func hasDotSegment(p []byte) bool {
	for i := 0; i+1 < len(p); i++ {
		if p[i] != '/' || p[i+1] != '.' {
			continue
		}
		j := i + 2
		if j < len(p) && p[j] == '.' {
			j++
		}
		if j == len(p) || p[j] == '/' {
			return true
		}
	}
	return false
}
