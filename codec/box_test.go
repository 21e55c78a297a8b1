package codec

import (
	"bytes"
	"runtime"
	"testing"

	frontier "github.com/frontiercrawl/frontier"
)

// TestBoxedValuesSurviveGC decodes every Frontera vector, drops the decoder and the input, collects, and
// re-encodes: the bins and ints boxed into the reader's slabs (boxBin, boxInt) stay what they were.
func TestBoxedValuesSurviveGC(t *testing.T) {
	vs := loadVectors(t)
	var msgs []frontier.Message
	var want [][]byte
	for _, v := range vs {
		if v.msg == nil {
			continue
		}
		in := bytes.Clone(v.mp)
		m, err := Msgpack{}.DecodeMessageSkim(in, Skim{Borrow: true})
		if err != nil {
			continue
		}
		b, err := AppendMessage(nil, m)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		msgs, want = append(msgs, m), append(want, b)
	}
	for range 3 {
		runtime.GC()
		garbage := make([][]byte, 0, 1<<12)
		for i := range cap(garbage) {
			garbage = append(garbage, make([]byte, 24+i%64))
		}
		_ = garbage
	}
	for i, m := range msgs {
		got, err := AppendMessage(nil, m)
		if err != nil || !bytes.Equal(got, want[i]) {
			t.Fatalf("message %d after a GC: %v: %s", i, err, firstDiff(got, want[i]))
		}
	}
	t.Logf("%d messages", len(msgs))
}
