package identity

import (
	"strings"
	"unicode/utf8"
)

// canon122 is w3lib 1.22.0's canonicalize_url over CPython 3.11.7's urllib.parse, step by step.
func (o CanonOptions) canon122(dst []byte, raw string) ([]byte, error) {
	if !isASCII(raw) && !utf8.ValidString(raw) {
		return dst, invalidURL(raw, "not valid UTF-8 (w3lib 1.22's to_unicode raises)")
	}
	pp, err := pyURLParse(raw)
	if err != nil {
		return dst, invalidURL(raw, err.Error())
	}
	scheme, netloc, path, params, query, fragment := pp.scheme, pp.netloc, pp.path, pp.params, pp.query, pp.fragment

	// _safe_ParseResult: the whole netloc through the idna codec (kept raw when it fails).
	if !isASCII(netloc) {
		if enc, err := idnaCached(netloc); err == nil {
			netloc = enc
		}
	}
	netloc = strings.TrimRight(lowerCached(netloc), ":")
	sc := scratchPool.Get().(*canonScratch)
	defer scratchPool.Put(sc)

	if scheme != "" {
		dst = append(dst, scheme...)
		dst = append(dst, ':')
	}
	// urlunsplit: "//netloc" when there is a netloc or the scheme uses one (the path is never empty and
	// cannot start with "//" unless the input's did).
	pathStart := len(dst)
	// Path: quote, then _unquotepath (only %2F and %3F survive), then quote again; empty becomes "/".
	qp := path
	if !allIn(path, setSafe) {
		sc.a = appendQuote(sc.a[:0], path, setSafe)
		qp = unsafeString(sc.a)
	}
	switch {
	case qp == "":
		dst = append(dst, '/')
	case strings.IndexByte(qp, '%') < 0:
		dst = append(dst, qp...)
	default:
		tmp := sc.b[:0]
		for i := 0; i < len(qp); i++ {
			c := qp[i]
			if c == '%' && i+2 < len(qp) {
				h, ok1 := unhex(qp[i+1])
				l, ok2 := unhex(qp[i+2])
				if ok1 && ok2 {
					if b := h<<4 | l; b == '/' || b == '?' {
						tmp = append(tmp, '%', qp[i+1], upperASCII(qp[i+2]))
					} else {
						tmp = append(tmp, b)
					}
					i += 2
					continue
				}
			}
			tmp = append(tmp, c)
		}
		sc.b = tmp
		dst = appendQuote(dst, unsafeString(tmp), setSafe)
	}
	if params != "" {
		dst = append(dst, ';')
		dst = appendQuote(dst, params, setSafe)
	}
	pth := dst[pathStart:]
	if netloc != "" || (scheme != "" && schemeUsesNetloc(scheme) && !(len(pth) >= 2 && pth[0] == '/' && pth[1] == '/')) {
		ins := 2 + len(netloc)
		if pth[0] != '/' {
			ins++
		}
		dst = append(dst, make([]byte, ins)...)
		copy(dst[pathStart+ins:], dst[pathStart:len(dst)-ins])
		dst[pathStart], dst[pathStart+1] = '/', '/'
		copy(dst[pathStart+2:], netloc)
		if ins > 2+len(netloc) {
			dst[pathStart+ins-1] = '/'
		}
	}
	if query != "" {
		quoted := query
		if !allIn(query, setSafe) {
			sc.a = appendQuote(sc.a[:0], query, setSafe)
			quoted = unsafeString(sc.a)
		}
		qStart := len(dst)
		dst = append(dst, '?')
		dst, sc.dec, sc.pairs = o.appendQuery(dst, quoted, true, sc.dec[:0], sc.pairs[:0])
		if len(dst) == qStart+1 {
			dst = dst[:qStart]
		}
	}
	if o.KeepFragments && fragment != "" {
		dst = append(dst, '#')
		dst = appendQuote(dst, fragment, setSafe)
	}
	return dst, nil
}
