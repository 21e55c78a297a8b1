package pebblestore

import (
	"hash/maphash"

	"github.com/cockroachdb/pebble/v2"
)

// pageFilter is an in-memory Bloom filter over the page keys (m keys) stored in the DB: the keys Pages.Put
// wrote, and those it found when it first ran (loadPageFilter). A key it does not hold is certainly not
// stored, so Put merges that page into an empty record without asking Pebble: most pages the links role
// records are new links, and Pebble's answer for an absent key walks the memtable and asks every table's
// filter. Pages.Put is the only writer of the m keys and the DB is this process's alone.
//
// It grows in layers, each twice the capacity of the one before, up to maxBytes in all (pageFilterMaxBytes:
// eight layers, about 8.4 million pages): a store that outgrows it sets full, and from then on every key may
// be stored and every page is read before its write, as without a filter. The bound keeps the filter's memory
// and the opening scan small whatever the crawl's size. Not safe for concurrent use: Pages.mu guards it.
type pageFilter struct {
	seed     maphash.Seed
	layers   []pageLayer
	full     bool // a layer more would pass maxBytes: keys are no longer recorded
	maxBytes int  // bounds the layers' words (pageFilterMaxBytes; tests set less)
}

// pageLayer is one Bloom filter of 10 bits per key and pageFilterProbes probes.
type pageLayer struct {
	words []uint64
	mask  uint64 // bits − 1 (a power of two)
	cap   int    // keys it takes before the next layer
	n     int    // keys added
}

const (
	pageFilterFirstCap = 1 << 15
	pageFilterProbes   = 7
	pageFilterMaxBytes = 16 << 20
)

func newPageFilter(firstCap, maxBytes int) *pageFilter {
	return &pageFilter{seed: maphash.MakeSeed(), layers: []pageLayer{newPageLayer(firstCap)}, maxBytes: maxBytes}
}

func newPageLayer(capacity int) pageLayer {
	bits := uint64(capacity) * 10
	p := uint64(64)
	for p < bits {
		p <<= 1
	}
	return pageLayer{words: make([]uint64, p/64), mask: p - 1, cap: capacity}
}

// add records key (a key it may hold already takes no room). Once the filter is full it records nothing and
// holds every key.
func (f *pageFilter) add(key []byte) {
	if f.full {
		return
	}
	h := maphash.Bytes(f.seed, key)
	for i := range f.layers {
		if f.layers[i].has(h) {
			return
		}
	}
	l := &f.layers[len(f.layers)-1]
	if l.n >= l.cap {
		size := 0
		for _, l := range f.layers {
			size += 8 * len(l.words)
		}
		if size+16*len(l.words) > f.maxBytes { // the next layer is twice the last
			f.full = true
			f.layers = nil
			return
		}
		f.layers = append(f.layers, newPageLayer(l.cap*2))
		l = &f.layers[len(f.layers)-1]
	}
	l.set(h)
	l.n++
}

// mayContain reports whether key may have been added; false means it was not. A full filter holds every key.
func (f *pageFilter) mayContain(key []byte) bool {
	if f.full {
		return true
	}
	h := maphash.Bytes(f.seed, key)
	for i := range f.layers {
		if f.layers[i].has(h) {
			return true
		}
	}
	return false
}

func (l *pageLayer) set(h uint64) {
	h1, h2 := h, h>>32|h<<32|1
	for range pageFilterProbes {
		b := h1 & l.mask
		l.words[b/64] |= 1 << (b % 64)
		h1 += h2
	}
}

func (l *pageLayer) has(h uint64) bool {
	h1, h2 := h, h>>32|h<<32|1
	for range pageFilterProbes {
		b := h1 & l.mask
		if l.words[b/64]&(1<<(b%64)) == 0 {
			return false
		}
		h1 += h2
	}
	return true
}

// loadPageFilter returns a filter holding every page key stored in db, or a full one once they pass maxBytes
// (the scan stops there).
func loadPageFilter(db *pebble.DB, firstCap, maxBytes int) (*pageFilter, error) {
	f := newPageFilter(firstCap, maxBytes)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{pfxPage}, UpperBound: []byte{pfxPage + 1}})
	if err != nil {
		return nil, err
	}
	for it.First(); it.Valid() && !f.full; it.Next() {
		f.add(it.Key())
	}
	if err := it.Error(); err != nil {
		it.Close()
		return nil, err
	}
	return f, it.Close()
}
