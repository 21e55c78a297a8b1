package codec

import (
	"bytes"
	"testing"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/internal/cputime"
)

// TestEncodeLinksSharedMaps checks that links_extracted links whose meta shares map values (the spider's one
// domain map per host) encode to the same bytes as the same links with a copy of each map: the encoder's
// memo of the last map (mapMemo) copies only the bytes of the very same map. Sub-slices of one array (same
// start, other length) and maps alternating between links are covered.
func TestEncodeLinksSharedMaps(t *testing.T) {
	domA := frontier.Map{
		{Key: []byte("netloc"), Value: []byte("a.example")}, {Key: []byte("name"), Value: []byte("a.example")},
		{Key: []byte("scheme"), Value: []byte("http")}, {Key: []byte("fingerprint"), Value: []byte("aaaa")},
	}
	domB := frontier.Map{{Key: []byte("netloc"), Value: []byte("b.example")}, {Key: []byte("nested"), Value: frontier.Map{{Key: "k", Value: int64(1)}}}}
	doms := []frontier.Map{domA, domA, domA[:2], domA[:2], domB, domA, domB, domB, {}, domA[1:], domA}
	shared := &frontier.LinksExtracted{Request: &frontier.Request{URL: "http://a.example/", Method: "GET"}}
	copied := &frontier.LinksExtracted{Request: shared.Request}
	for i, d := range doms {
		url := "http://a.example/" + string(rune('a'+i))
		shared.Links = append(shared.Links, &frontier.Request{URL: url, Method: "GET", Meta: frontier.Map{
			{Key: []byte("fingerprint"), Value: []byte("ff")}, {Key: []byte("domain"), Value: d}, {Key: []byte("other"), Value: d}}})
		copied.Links = append(copied.Links, &frontier.Request{URL: url, Method: "GET", Meta: frontier.Map{
			{Key: []byte("fingerprint"), Value: []byte("ff")}, {Key: []byte("domain"), Value: d.Clone()}, {Key: []byte("other"), Value: d.Clone()}}})
	}
	got, err := AppendMessage([]byte("prefix"), shared)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Msgpack{}.EncodeMessage(copied)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[len("prefix"):], want) {
		t.Fatalf("shared maps encode differently:\n got %x\nwant %x", got[len("prefix"):], want)
	}
	back, err := Msgpack{}.DecodeMessage(want)
	if err != nil {
		t.Fatal(err)
	}
	if le := back.(*frontier.LinksExtracted); len(le.Links) != len(doms) {
		t.Fatalf("decoded %d links, want %d", len(le.Links), len(doms))
	}
}

// BenchmarkEncodeLinksSharedDomain encodes links_extracted messages of 10 links of one host that share one
// domain map, as the spider builds them (one message per link host, identity.DomainMeta).
//
//	go test -run XXX -bench BenchmarkEncodeLinksSharedDomain ./codec/
func BenchmarkEncodeLinksSharedDomain(b *testing.B) {
	rs := benchRequests()
	ms := make([]frontier.Message, nBench)
	for i := range ms {
		dom, _ := rs[i].Meta.Get("domain")
		links := make([]*frontier.Request, 10)
		for j := range links {
			l := *rs[(i+1+j)%nBench]
			l.Meta = append(frontier.Map(nil), l.Meta...)
			l.Meta.Set("domain", dom)
			links[j] = &l
		}
		ms[i] = &frontier.LinksExtracted{Request: rs[i], Links: links}
	}
	buf := make([]byte, 0, 1<<14)
	var i, n int
	cpu0 := cputime.Process()
	for b.Loop() {
		p, err := AppendMessage(buf[:0], ms[i%nBench])
		if err != nil {
			b.Fatal(err)
		}
		n += len(p)
		i++
	}
	report(b, n, cpu0)
}
