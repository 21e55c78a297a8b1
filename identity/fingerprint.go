package identity

import (
	"crypto/md5"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	frontier "github.com/frontiercrawl/frontier"
	"hash/crc32"
	"net/url"
	"slices"
	"strings"
	"unsafe"
)

// Fingerprints
//
// A fingerprint is chosen by name in the configuration (ParseFingerprinter, FingerprinterNames):
//
//	sha1            Frontera's default: SHA-1 of the canonical URL (20 bytes)
//	md5             MD5 of the canonical URL (16 bytes)
//	hostname_local  Frontera 0.8's hostname_local_fingerprint of the canonical URL: the signed crc32 of
//	                the host (4 bytes, big-endian) then MD5 of host+path+";"+params+query+fragment
//	                (16 bytes), so one host's rows sit together in HBase
//	scrapy          Scrapy ≥ 2.7's request fingerprint (the only one from 2.12): SHA-1 of a JSON
//	                document of method, canonical URL, hex body and hex headers
//	scrapy_2.6      Scrapy ≤ 2.6's request_fingerprint: SHA-1 of method ‖ canonical URL ‖ body
//	                [‖ header name ‖ values …]
//
// Fingerprints are raw digests (Fingerprint); Frontera puts lower-case hex on the wire (SetMetaFingerprint).
// The URL fingerprints see only the URL; use a scrapy variant for requests that are not plain GETs.
// The domain fingerprint (DomainFingerprint) is SHA-1 of the host name, Frontera's
// DomainFingerprintMiddleware, and is the spider-log key.
//
// dont_filter (a request's opt-out of the URL-seen test) is part of the model: frontier.Request.DontFilter.

// KeyFingerprintFunc is one of Frontera's URL_FINGERPRINT_FUNCTIONs: it hashes a key (the canonical URL)
// and appends the digest to dst. Only hostname_local can fail (when urlparse raises on the key).
type KeyFingerprintFunc func(dst []byte, key string) ([]byte, error)

// SHA1Key is frontera.utils.fingerprint.sha1 (as raw bytes).
func SHA1Key(dst []byte, key string) ([]byte, error) {
	h := sha1.Sum([]byte(key))
	return append(dst, h[:]...), nil
}

// MD5Key is frontera.utils.fingerprint.md5 (as raw bytes).
func MD5Key(dst []byte, key string) ([]byte, error) {
	h := md5.Sum([]byte(key))
	return append(dst, h[:]...), nil
}

// HostnameLocalKey is frontera.utils.fingerprint.hostname_local_fingerprint (0.8) as raw bytes: the signed
// crc32 of the urlparse hostname ("-" when there is none), big-endian, then the MD5 of
// hostname+path+";"+params+query+fragment. The key is parsed as CPython 3.11's urllib.parse.urlparse does.
func HostnameLocalKey(dst []byte, key string) ([]byte, error) {
	p, err := pyURLParse(key)
	if err != nil {
		return dst, fmt.Errorf("identity: hostname_local fingerprint of %q: %w", key, err)
	}
	host := p.hostname()
	if host == "" {
		host = "-"
	}
	var b4 [4]byte
	binary.BigEndian.PutUint32(b4[:], crc32.ChecksumIEEE([]byte(host)))
	dst = append(dst, b4[:]...)
	m := md5.New()
	m.Write([]byte(host))
	m.Write([]byte(p.path))
	m.Write([]byte{';'})
	m.Write([]byte(p.params))
	m.Write([]byte(p.query))
	m.Write([]byte(p.fragment))
	return m.Sum(dst), nil
}

// DomainFingerprint is Frontera's DomainFingerprintMiddleware with the default sha1:
// meta[b'domain'][b'fingerprint'] = sha1(name). It is the key of the spider log.
func DomainFingerprint(name string) frontier.Fingerprint {
	h := sha1.Sum([]byte(name))
	return frontier.Fingerprint(h[:])
}

