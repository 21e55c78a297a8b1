package urlfrontier

import (
	"reflect"
	"testing"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/codec"
)

// TestFeedDecoder checks that each codec's feedDecoder (Msgpack's borrowing one, JSON's whole one) gives take
// the feed entries a whole decode gives, for requests decoded one after another with one decoder and read after
// all of them were decoded.
func TestFeedDecoder(t *testing.T) {
	mk := func(u string, meta ...frontier.Entry) *frontier.Request {
		r := &frontier.Request{URL: u, Method: "GET"}
		for _, e := range meta {
			r.Meta.Set(e.Key.(string), e.Value)
		}
		return r
	}
	md := frontier.Map{{Key: "source", Value: []frontier.Value{"http://a.example/"}}, {Key: "x", Value: []frontier.Value{"1", "2"}}}
	reqs := []*frontier.Request{
		mk("http://a.example/1"),
		mk("http://a.example/2", frontier.Entry{Key: MetaKeyCrawl, Value: "c1"}, frontier.Entry{Key: MetaKeyQueue, Value: "q1"}),
		mk("http://b.example/3", frontier.Entry{Key: MetaKeyMetadata, Value: md}, frontier.Entry{Key: "score", Value: 0.5},
			frontier.Entry{Key: frontier.MetaKeyNotBefore, Value: int64(1700000000)}),
		mk("http://c.example/4", frontier.Entry{Key: "depth", Value: int64(3)}, frontier.Entry{Key: MetaKeyQueue, Value: []byte("qb")}),
	}
	for _, c := range []codec.Codec{codec.Msgpack{}, codec.JSON{}} {
		t.Run(c.Name(), func(t *testing.T) {
			dec := newFeedDecoder(c)
			var got []*frontier.Request
			var ins [][]byte
			for round := 0; round < 50; round++ {
				for _, r := range reqs {
					p, err := c.EncodeRequest(r)
					if err != nil {
						t.Fatal(err)
					}
					q, err := dec(p)
					if err != nil {
						t.Fatal(err)
					}
					got, ins = append(got, q), append(ins, p)
				}
			}
			if _, err := dec([]byte{0x95}); err == nil {
				t.Fatal("truncated request accepted")
			}
			for i, q := range got {
				whole, err := c.DecodeRequest(ins[i])
				if err != nil {
					t.Fatal(err)
				}
				gi, gd := feedInfo(q)
				wi, wd := feedInfo(whole)
				if q.URL != whole.URL || gd != wd || !reflect.DeepEqual(gi, wi) {
					t.Fatalf("request %d: got %+v due %d, want %+v due %d", i, gi, gd, wi, wd)
				}
			}
		})
	}
}
