package identity

import (
	"net/url"
	"strings"
	"sync"

	frontier "github.com/frontiercrawl/frontier"
)

// DomainMeta is a host's domain meta as the requests built for it carry it: Value is the meta[b'domain']
// value frontier.Request.SetMetaDomain stores on a request without one, and Fingerprint the domain
// fingerprint, the spider-log key, both as a string and as bytes (Key). Value and Key are shared by every
// request and message given them and must never be written into (SetMetaDomain copies a domain map before
// changing it, as the codec's shared decoded values require anyway).
type DomainMeta struct {
	Value       frontier.Value
	Fingerprint string
	Key         []byte
}

// NewDomainMeta is the DomainMeta of d.
func NewDomainMeta(d frontier.MetaDomain) DomainMeta {
	var r frontier.Request
	r.SetMetaDomain(d)
	v, _ := r.Meta.Get(frontier.MetaKeyDomain)
	return DomainMeta{Value: v, Fingerprint: d.Fingerprint, Key: []byte(d.Fingerprint)}
}

// DefaultDomainCacheMax is the number of hosts a DomainCache holds when NewDomainCache is given max <= 0.
const DefaultDomainCacheMax = 1 << 14

// DomainCache keeps the DomainMeta of hosts by scheme and host (with the port), so that the requests for
// the URLs of one host share one domain map and the domain is computed once per host: what a spider does
// for the links of its pages and the URLFrontier gateway for the URLs its clients put. The domain function
// (an Identity's Domain, such as Identifier.Domain) must depend only on a URL's scheme, user info and host.
// A URL with user info or an opaque part gets a DomainMeta of its own, not cached (the netloc Frontera sees
// includes the user info). Past max hosts the cache starts again empty. Safe for concurrent use.
type DomainCache struct {
	domain func(*url.URL) frontier.MetaDomain
	max    int

	mu sync.Mutex
	m  map[hostKey]DomainMeta
}

// hostKey is what a URL's domain meta depends on (besides user info, which is never cached).
type hostKey struct{ scheme, host string }

// NewDomainCache returns an empty cache of at most max hosts (DefaultDomainCacheMax when max <= 0) whose
// misses domain computes.
func NewDomainCache(domain func(*url.URL) frontier.MetaDomain, max int) *DomainCache {
	if max <= 0 {
		max = DefaultDomainCacheMax
	}
	return &DomainCache{domain: domain, max: max, m: make(map[hostKey]DomainMeta)}
}

// Get returns u's DomainMeta: the cached one of u's scheme and host, or computed (and cached).
func (c *DomainCache) Get(u *url.URL) DomainMeta {
	if u.User != nil || u.Opaque != "" {
		return NewDomainMeta(c.domain(u))
	}
	k := hostKey{u.Scheme, u.Host}
	if dm, ok := c.lookup(k); ok {
		return dm
	}
	dm := NewDomainMeta(c.domain(u))
	c.mu.Lock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = dm
	c.mu.Unlock()
	return dm
}

// GetURL is Get of url.Parse(rawURL), false when rawURL does not parse. When rawURL is a plain http(s) URL
// (see splitPlain) of a host in the cache, it is not parsed: the answer is the same as Get's.
func (c *DomainCache) GetURL(rawURL string) (DomainMeta, bool) {
	if k, ok := splitPlain(rawURL); ok {
		if dm, ok := c.lookup(k); ok {
			return dm, true
		}
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return DomainMeta{}, false
	}
	return c.Get(u), true
}

func (c *DomainCache) lookup(k hostKey) (DomainMeta, bool) {
	c.mu.Lock()
	dm, ok := c.m[k]
	c.mu.Unlock()
	return dm, ok
}

// splitPlain returns the scheme and host of s when url.Parse(s) succeeds and gives them as they are written
// in s, without user info: s is "http://" or "https://", a host of lower-case ASCII letters, digits, '-' and
// '.', with an optional port of digits, then nothing or a path, query or fragment without control
// characters, spaces or malformed percent escapes. Otherwise (IPv6 literals, upper case, user info, escapes
// in the host and so on) it returns false and the caller parses s.
func splitPlain(s string) (hostKey, bool) {
	var scheme, rest string
	switch {
	case strings.HasPrefix(s, "http://"):
		scheme, rest = "http", s[len("http://"):]
	case strings.HasPrefix(s, "https://"):
		scheme, rest = "https", s[len("https://"):]
	default:
		return hostKey{}, false
	}
	end := len(rest)
	colon := -1
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if c == '/' || c == '?' || c == '#' {
			end = i
			break
		}
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.':
			if colon >= 0 && (c < '0' || c > '9') {
				return hostKey{}, false // the port is digits only
			}
		case c == ':' && colon < 0:
			colon = i
		default:
			return hostKey{}, false
		}
	}
	if end == 0 || colon == 0 {
		return hostKey{}, false
	}
	tail := rest[end:]
	for i := 0; i < len(tail); i++ {
		switch c := tail[i]; {
		case c <= ' ' || c == 0x7f:
			return hostKey{}, false
		case c == '%':
			if i+2 >= len(tail) || !isHexDigit(tail[i+1]) || !isHexDigit(tail[i+2]) {
				return hostKey{}, false
			}
		}
	}
	return hostKey{scheme, rest[:end]}, true
}
