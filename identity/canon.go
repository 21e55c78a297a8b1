package identity

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Canonical URLs
//
// Canonicalize reproduces w3lib's canonicalize_url(url, keep_blank_values=True, keep_fragments=False)
// byte for byte, as Scrapy and Frontera compute it, in one of two modes:
//
//   - CanonW3lib25 (the default): w3lib 2.5.0, what `pip install frontera scrapy` installs today, on
//     CPython 3.11. It strips surrounding C0 controls and spaces, reads "\" as "/" in the authority and
//     path of special schemes, validates the port (an error for a non-numeric or out-of-range port),
//     lower-cases the host but not the userinfo, splits the query on "&" only, keeps "%25", "%2F",
//     "%3B" and "%3F" encoded in the path, resolves "." and ".." path segments and prints IPv6 hosts
//     in RFC 5952 form.
//   - CanonW3lib122: w3lib 1.22.0, Frontera 0.8's era (urllib.parse of CPython 3.11.7 underneath). It
//     IDNA-encodes the whole netloc, lower-cases userinfo too, keeps default ports, splits the query on
//     "&" and ";", decodes "%25" in the path (so "%2541" becomes "%41") and keeps dot segments.
//
// Frontera's stored fingerprints were computed under 1.22; a crawl that must share state with an existing
// Frontera deployment should pick CanonW3lib122 (ParseCanonMode("w3lib-1.22")).
//
// Where w3lib raises (an invalid IPv6 literal, a bad port, a netloc that NFKC turns into delimiters), the
// error names the culprit; otherwise the result is exactly w3lib's, quirks included (w3lib 1.22 turns
// "%23" in a path into a literal "#"; a host whose IDNA encoding fails is kept raw and lower-cased). The
// input is a Go string of UTF-8; bytes that are not valid UTF-8 are percent-encoded under 2.5 (as w3lib
// does for a bytes URL) and are an error under 1.22 (whose to_unicode raises).
//
// Implementation: a hand-written scanner over the string instead of net/url.Parse, for two reasons.
// net/url parses differently from Python's urlsplit (it rejects or re-escapes what urllib passes
// through, and it has no notion of params), so it could not be byte-exact; and it allocates a URL struct
// and several strings per call, where the hot path here (ASCII URLs, the overwhelming majority) works in
// one reusable buffer. Non-ASCII hosts go through Python's IDNA 2003 codec, reproduced in idna.go from
// tables generated from the interpreter.

// CanonMode selects the w3lib version whose canonicalize_url Canonicalize reproduces.
type CanonMode uint8

const (
	// CanonW3lib25 is w3lib 2.5.0 (the default).
	CanonW3lib25 CanonMode = iota
	// CanonW3lib122 is w3lib 1.22.0, Frontera 0.8's era.
	CanonW3lib122
)

var canonModeNames = [...]string{CanonW3lib25: "w3lib-2.5", CanonW3lib122: "w3lib-1.22"}

// String returns the mode's configuration name.
func (m CanonMode) String() string {
	if int(m) < len(canonModeNames) {
		return canonModeNames[m]
	}
	return "CanonMode(" + strconv.Itoa(int(m)) + ")"
}

// ParseCanonMode maps a configuration name ("w3lib-2.5", "w3lib-1.22"; "" means the default) to a mode.
func ParseCanonMode(name string) (CanonMode, error) {
	if name == "" {
		return CanonW3lib25, nil
	}
	for i, n := range canonModeNames {
		if n == name {
			return CanonMode(i), nil
		}
	}
	return 0, fmt.Errorf("identity: unknown canonicalisation mode %q (known: %s)", name, strings.Join(canonModeNames[:], ", "))
}

// CanonOptions are canonicalize_url's parameters. The zero value is w3lib's defaults in the default mode:
// keep_blank_values=True, keep_fragments=False, w3lib 2.5.
type CanonOptions struct {
	Mode CanonMode
	// DropBlankValues is keep_blank_values=False: query arguments with an empty value are removed.
	DropBlankValues bool
	// KeepFragments is keep_fragments=True.
	KeepFragments bool
}

