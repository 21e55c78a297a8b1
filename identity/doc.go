// Package identity is the identity layer of a URL: how a link found on a page becomes the key the
// URL-seen test looks up. It resolves a link against its page the way a browser does (the WHATWG URL
// Standard: ResolveReference, NormalizeURL), puts it in w3lib's canonical form (Canonicalize, CanonOptions)
// and hashes it with a fingerprint chosen by name (ParseFingerprinter: Frontera's sha1, md5 and
// hostname_local, Scrapy's request fingerprints), and fills Frontera's domain meta (DomainInfo,
// DomainFingerprint). Identifier bundles a configured fingerprint with the domain meta, as spiders and
// strategy workers use it.
//
// Agreement with the upstream projects is the point of the package, and is tested, not assumed:
//
//	canonical form     w3lib 2.5.0 (default) and w3lib 1.22.0 (Frontera 0.8's era), byte for byte
//	fingerprints       Frontera 0.8.1's sha1, md5, hostname_local and domain fingerprint; Scrapy 2.19's
//	                   fingerprint() and Scrapy 2.6's request_fingerprint()
//	link resolution    the WHATWG URL Standard for http and https references
//
// The vectors in testdata/ come from the real Python packages (oracle/gen_canon.py,
// oracle/gen_fingerprints.py); IDNA follows Python's own 2003 codec with tables generated from the
// interpreter (idna_tables.go), because golang.org/x/net/idna implements a later standard and differs.
//
// The types the layer hashes and fills (frontier.Request, frontier.Fingerprint, frontier.MetaDomain) are the
// model in the root package; this package sits one level above it and imports only the standard library,
// the model, and golang.org/x/{net,text}.
//
// Everything here is a pure function or an immutable value, safe for concurrent use.
package identity
