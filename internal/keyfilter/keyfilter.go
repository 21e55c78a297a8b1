// Package keyfilter is an in-memory Bloom filter over byte keys, bounded in bytes, that a store puts in front
// of its lookups: a key the filter does not hold was never added, so the store answers it absent without
// reading; a key it may hold is read as before.
//
// It grows in layers, each twice the capacity of the one before, so it needs no size up front, up to a bound
// in bytes: a filter that would pass its bound becomes full, frees its layers, and from then on holds every key
// (every lookup reads, as without a filter). The bound keeps the filter's memory, and the opening scan of a
// store that loads it until it is full, small whatever the crawl's size.
//
// It is written here rather than taken from a library (bits-and-blooms/bloom sizes a filter up front and has
// no bound past which it gives up) and apart from state.Bloom (over fingerprints, sized by a false-positive
// design, saved to a file, and growing without bound) because the stores that use it (urlfrontier's URL keys,
// pebblestore's page keys) need exactly this: no size up front, a hard bound in bytes, lock-free reads.
package keyfilter

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// Filter is a bounded, layered Bloom filter of 10 bits per key and 7 probes (about 1% false positives per
// layer). Add is serialised by the filter itself; MayContain takes no lock, and a key's bits are set before
// Add returns, so a reader that misses them read before the Add. A nil Filter holds every key and records
// nothing.
type Filter struct {
	seed     maphash.Seed
	mu       sync.Mutex // serialises Add
	layers   atomic.Pointer[[]*layer]
	full     atomic.Bool // a layer more would pass maxBytes: keys are no longer recorded
	maxBytes int
}

type layer struct {
	words []atomic.Uint64
	mask  uint64 // bits − 1 (a power of two)
	cap   int    // keys it takes before the next layer
	n     int    // keys added (under Filter.mu)
}

const probes = 7

// New returns an empty filter whose first layer takes firstCap keys, bounded at maxBytes of layers.
func New(firstCap, maxBytes int) *Filter {
	f := &Filter{seed: maphash.MakeSeed(), maxBytes: maxBytes}
	f.layers.Store(&[]*layer{newLayer(firstCap)})
	return f
}

func newLayer(capacity int) *layer {
	bits := uint64(capacity) * 10
	p := uint64(64)
	for p < bits {
		p <<= 1
	}
	return &layer{words: make([]atomic.Uint64, p/64), mask: p - 1, cap: capacity}
}

// LayerBytes is the size of a layer that takes capacity keys (tests size bounds with it).
func LayerBytes(capacity int) int { return 8 * len(newLayer(capacity).words) }

// Add records key (a key it may hold already takes no room). Once the filter is full it records nothing and
// holds every key.
func (f *Filter) Add(key []byte) {
	if f.Full() {
		return
	}
	h := maphash.Bytes(f.seed, key)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.full.Load() {
		return
	}
	ls := *f.layers.Load()
	for _, l := range ls {
		if l.has(h) {
			return
		}
	}
	l := ls[len(ls)-1]
	if l.n >= l.cap {
		size := 0
		for _, l := range ls {
			size += 8 * len(l.words)
		}
		if size+16*len(l.words) > f.maxBytes { // the next layer is twice the last
			f.full.Store(true) // before the layers go: a reader that sees them gone sees full
			f.layers.Store(&[]*layer{})
			return
		}
		l = newLayer(l.cap * 2)
		next := append(append(make([]*layer, 0, len(ls)+1), ls...), l)
		f.layers.Store(&next)
	}
	l.set(h)
	l.n++
}

// Full reports whether the filter records nothing more and holds every key: it reached its bound, or is nil.
func (f *Filter) Full() bool { return f == nil || f.full.Load() }

// Layers is the number of layers the filter holds (0 once full).
func (f *Filter) Layers() int {
	if f == nil {
		return 0
	}
	return len(*f.layers.Load())
}

// MayContain reports whether key may have been added; false means it was not. A full or nil filter holds
// every key.
func (f *Filter) MayContain(key []byte) bool {
	if f.Full() {
		return true
	}
	h := maphash.Bytes(f.seed, key)
	for _, l := range *f.layers.Load() {
		if l.has(h) {
			return true
		}
	}
	// The layers read may be the empty set a filter that just became full left: it holds every key.
	return f.full.Load()
}

func (l *layer) set(h uint64) {
	h1, h2 := h, h>>32|h<<32|1
	for range probes {
		b := h1 & l.mask
		l.words[b/64].Or(1 << (b % 64))
		h1 += h2
	}
}

func (l *layer) has(h uint64) bool {
	h1, h2 := h, h>>32|h<<32|1
	for range probes {
		b := h1 & l.mask
		if l.words[b/64].Load()&(1<<(b%64)) == 0 {
			return false
		}
		h1 += h2
	}
	return true
}
