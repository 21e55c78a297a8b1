package codec

import (
	"math"
	"unsafe"

	frontier "github.com/frontiercrawl/frontier"
)

// Boxing without an allocation per value. Storing a []byte, an int64 or a float64 in a frontier.Value (an
// interface) makes Go allocate a copy of it on the heap (the slice header, the eight bytes): one allocation per
// bin, large int and float a message holds, most of what decoding a link allocated once its domain map was
// shared (a link carries a fingerprint bin and a discovery time). The decoder instead copies such values into
// slabs it allocates a few at a time and makes each interface point at its slot: the interface is the one Go
// would have built (same type word, a data word pointing at an immutable copy of the value), only its copy
// lives next to others. A slab lives as long as any value cut from it.
//
// This relies on the layout of an empty interface (a type word, then a data word pointing at the value), which
// every Go release has kept; TestBoxing fails if it ever changes.

// eface is the layout of an empty interface.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

func typeWord(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

var (
	bytesType   = typeWord([]byte(nil))
	int64Type   = typeWord(int64(0))
	float64Type = typeWord(float64(0))
)

// boxAt returns the interface of type typ whose value is at data.
func boxAt(typ, data unsafe.Pointer) (v frontier.Value) {
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, data
	return v
}

// slabSize is how many slots a new slab gets: about one per 160 bytes of input left (a link of the spider's takes
// 150-250 bytes and boxes one bin and one int), within [4, 32].
func (d *mpReader) slabSize() int {
	return min(max((len(d.b)-d.off)/160, 4), 32)
}

// boxBin returns p as a frontier.Value holding a []byte, its header cut from d.bins.
func (d *mpReader) boxBin(p []byte) frontier.Value {
	if len(d.bins) == cap(d.bins) {
		d.bins = make([][]byte, 0, d.slabSize())
	}
	d.bins = append(d.bins, p)
	return boxAt(bytesType, unsafe.Pointer(&d.bins[len(d.bins)-1]))
}

// boxInt returns n as a frontier.Value holding an int64, its eight bytes cut from d.words unless Go boxes it
// without allocating anyway (0 to 255).
func (d *mpReader) boxInt(n int64) frontier.Value {
	if n >= 0 && n < 256 {
		return n
	}
	return boxAt(int64Type, d.word(uint64(n)))
}

// boxFloat returns f as a frontier.Value holding a float64, its eight bytes cut from d.words.
func (d *mpReader) boxFloat(f float64) frontier.Value {
	return boxAt(float64Type, d.word(math.Float64bits(f)))
}

func (d *mpReader) word(u uint64) unsafe.Pointer {
	if len(d.words) == cap(d.words) {
		d.words = make([]uint64, 0, d.slabSize())
	}
	d.words = append(d.words, u)
	return unsafe.Pointer(&d.words[len(d.words)-1])
}
