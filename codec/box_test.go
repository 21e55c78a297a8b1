package codec

import (
	"math"
	"reflect"
	"runtime"
	"testing"

	frontier "github.com/frontiercrawl/frontier"
)

// TestBoxing checks that the slab-boxed values are the interfaces Go builds: same dynamic type, same value,
// equal under == and reflect.DeepEqual, intact after a collection.
func TestBoxing(t *testing.T) {
	d := &mpReader{b: make([]byte, 1024)}
	var got, want []frontier.Value
	for i := range 200 { // past several slabs
		p := []byte{byte(i), 'x'}
		n := int64(i)*1_000_003 - 7
		f := float64(i) / 3
		got = append(got, d.boxBin(p), d.boxInt(n), d.boxInt(int64(i%256)), d.boxFloat(f), d.boxFloat(math.Inf(-1)))
		want = append(want, p, n, int64(i%256), f, math.Inf(-1))
	}
	runtime.GC()
	for i := range got {
		if reflect.TypeOf(got[i]) != reflect.TypeOf(want[i]) || !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("value %d: got %T %v, want %T %v", i, got[i], got[i], want[i], want[i])
		}
		if _, ok := want[i].([]byte); !ok && got[i] != want[i] {
			t.Fatalf("value %d: %v != %v", i, got[i], want[i])
		}
	}
	if b, ok := got[0].([]byte); !ok || cap(b) != 2 {
		t.Fatalf("bin: %v %v", b, ok)
	}
}