// DomainInfo is Frontera's DomainMiddleware with the default parse_domain_from_url_fast: netloc, name
// (the lower-cased host, port and userinfo removed, "www." kept) and scheme of urlparse(url); sld, tld and
// subdomain empty. Frontera raises when the URL has no host (to_bytes(None)); so does DomainInfo. The
// Fingerprint field is left empty: set it with DomainFingerprint(d.Name) where the
// DomainFingerprintMiddleware would run (clusters).
func DomainInfo(rawURL string) (frontier.MetaDomain, error) {
	p, err := pyURLParse(rawURL)
	if err != nil {
		return frontier.MetaDomain{}, fmt.Errorf("identity: domain of %q: %w", rawURL, err)
	}
	h := p.hostname()
	if h == "" {
		return frontier.MetaDomain{}, fmt.Errorf("identity: no host in %q", rawURL)
	}
	return frontier.MetaDomain{Netloc: p.netloc, Name: h, Scheme: p.scheme}, nil
}

// pyParts is urllib.parse.urlparse's result for what the fingerprints read.
type pyParts struct {
	scheme, netloc, path, params, query, fragment string
}

// pyURLParse is CPython 3.11.7's urllib.parse.urlparse, ValueErrors included.
func pyURLParse(s string) (pyParts, error) {
	s = strings.TrimLeftFunc(s, func(r rune) bool { return r <= ' ' })
	s = removeTabNewline(s)
	var p pyParts
	p.scheme, s = splitScheme(s)
	if len(s) >= 2 && s[0] == '/' && s[1] == '/' {
		delim := len(s)
		if i := strings.IndexAny(s[2:], "/?#"); i >= 0 {
			delim = i + 2
		}
		p.netloc, s = s[2:delim], s[delim:]
		open, close := strings.IndexByte(p.netloc, '[') >= 0, strings.IndexByte(p.netloc, ']') >= 0
		if open != close {
			return p, errInvalidIPv6
		}
		if open {
			_, after, _ := strings.Cut(p.netloc, "[")
			h, _, _ := strings.Cut(after, "]")
			if !pyCheckBracketedHost(h, false) {
				return p, errBracketedHost(h)
			}
		}
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s, p.fragment = s[:i], s[i+1:]
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s, p.query = s[:i], s[i+1:]
	}
	if err := checkNetlocNFKC(p.netloc, "/?#@:"); err != nil {
		return p, err
	}
	p.path = s
	if strings.IndexByte(s, ';') >= 0 {
		p.path, p.params = splitParams(p.scheme, s)
	}
	return p, nil
}

// hostname is SplitResult.hostname ("" for None): lower-cased except an IPv6 zone.
func (p pyParts) hostname() string {
	hostinfo := p.netloc
	if at := strings.LastIndexByte(hostinfo, '@'); at >= 0 {
		hostinfo = hostinfo[at+1:]
	}
	var h string
	if _, br, ok := strings.Cut(hostinfo, "["); ok {
		h, _, _ = strings.Cut(br, "]")
	} else {
		h, _, _ = strings.Cut(hostinfo, ":")
	}
	if h == "" {
		return ""
	}
	h, zone, pct := strings.Cut(h, "%")
	h = pyLower(h)
	if pct {
		return h + "%" + zone
	}
	return h
}

// ScrapyOptions are the arguments of Scrapy's fingerprint functions.
type ScrapyOptions struct {
	IncludeHeaders []string // include_headers
	KeepFragments  bool     // keep_fragments
	// VerbatimURL is Scrapy 2.18's meta['verbatim_url']: the URL is hashed as given, not canonicalised
	// (current fingerprint only).
	VerbatimURL bool
}

func (o ScrapyOptions) headerNames() []string {
	if len(o.IncludeHeaders) == 0 {
		return nil
	}
	names := slices.Clone(o.IncludeHeaders)
	slices.Sort(names) // Scrapy sorts before lower-casing
	for i, n := range names {
		names[i] = pyLower(n)
	}
	return names
}

