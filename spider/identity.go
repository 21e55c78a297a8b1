package spider

import (
	"crypto/sha1"
	"encoding/hex"
	"net/url"

	frontier "github.com/frontiercrawl/frontier"
)

// Identity is the part of the identity layer (package identity) the spider needs: the fingerprint of a URL and the
// domain meta of its host, with the domain's fingerprint, which keys the spider log. Implementations must be
// safe for concurrent use.
type Identity interface {
	// Fingerprint returns the fingerprint of the canonical form of rawURL (an absolute URL already resolved
	// with the WHATWG rules).
	Fingerprint(rawURL string) (frontier.Fingerprint, error)
	// Domain returns Frontera's meta[b'domain'] for u, Fingerprint included. It must depend only on u's
	// scheme, user info and host: the spider keeps it per scheme and host for the links of its pages.
	Domain(u *url.URL) frontier.MetaDomain
}

// SimpleIdentity is the fallback Identity used when Deps.Identity is nil: SHA-1 of the URL as given (already
// WHATWG-normalised by the spider, but not w3lib-canonicalised: no query sorting or percent-encoding
// normalisation) and Frontera's fast domain parse (name = host name, no public-suffix split), whose
// fingerprint is the hex SHA-1 of the name, as Frontera's DomainFingerprintMiddleware computes it. Production
// deployments plug in package identity instead.
type SimpleIdentity struct{}

// Fingerprint implements Identity.
func (SimpleIdentity) Fingerprint(rawURL string) (frontier.Fingerprint, error) {
	s := sha1.Sum([]byte(rawURL))
	return frontier.Fingerprint(s[:]), nil
}

// Domain implements Identity.
func (SimpleIdentity) Domain(u *url.URL) frontier.MetaDomain {
	name := u.Hostname()
	s := sha1.Sum([]byte(name))
	return frontier.MetaDomain{Netloc: u.Host, Name: name, Scheme: u.Scheme, Fingerprint: hex.EncodeToString(s[:])}
}

// fingerprintAppender is an Identity that fingerprints into the caller's buffer (identity.Identifier): the
// spider fingerprints a page's links with it, without an allocation per link.
type fingerprintAppender interface {
	AppendFingerprint(dst []byte, rawURL string, scratch *[]byte) (frontier.Fingerprint, error)
}
