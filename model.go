package frontier

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
)

// State is the crawl state of one URL, as Frontera numbers it (frontera/core/components.py).
type State uint8

// The states of a URL. The zero value is NotCrawled: a URL the frontier has never seen.
const (
	NotCrawled State = 0
	Queued     State = 1
	Crawled    State = 2
	Error      State = 3
)

// String returns Frontera's name of the state.
func (s State) String() string {
	switch s {
	case NotCrawled:
		return "NOT_CRAWLED"
	case Queued:
		return "QUEUED"
	case Crawled:
		return "CRAWLED"
	case Error:
		return "ERROR"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Valid reports whether s is one of the four defined states.
func (s State) Valid() bool { return s <= Error }

// Fingerprint is the identity of a request: raw digest bytes (20 for sha1, 16 for md5, 20 for hostname_local).
// Hex appears only on the wire, where Frontera puts hex (see Hex and ParseFingerprintHex).
type Fingerprint []byte

// Hex returns the lower-case hex form Frontera sends in meta[b'fingerprint'].
func (f Fingerprint) Hex() string { return hex.EncodeToString(f) }

// String implements fmt.Stringer with the hex form.
func (f Fingerprint) String() string { return f.Hex() }

// Equal reports whether f and g are the same bytes.
func (f Fingerprint) Equal(g Fingerprint) bool { return bytes.Equal(f, g) }

// ParseFingerprintHex decodes a hex fingerprint as it travels on the wire.
func ParseFingerprintHex(s []byte) (Fingerprint, error) {
	fp := make(Fingerprint, hex.DecodedLen(len(s)))
	if _, err := hex.Decode(fp, s); err != nil {
		return nil, fmt.Errorf("frontier: fingerprint %q is not hex: %w", s, err)
	}
	return fp, nil
}

// Header is one HTTP header with all its values, as bytes (Scrapy's Headers: title-cased name → list of values).
type Header struct {
	Name   []byte
	Values [][]byte
}

// Headers is an ordered list of headers; order is kept because the wire encoding must be byte-exact.
type Headers []Header

// Get returns the first value of the header named name (ASCII case-insensitive), or nil.
func (h Headers) Get(name string) []byte {
	for _, x := range h {
		if len(x.Values) > 0 && bytes.EqualFold(x.Name, []byte(name)) {
			return x.Values[0]
		}
	}
	return nil
}

// Cookie is one request cookie (str → str on the wire).
type Cookie struct {
	Name, Value string
}

// Request is a URL to fetch, with what Frontera carries beside it.
//
// Meta is the wire meta map, kept in order with its bin/str keys so that a request decoded from Frontera
// re-encodes to the same bytes. Frontier's own fields (fingerprint, domain, score, depth, job id, state) live in
// Meta under Frontera's keys; use the typed accessors (MetaFingerprint, SetMetaFingerprint, …) rather than
// reaching into the Map. Body is carried in the meta key MetaKeyBody, which Frontera ignores.
type Request struct {
	URL     string
	Method  string // upper case; "" means GET
	Headers Headers
	Cookies []Cookie
	Meta    Map
	Body    []byte
}

// Response is the outcome of fetching a request.
type Response struct {
	URL     string // the final URL, after redirects
	Status  int
	Headers Headers
	Body    []byte // nil unless content is stored
	Request *Request
}

// Link is one outgoing link found on a page, before it becomes a Request.
type Link struct {
	URL      string // absolute, resolved with the WHATWG rules
	Text     string // anchor text, trimmed (may be empty)
	Rel      string // the rel attribute, as written
	NoFollow bool   // rel contains nofollow
	Tag      string // the element it came from: a, area, link, frame, iframe
}

// Hostname returns the host a request belongs to, lower-cased and without port: meta domain name when the
// spider set it (what Frontera partitions by), else the URL's host. "" when neither is known.
func (r *Request) Hostname() string {
	if name := r.metaDomainName(); name != "" {
		return name
	}
	u, err := url.Parse(r.URL)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
