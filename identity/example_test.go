package identity_test

import (
	"fmt"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/identity"
)

// The identity pipeline for a link: resolve it as a browser does, canonicalise it as w3lib does, take
// the configured fingerprint, and fill Frontera's domain meta.
func Example_identity() {
	link, err := identity.ResolveReference("http://Example.com:80/news/index.html", "../a%7eb/./c?z=1&a=%41#top")
	if err != nil {
		panic(err)
	}
	fmt.Println(link)

	canon, _ := identity.Canonicalize(link) // w3lib 2.5 rules
	fmt.Println(canon)
	old, _ := identity.CanonOptions{Mode: identity.CanonW3lib122}.Canonicalize("http://Example.com:80/a/./b?x=1;y=2")
	fmt.Println(old) // Frontera-era rules: default port and dot segments kept, ";" splits the query

	fp, _ := identity.ParseFingerprinter("sha1", identity.CanonOptions{}, identity.ScrapyOptions{})
	sum, _ := fp.URL(link)
	fmt.Println(sum.Hex())

	r := &frontier.Request{URL: link}
	d, _ := identity.DomainInfo(r.URL)
	d.Fingerprint = identity.DomainFingerprint(d.Name).Hex()
	r.SetMetaDomain(d)
	r.SetMetaFingerprint(sum)
	fmt.Println(d.Name, d.Fingerprint)

	r.SetDontFilter(true) // exempt from the URL-seen test, as Scrapy's dont_filter=True
	fmt.Println(r.DontFilter())
	// Output:
	// http://example.com/a%7eb/c?z=1&a=%41#top
	// http://example.com/a~b/c?a=A&z=1
	// http://example.com:80/a/./b?x=1&y=2
	// 182f01b06daef9836a65d3cac990e77825c7798a
	// example.com 0caaf24ab1a0c33440c06afe99df986365b0781f
	// true
}
