package embedded

import (
	"net/url"

	"github.com/frontiercrawl/frontier"
)

// identity is the identity layer (canonical URL, fingerprint, Frontera's domain info) as the roles need it.
type identity struct{ fp *frontier.Fingerprinter }

// NewIdentity returns the identity of the configuration's identity section: canon is "w3lib" or "w3lib-1.22",
// fingerprint a fingerprint function name (sha1, md5, hostname_local, …).
func NewIdentity(canon, fingerprint string) (Identity, error) {
	if canon == "w3lib" {
		canon = "" // the default mode: w3lib 2.x
	}
	mode, err := frontier.ParseCanonMode(canon)
	if err != nil {
		return nil, err
	}
	fp, err := frontier.ParseFingerprinter(fingerprint, frontier.CanonOptions{Mode: mode}, frontier.ScrapyOptions{})
	if err != nil {
		return nil, err
	}
	return identity{fp: fp}, nil
}

func (i identity) Fingerprint(rawURL string) (frontier.Fingerprint, error) { return i.fp.URL(rawURL) }

func (i identity) Domain(u *url.URL) frontier.MetaDomain {
	d, err := frontier.DomainInfo(u.String())
	if err != nil {
		d = frontier.MetaDomain{Netloc: u.Host, Name: u.Hostname(), Scheme: u.Scheme}
	}
	d.Fingerprint = frontier.DomainFingerprint(d.Name).Hex()
	return d
}