// ErrInvalidURL is wrapped by every error Canonicalize returns (where w3lib raises).
var ErrInvalidURL = errors.New("identity: invalid URL")

func invalidURL(raw, why string) error {
	return fmt.Errorf("%w %q: %s", ErrInvalidURL, raw, why)
}

// Canonicalize returns w3lib 2.5's canonicalize_url(rawURL) with its default arguments.
func Canonicalize(rawURL string) (string, error) {
	return CanonOptions{}.Canonicalize(rawURL)
}

// Canonicalize returns canonicalize_url(rawURL) under o.
func (o CanonOptions) Canonicalize(rawURL string) (string, error) {
	b, err := o.AppendCanonical(nil, rawURL)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// AppendCanonical appends the canonical form of rawURL to dst. It is the allocation-lean form for hot
// paths: with a dst of enough capacity, an ASCII URL costs no allocation beyond the query sort's.
func (o CanonOptions) AppendCanonical(dst []byte, rawURL string) ([]byte, error) {
	switch o.Mode {
	case CanonW3lib25:
		return o.canon25(dst, rawURL)
	case CanonW3lib122:
		return o.canon122(dst, rawURL)
	}
	return dst, fmt.Errorf("identity: unknown canonicalisation mode %d", o.Mode)
}

// ---- byte classes ----

type byteSet [256]bool

func makeSet(chars string, base ...*byteSet) *byteSet {
	var s byteSet
	for _, b := range base {
		for i, v := range b {
			if v {
				s[i] = true
			}
		}
	}
	for i := 0; i < len(chars); i++ {
		s[chars[i]] = true
	}
	return &s
}

func (s *byteSet) without(chars string) *byteSet {
	t := *s
	for i := 0; i < len(chars); i++ {
		t[chars[i]] = false
	}
	return &t
}

var (
	setUnreserved = makeSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
	// w3lib's _SAFE_CHARS (1.22's _safe_chars): RFC 3986 reserved + unreserved + "|" + "%".
	setSafe = makeSet(":/?#[]@!$&'()*+,;=|%", setUnreserved)
	// w3lib 2.x: _PATH_SAFE_CHARS, _PATH_SAFEST_CHARS (= query and fragment), the special-scheme query set.
	setPathSafe        = setSafe.without("#")
	setPathSafest      = setSafe.without("#[]|")
	setSpecialQuerySaf = setPathSafest.without("'")
	setUserinfoSafest  = makeSet("!$&'()*+,", setUnreserved)
	setSchemeChars     = makeSet("+-.", makeSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"))
)

const upperHex = "0123456789ABCDEF"

// appendQuote percent-encodes every byte of s outside safe (Python's quote / w3lib's _quote).
func appendQuote(dst []byte, s string, safe *byteSet) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if safe[c] {
			dst = append(dst, c)
		} else {
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
		}
	}
	return dst
}

// appendQuotePlus is quote_plus(s, safe=""): unreserved kept, space to "+", the rest %XX.
func appendQuotePlus(dst []byte, s []byte) []byte {
	for _, c := range s {
		switch {
		case setUnreserved[c]:
			dst = append(dst, c)
		case c == ' ':
			dst = append(dst, '+')
		default:
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
		}
	}
	return dst
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

// appendUnquote percent-decodes s into dst (invalid escapes stay literal); plus turns "+" into a space
// first, as unquote_plus does.
func appendUnquote(dst []byte, s string, plus bool) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			h, ok1 := unhex(s[i+1])
			l, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				dst = append(dst, h<<4|l)
				i += 2
				continue
			}
		}
		if plus && c == '+' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return dst
}

// ---- shared helpers ----

func isC0OrSpace(c byte) bool { return c <= ' ' }

func hasTabNewline(s string) bool {
	return strings.ContainsAny(s, "\t\n\r")
}

