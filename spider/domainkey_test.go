package spider

import (
	"net/url"
	"testing"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/identity"
	"github.com/frontiercrawl/frontier/internal/cputime"
)

// BenchmarkDomainKey is the spider-log key of a reported page whose feed request carries its domain map.
//
//	go test -run XXX -bench BenchmarkDomainKey ./spider/
func BenchmarkDomainKey(b *testing.B) {
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		b.Fatal(err)
	}
	r := &frontier.Request{URL: "http://www.host3.example.com/d1/page17.html"}
	u, _ := url.Parse(r.URL)
	r.SetMetaDomain(id.Domain(u))
	b.ReportAllocs()
	n := 0
	cpu0 := cputime.Process()
	for b.Loop() {
		if len(domainKey(r)) != 40 {
			b.Fatal("no key")
		}
		n++
	}
	b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(n), "CPU-ns/page")
}