// headerValues returns the values of the header Scrapy finds for an include_headers entry (name, already
// lower-cased): Scrapy looks it up as to_bytes(name).title(), and bytes.title() changes the case of ASCII
// letters only, so the lookup must equal the stored name byte for byte. Scrapy stores a name given as str
// as to_bytes(name.title()), Unicode title case: a non-ASCII cased letter in it never matches, and such a
// header is not hashed. Header names here are Scrapy's stored names; an ASCII name is title-cased first,
// which changes nothing for a stored one and lets names in any ASCII case match, as they do in Scrapy.
func headerValues(h frontier.Headers, name string) ([][]byte, bool) {
	want := pyBytesTitle([]byte(name))
	var vals [][]byte
	found := false
	for _, x := range h {
		stored := x.Name
		if isASCIIBytes(stored) {
			stored = pyBytesTitle(stored)
		}
		if string(stored) == string(want) {
			found = true
			vals = append(vals, x.Values...)
		}
	}
	return vals, found
}

// pyBytesTitle is Python's bytes.title(): an ASCII letter after a cased ASCII letter is lower-cased, any
// other ASCII letter upper-cased; every other byte (non-ASCII included) is kept and ends a word.
func pyBytesTitle(b []byte) []byte {
	out := make([]byte, len(b))
	prevCased := false
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z':
			if !prevCased {
				c -= 'a' - 'A'
			}
			prevCased = true
		case 'A' <= c && c <= 'Z':
			if prevCased {
				c += 'a' - 'A'
			}
			prevCased = true
		default:
			prevCased = false
		}
		out[i] = c
	}
	return out
}

func method(r *frontier.Request) string {
	if r.Method == "" {
		return "GET"
	}
	return r.Method
}

// ScrapyFingerprint26 is Scrapy ≤ 2.6's request_fingerprint(request, include_headers, keep_fragments) as
// raw bytes (Scrapy returned the hex digest). r.URL is taken as Scrapy's request.url, which Scrapy has
// already passed through safe_url_string.
func ScrapyFingerprint26(r *frontier.Request, canon CanonOptions, o ScrapyOptions) (frontier.Fingerprint, error) {
	canon.KeepFragments = o.KeepFragments
	u, err := canon.Canonicalize(r.URL)
	if err != nil {
		return nil, err
	}
	h := sha1.New()
	h.Write([]byte(method(r)))
	h.Write([]byte(u))
	h.Write(r.Body)
	for _, name := range o.headerNames() {
		if vals, ok := headerValues(r.Headers, name); ok {
			h.Write([]byte(name))
			for _, v := range vals {
				h.Write(v)
			}
		}
	}
	return frontier.Fingerprint(h.Sum(nil)), nil
}

// ScrapyFingerprint is Scrapy ≥ 2.7's scrapy.utils.request.fingerprint(request, include_headers,
// keep_fragments): SHA-1 of json.dumps({"body": hex, "headers": {hex name: [hex value, …]}, "method": …,
// "url": canonical URL}, sort_keys=True). r.URL is taken as Scrapy's request.url (already
// safe_url_string'ed by Scrapy).
func ScrapyFingerprint(r *frontier.Request, canon CanonOptions, o ScrapyOptions) (frontier.Fingerprint, error) {
	u := r.URL
	if !o.VerbatimURL {
		canon.KeepFragments = o.KeepFragments
		var err error
		if u, err = canon.Canonicalize(r.URL); err != nil {
			return nil, err
		}
	}
	type hdr struct {
		name string
		vals [][]byte
	}
	var hs []hdr
	for _, name := range o.headerNames() {
		vals, ok := headerValues(r.Headers, name)
		if !ok {
			continue
		}
		key := hex.EncodeToString([]byte(name))
		if i := slices.IndexFunc(hs, func(h hdr) bool { return h.name == key }); i >= 0 {
			hs[i].vals = vals // a dict: the last assignment wins, the values are the same anyway
			continue
		}
		hs = append(hs, hdr{key, vals})
	}
	slices.SortFunc(hs, func(a, b hdr) int { return strings.Compare(a.name, b.name) })
	b := make([]byte, 0, 64+len(u)+2*len(r.Body))
	b = append(b, `{"body": "`...)
	b = hex.AppendEncode(b, r.Body)
	b = append(b, `", "headers": {`...)
	for i, h := range hs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, '"')
		b = append(b, h.name...)
		b = append(b, `": [`...)
		for j, v := range h.vals {
			if j > 0 {
				b = append(b, ", "...)
			}
			b = append(b, '"')
			b = hex.AppendEncode(b, v)
			b = append(b, '"')
		}
		b = append(b, ']')
	}
	b = append(b, `}, "method": `...)
	b = appendPyJSONString(b, method(r))
	b = append(b, `, "url": `...)
	b = appendPyJSONString(b, u)
	b = append(b, '}')
	sum := sha1.Sum(b)
	return frontier.Fingerprint(sum[:]), nil
}