func removeTabNewline(s string) string {
	if !hasTabNewline(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '\t' && c != '\n' && c != '\r' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// splitScheme is the scheme rule both urlsplit and w3lib 2.x apply: an ASCII letter followed by scheme
// characters up to the first ":". The scheme comes back lower-cased.
func splitScheme(s string) (scheme, rest string) {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return "", s
	}
	c := s[0]
	if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
		return "", s
	}
	for j := 1; j < i; j++ {
		if !setSchemeChars[s[j]] {
			return "", s
		}
	}
	return asciiLower(s[:i]), s[i+1:]
}

var usesParams = map[string]bool{"": true, "ftp": true, "hdl": true, "prospero": true, "http": true, "imap": true,
	"https": true, "shttp": true, "rtsp": true, "rtsps": true, "rtspu": true, "sip": true, "sips": true, "mms": true,
	"sftp": true, "tel": true}

var usesNetloc = map[string]bool{"": true, "ftp": true, "http": true, "gopher": true, "nntp": true, "telnet": true,
	"imap": true, "wais": true, "file": true, "mms": true, "https": true, "shttp": true, "snews": true,
	"prospero": true, "rtsp": true, "rtsps": true, "rtspu": true, "rsync": true, "svn": true, "svn+ssh": true,
	"sftp": true, "nfs": true, "git": true, "git+ssh": true, "ws": true, "wss": true}

func isSpecialScheme(s string) bool {
	switch s {
	case "ftp", "file", "http", "https", "ws", "wss":
		return true
	}
	return false
}

func schemeUsesParams(s string) bool {
	switch s {
	case "http", "https", "":
		return true
	}
	return usesParams[s]
}

func schemeUsesNetloc(s string) bool {
	switch s {
	case "http", "https", "":
		return true
	}
	return usesNetloc[s]
}

// splitParams is urllib's _splitparams as w3lib 2.x's _split_params applies it: a ";" in the last path
// segment starts the params.
func splitParams(scheme, path string) (string, string) {
	if !schemeUsesParams(scheme) {
		return path, ""
	}
	i := strings.IndexByte(path[strings.LastIndexByte(path, '/')+1:], ';')
	if i < 0 {
		return path, ""
	}
	i += strings.LastIndexByte(path, '/') + 1
	return path[:i], path[i+1:]
}

// checkNetlocNFKC is urllib's _checknetloc (delims adds w3lib 2.x's "\\"); its verdict is memoised.
func checkNetlocNFKC(netloc, delims string) error {
	if netloc == "" || isASCII(netloc) {
		return nil
	}
	kind := memoCheck122
	if strings.IndexByte(delims, '\\') >= 0 {
		kind = memoCheck25
	}
	_, err := memoized(kind, netloc, func(netloc string) (string, error) {
		var b strings.Builder
		for i := 0; i < len(netloc); i++ {
			switch netloc[i] {
			case '@', ':', '#', '?':
			default:
				b.WriteByte(netloc[i])
			}
		}
		n := b.String()
		n2 := nfkc14(n)
		if n == n2 {
			return "", nil
		}
		if strings.ContainsAny(n2, delims) {
			return "", fmt.Errorf("netloc %q contains invalid characters under NFKC normalization", netloc)
		}
		return "", nil
	})
	return err
}

type kv struct{ k, v []byte }

// appendSortedQuery parses pairs (already split) into decoded byte pairs, sorts them and appends the
// urlencode()d result. scratch is reused between calls.
func appendEncodedPairs(dst []byte, pairs []kv) []byte {
	if len(pairs) > 1 {
		slices.SortFunc(pairs, func(a, b kv) int {
			if c := bytes.Compare(a.k, b.k); c != 0 {
				return c
			}
			return bytes.Compare(a.v, b.v)
		})
	}
	for i, p := range pairs {
		if i > 0 {
			dst = append(dst, '&')
		}
		dst = appendQuotePlus(dst, p.k)
		dst = append(dst, '=')
		dst = appendQuotePlus(dst, p.v)
	}
	return dst
}

// percentEncodeInvalidUTF8 is to_unicode(bytes, "utf8", errors="percentencode").
func percentEncodeInvalidUTF8(s string) string {
	var b []byte
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, '%', upperHex[s[i]>>4], upperHex[s[i]&15])
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}
