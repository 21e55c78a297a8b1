package frontier

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
	buf   []byte // decoded query bytes and the path
	pairs []kv
}

var scratchPool = sync.Pool{New: func() any { return &canonScratch{buf: make([]byte, 0, 512), pairs: make([]kv, 0, 16)} }}

func (o CanonOptions) canon25(dst []byte, raw string) ([]byte, error) {
	s := raw
	if !isASCII(s) && !utf8.ValidString(s) {
		s = percentEncodeInvalidUTF8(s)
	}
	// _strip: only when a C0 control or space is present.
	for i := 0; i < len(s); i++ {
		if isC0OrSpace(s[i]) {
			s = removeTabNewline(strings.TrimFunc(s, func(r rune) bool { return r <= ' ' }))
			break
		}
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
	hasNetloc := len(rest) >= 2 && rest[0] == '/' && rest[1] == '/'
	openBr := -1
	if hasNetloc {
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
	if err := checkNetlocNFKC(netloc, "/?#@:\\"); err != nil {
		return dst, invalidURL(raw, err.Error())
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
		userinfo := netloc[:at]
		hostinfo = netloc[at+1:]
		username, password, havePass = strings.Cut(userinfo, ":")
	}
	if openBr >= 0 {
		_, after, _ := strings.Cut(hostinfo, "[")
		hostname, port, _ = strings.Cut(after, "]")
		_, port, _ = strings.Cut(port, ":")
	} else {
		hostname, port, _ = strings.Cut(hostinfo, ":")
	}
	{
		h, zone, delim := strings.Cut(hostname, "%")
		h = pyLower(h)
		if delim {
			hostname = h + "%" + zone
		} else {
			hostname = h
		}
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
	tmp := sc.buf[:0]

	// Rebuild the netloc (_safe_url_split).
	start := len(dst)
	if scheme != "" {
		dst = append(dst, scheme...)
		dst = append(dst, ':')
	}
	netStart := -1
	var netBuf []byte
	if haveUser {
		tmp = appendUnquote(tmp[:0], username, false)
		netBuf = appendQuote(netBuf, string(tmp), setUserinfoSafest)
		if havePass {
			netBuf = append(netBuf, ':')
			tmp = appendUnquote(tmp[:0], password, false)
			netBuf = appendQuote(netBuf, string(tmp), setUserinfoSafest)
		}
		netBuf = append(netBuf, '@')
	}
	userLen := len(netBuf)
	if strings.IndexByte(hostname, ':') >= 0 {
		if !isASCII(hostname) {
			return dst[:start], invalidURL(raw, "non-ASCII IPv6 host")
		}
		netBuf = append(netBuf, '[')
		netBuf = append(netBuf, hostname...)
		netBuf = append(netBuf, ']')
	} else if isASCII(hostname) {
		netBuf = append(netBuf, hostname...)
	} else if enc, err := pyIDNAEncode(nfkc14(hostname)); err == nil {
		netBuf = append(netBuf, enc...)
	} else {
		netBuf = append(netBuf, hostname...)
	}
	if portNum >= 0 {
		netBuf = append(netBuf, ':')
		netBuf = strconv.AppendInt(netBuf, int64(portNum), 10)
	}
	// canonicalize_url: lower-case the host (not the userinfo), drop one trailing ":", normalise IPv6.
	host := string(netBuf[userLen:])
	host = pyLower(host)
	host = strings.TrimSuffix(host, ":")
	netBuf = append(netBuf[:userLen], host...)
	netStr := normalizeIPv6Host(string(netBuf))

	// Path (quoted with _PATH_SAFEST_CHARS) and query.
	quotedPath := string(appendQuote(tmp[:0], path, setPathSafest))
	quotedQuery := ""
	if query != "" {
		qs := setPathSafest
		if special {
			qs = setSpecialQuerySaf
		}
		quotedQuery = string(appendQuote(tmp[:0], query, qs))
	}
	quotedFrag := ""
	if o.KeepFragments && fragment != "" {
		quotedFrag = string(appendQuote(tmp[:0], fragment, setPathSafest))
	}
	if quotedPath == "" && quotedQuery != "" && special {
		quotedPath = "/"
	}
	p, params := splitParams(scheme, quotedPath)

	// Assemble: _urlunparse(scheme, netloc, path, params, query, fragment).
	if netStr != "" {
		netStart = len(dst)
		dst = append(dst, '/', '/')
		dst = append(dst, netStr...)
	}
	pathStart := len(dst)
	if p == "" {
		dst = append(dst, '/')
	} else {
		dst = appendQuote(dst, string(unquotePath25(tmp[:0], p)), setPathSafe)
	}
	if dst[pathStart] == '/' {
		dst = removeDotSegments(dst, pathStart)
	}
	if params != "" {
		dst = append(dst, ';')
		dst = append(dst, params...)
	}
	if netStr != "" && dst[pathStart] != '/' {
		// _urlunsplit puts a "/" between a netloc and a relative path.
		dst = append(dst[:pathStart], append([]byte{'/'}, dst[pathStart:]...)...)
	} else if netStr == "" {
		pth := dst[pathStart:]
		if (len(pth) >= 2 && pth[0] == '/' && pth[1] == '/') || (scheme != "" && schemeUsesNetloc(scheme) && (len(pth) == 0 || pth[0] == '/')) {
			dst = append(dst[:pathStart], append([]byte{'/', '/'}, pth...)...)
		}
	}
	_ = netStart
	if quotedQuery != "" {
		qStart := len(dst)
		dst = append(dst, '?')
		pairs := sc.pairs[:0]
		var dec []byte
		for field := range strings.SplitSeq(quotedQuery, "&") {
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
		sc.pairs = pairs[:0]
		if len(dst) == qStart+1 {
			dst = dst[:qStart]
		}
	}
	if quotedFrag != "" {
		dst = append(dst, '#')
		dst = append(dst, quotedFrag...)
	}
	sc.buf = tmp[:0]
	return dst, nil
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
	p := string(dst[start:])
	if !strings.Contains(p, "/.") {
		return dst
	}
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