// appendPyJSONString is json.dumps(s) with ensure_ascii=True: \" \\ \n \r \t \b \f, other controls and
// every non-ASCII character as \uXXXX (UTF-16 surrogate pairs above the BMP).
func appendPyJSONString(b []byte, s string) []byte {
	const hx = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, '\\', '"')
		case r == '\\':
			b = append(b, '\\', '\\')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\b':
			b = append(b, '\\', 'b')
		case r == '\f':
			b = append(b, '\\', 'f')
		case r < 0x20 || (r >= 0x7F && r < 0x10000):
			b = append(b, '\\', 'u', hx[r>>12&15], hx[r>>8&15], hx[r>>4&15], hx[r&15])
		case r >= 0x10000:
			r -= 0x10000
			hi, lo := 0xD800+(r>>10), 0xDC00+(r&0x3FF)
			b = append(b, '\\', 'u', hx[hi>>12&15], hx[hi>>8&15], hx[hi>>4&15], hx[hi&15])
			b = append(b, '\\', 'u', hx[lo>>12&15], hx[lo>>8&15], hx[lo>>4&15], hx[lo&15])
		default:
			b = append(b, byte(r))
		}
	}
	return append(b, '"')
}

// Fingerprinter computes request fingerprints by a configured name. It is immutable and safe for
// concurrent use.
type Fingerprinter struct {
	name   string
	canon  CanonOptions
	key    KeyFingerprintFunc // URL fingerprints
	scrapy func(*frontier.Request, CanonOptions, ScrapyOptions) (frontier.Fingerprint, error)
	sopts  ScrapyOptions
}

var fingerprinters = []struct {
	name   string
	key    KeyFingerprintFunc
	scrapy func(*frontier.Request, CanonOptions, ScrapyOptions) (frontier.Fingerprint, error)
}{
	{"sha1", SHA1Key, nil},
	{"md5", MD5Key, nil},
	{"hostname_local", HostnameLocalKey, nil},
	{"scrapy", nil, ScrapyFingerprint},
	{"scrapy_2.6", nil, ScrapyFingerprint26},
}

// FingerprinterNames lists the names ParseFingerprinter knows.
func FingerprinterNames() []string {
	out := make([]string, len(fingerprinters))
	for i, f := range fingerprinters {
		out[i] = f.name
	}
	return out
}

// ParseFingerprinter returns the fingerprint called name ("" means "sha1"), canonicalising URLs with
// canon; sopts apply to the scrapy variants only. An unknown name is an error that lists the known ones.
func ParseFingerprinter(name string, canon CanonOptions, sopts ScrapyOptions) (*Fingerprinter, error) {
	if name == "" {
		name = "sha1"
	}
	for _, f := range fingerprinters {
		if f.name == name {
			return &Fingerprinter{name: name, canon: canon, key: f.key, scrapy: f.scrapy, sopts: sopts}, nil
		}
	}
	return nil, fmt.Errorf("identity: unknown fingerprint %q (known: %s)", name, strings.Join(FingerprinterNames(), ", "))
}

