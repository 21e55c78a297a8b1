package codec_test

import (
	"fmt"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/codec"
)

func Example() {
	c, err := codec.New("msgpack") // from the config; "json" selects Frontera's JSON codec
	if err != nil {
		panic(err)
	}
	r := &frontier.Request{URL: "http://example.com/"}
	r.SetMetaFingerprint(frontier.Fingerprint{0x89, 0xe6, 0xa0, 0x64, 0x9e, 0x06, 0xd8, 0x33, 0x70, 0xcd, 0xf2, 0xcb, 0xfb, 0x05, 0xf3, 0x63, 0x93, 0x4a, 0x8d, 0x0c})
	r.SetMetaJobID(0)

	// A spider-feed item: the bytes a Frontera spider expects.
	feed, _ := c.EncodeRequest(r)
	fmt.Printf("%x\n", feed[:24])

	// A spider-log event, decoded by type switch.
	b, _ := c.EncodeMessage(&frontier.RequestError{Request: r, Error: "DNSLookupError"})
	m, err := c.DecodeMessage(b)
	if err != nil {
		panic(err)
	}
	switch m := m.(type) {
	case *frontier.RequestError:
		fp, _ := m.Request.MetaFingerprint()
		fmt.Println(m.Name(), m.Request.URL, m.Error, fp)
	}
	// Output:
	// 95b3687474703a2f2f6578616d706c652e636f6d2fc40347
	// request_error http://example.com/ DNSLookupError 89e6a0649e06d83370cdf2cbfb05f363934a8d0c
}
