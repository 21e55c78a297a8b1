package frontier

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

	// _safe_ParseResult
	if enc, err := pyIDNAEncode(netloc); err == nil {
		netloc = enc
	}
	sc := scratchPool.Get().(*canonScratch)
	defer scratchPool.Put(sc)
	tmp := sc.buf[:0]

	netloc = strings.TrimRight(pyLower(netloc), ":")

	start := len(dst)
	if scheme != "" {
		dst = append(dst, scheme...)
		dst = append(dst, ':')
	}
	// Path: quote, then _unquotepath (only %2F and %3F survive), then quote again; empty becomes "/".
	tmp = appendQuote(tmp[:0], path, setSafe)
	qp := string(tmp)
	tmp = tmp[:0]
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
	pathStart := len(dst)
	if len(tmp) == 0 {
		dst = append(dst, '/')
	} else {
		dst = appendQuote(dst, string(tmp), setSafe)
	}
	if params != "" {
		dst = append(dst, ';')
		dst = appendQuote(dst, params, setSafe)
	}
	// urlunsplit: "//netloc" when there is a netloc or the scheme uses one.
	pth := dst[pathStart:]
	if netloc != "" || (scheme != "" && schemeUsesNetloc(scheme) && !(len(pth) >= 2 && pth[0] == '/' && pth[1] == '/')) {
		pre := make([]byte, 0, 2+len(netloc)+1)
		pre = append(pre, '/', '/')
		pre = append(pre, netloc...)
		if len(pth) > 0 && pth[0] != '/' {
			pre = append(pre, '/')
		}
		dst = append(dst[:pathStart], append(pre, pth...)...)
	}
	_ = start
	if query != "" {
		qStart := len(dst)
		dst = append(dst, '?')
		quoted := string(appendQuote(tmp[:0], query, setSafe))
		var dec []byte
		pairs := sc.pairs[:0]
		for amp := range strings.SplitSeq(quoted, "&") {
			for field := range strings.SplitSeq(amp, ";") {
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
		}
		pairs = reslicePairs(pairs, dec)
		dst = appendEncodedPairs(dst, pairs)
		sc.pairs = pairs[:0]
		if len(dst) == qStart+1 {
			dst = dst[:qStart]
		}
	}
	if o.KeepFragments && fragment != "" {
		dst = append(dst, '#')
		dst = appendQuote(dst, fragment, setSafe)
	}
	sc.buf = tmp[:0]
	return dst, nil
}
