package urlfrontier

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// seenFilter is an in-memory Bloom filter over the URL keys a Store has ever been given to write: a key it
// has not seen is certainly not stored, so Store.seekEach answers it without asking Pebble (most puts, the
// client's and the feed's, look up a URL that is not there; Pebble's answer walks the memtable and asks every
// table's filter). Deleted keys stay in it (a false positive costs one lookup, as before).
//
// It grows in layers, each twice the capacity of the one before, so it needs no size up front, up to
// seenMaxBytes in all (eight layers, about 16.7 million keys): a store
// that outgrows it sets full, and from then on every key may be present and every lookup asks Pebble, as
// without a filter. The bound keeps the filter's memory (not in the standalone's memory plan) and the store's
// opening scan (loadSeen stops when it is full) small whatever the crawl's size. add is called
// under Store.mu (or before the store is shared); mayContain takes no lock, as the reads it stands before: a
// key's bits are set before the batch that writes it commits, so a reader that misses them read before that
// commit as far as the store's answers go.
type seenFilter struct {
	seed   maphash.Seed
	mu     sync.Mutex // serialises add (Store.mu already does; this keeps the filter safe on its own)
	layers atomic.Pointer[[]*seenLayer]
	full   atomic.Bool // a layer more would pass maxBytes: keys are no longer recorded
	// maxBytes bounds the layers' words (seenMaxBytes; tests set less).
	maxBytes int
}

// seenLayer is one Bloom filter of 10 bits per key and seenProbes probes.
type seenLayer struct {
	words []atomic.Uint64
	mask  uint64 // bits − 1 (a power of two)
	cap   int    // keys it takes before the next layer
	n     int    // keys added (under seenFilter.mu)
}

const (
	seenFirstCap = 1 << 16
	seenProbes   = 7
	seenMaxBytes = 32 << 20
)

func newSeenFilter() *seenFilter {
	f := &seenFilter{seed: maphash.MakeSeed(), maxBytes: seenMaxBytes}
	f.layers.Store(&[]*seenLayer{newSeenLayer(seenFirstCap)})
	return f
}

func newSeenLayer(capacity int) *seenLayer {
	bits := uint64(capacity) * 10
	p := uint64(64)
	for p < bits {
		p <<= 1
	}
	return &seenLayer{words: make([]atomic.Uint64, p/64), mask: p - 1, cap: capacity}
}

// add records key (a key it may hold already takes no room). Once the filter is full it records nothing and
// holds every key.
func (f *seenFilter) add(key []byte) {
	if f.saturated() {
		return
	}
	h := maphash.Bytes(f.seed, key)
	f.mu.Lock()
	defer f.mu.Unlock()
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
			f.full.Store(true) // before the commit that writes key, as a bit would be
			return
		}
		l = newSeenLayer(l.cap * 2)
		next := append(append(make([]*seenLayer, 0, len(ls)+1), ls...), l)
		f.layers.Store(&next)
	}
	l.set(h)
	l.n++
}

// saturated reports whether add records nothing more: the filter is full, or nil.
func (f *seenFilter) saturated() bool { return f == nil || f.full.Load() }

// mayContain reports whether key may have been added; false means it was not. A nil filter (none) and a
// full one hold every key.
func (f *seenFilter) mayContain(key []byte) bool {
	if f.saturated() {
		return true
	}
	h := maphash.Bytes(f.seed, key)
	for _, l := range *f.layers.Load() {
		if l.has(h) {
			return true
		}
	}
	return false
}

func (l *seenLayer) set(h uint64) {
	h1, h2 := h, h>>32|h<<32|1
	for range seenProbes {
		b := h1 & l.mask
		l.words[b/64].Or(1 << (b % 64))
		h1 += h2
	}
}

func (l *seenLayer) has(h uint64) bool {
	h1, h2 := h, h>>32|h<<32|1
	for range seenProbes {
		b := h1 & l.mask
		if l.words[b/64].Load()&(1<<(b%64)) == 0 {
			return false
		}
		h1 += h2
	}
	return true
}
