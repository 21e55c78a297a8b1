package strategyworker

import (
	"bytes"
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/codec"
)

// TestEncodeSlab: the update_score messages encoded into the batch's shared buffers are the bytes
// Msgpack.EncodeMessage gives, each capped (an append cannot reach the next), and stay so while the batch
// encodes more, including messages larger than a buffer.
func TestEncodeSlab(t *testing.T) {
	w := &Worker{deps: Deps{Codec: codec.Msgpack{}}}
	c := &batchContext{w: w, info: make([]reqInfo, 0, 3)}
	var got, want [][]byte
	for i := range 400 {
		u := "http://a.test/p/" + strings.Repeat("x", i%7*100)
		if i%50 == 49 {
			u += strings.Repeat("y", encSlab) // larger than a buffer
		}
		m := &frontier.UpdateScore{Request: req(u, int64(i)), Score: 0.5, Schedule: true}
		v, err := c.encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if cap(v) != len(v) {
			t.Fatalf("message %d: cap %d, len %d: not capped", i, cap(v), len(v))
		}
		e, err := codec.Msgpack{}.EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		got, want = append(got, v), append(want, e)
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("message %d differs from EncodeMessage's", i)
		}
	}
}