// Name returns the configured name.
func (f *Fingerprinter) Name() string { return f.name }

// Request returns r's fingerprint. URL fingerprints ignore method, body and headers.
func (f *Fingerprinter) Request(r *frontier.Request) (frontier.Fingerprint, error) {
	if f.scrapy != nil {
		return f.scrapy(r, f.canon, f.sopts)
	}
	return f.URL(r.URL)
}

// URL returns the fingerprint of a GET of rawURL.
func (f *Fingerprinter) URL(rawURL string) (frontier.Fingerprint, error) {
	if f.scrapy != nil {
		return f.scrapy(&frontier.Request{URL: rawURL, Method: "GET"}, f.canon, f.sopts)
	}
	return f.AppendURL(nil, rawURL, nil)
}

// AppendURL appends the URL fingerprint of rawURL to dst, using scratch (may be nil) for the canonical
// form: the allocation-free form of URL for hot paths. It must not be used with the scrapy variants.
func (f *Fingerprinter) AppendURL(dst []byte, rawURL string, scratch []byte) (frontier.Fingerprint, error) {
	fp, _, err := f.appendURL(dst, rawURL, scratch)
	return fp, err
}

// appendURL is AppendURL that also returns scratch as grown for the canonical form, to reuse.
func (f *Fingerprinter) appendURL(dst []byte, rawURL string, scratch []byte) (frontier.Fingerprint, []byte, error) {
	if f.key == nil {
		fp, err := f.URL(rawURL)
		return append(dst, fp...), scratch, err
	}
	c, err := f.canon.AppendCanonical(scratch[:0], rawURL)
	if err != nil {
		return dst, scratch, err
	}
	switch f.name {
	case "sha1":
		h := sha1.Sum(c)
		return append(dst, h[:]...), c, nil
	case "md5":
		h := md5.Sum(c)
		return append(dst, h[:]...), c, nil
	}
	fp, err := f.key(dst, unsafeString(c))
	return fp, c, err
}

// unsafeString views b as a string without copying; the key functions only read it, and b is not
// modified while the view is in use.
func unsafeString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Identifier is the identity layer as a spider or strategy worker uses it: a configured Fingerprinter plus
// Frontera's domain meta. It satisfies spider.Identity. It is safe for concurrent use.
type Identifier struct {
	F *Fingerprinter
}

// New returns the Identifier for a fingerprint name and canonicalisation options.
func New(fingerprint string, canon CanonOptions) (Identifier, error) {
	f, err := ParseFingerprinter(fingerprint, canon, ScrapyOptions{})
	if err != nil {
		return Identifier{}, err
	}
	return Identifier{F: f}, nil
}

// Fingerprint returns the fingerprint of rawURL (canonicalised first).
func (i Identifier) Fingerprint(rawURL string) (frontier.Fingerprint, error) { return i.F.URL(rawURL) }

// AppendFingerprint appends Fingerprint(rawURL) to dst, canonicalising in *scratch (grown and kept there for
// the next call): a page's links are fingerprinted into one buffer without an allocation each.
func (i Identifier) AppendFingerprint(dst []byte, rawURL string, scratch *[]byte) (frontier.Fingerprint, error) {
	fp, c, err := i.F.appendURL(dst, rawURL, *scratch)
	*scratch = c[:0]
	return fp, err
}

// Domain returns Frontera's meta[b'domain'] for u, with the domain fingerprint filled in (what
// DomainMiddleware then DomainFingerprintMiddleware produce). A URL without a host, where Frontera raises,
// gets the net/url view of it.
func (i Identifier) Domain(u *url.URL) frontier.MetaDomain {
	d, err := DomainInfo(u.String())
	if err != nil {
		d = frontier.MetaDomain{Netloc: u.Host, Name: u.Hostname(), Scheme: u.Scheme}
	}
	d.Fingerprint = DomainFingerprint(d.Name).Hex()
	return d
}
