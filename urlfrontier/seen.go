package urlfrontier

import (
	"math"

	"github.com/frontiercrawl/frontier/internal/keyfilter"
)

// The seen filter (Store.seen) is a keyfilter over the URL keys a Store has ever been given to write: a key it
// has not seen is certainly not stored, so Store.seekEach answers it without asking Pebble (most puts, the
// client's and the feed's, look up a URL that is not there; Pebble's answer walks the memtable and asks every
// table's filter). Deleted keys stay in it (a false positive costs one lookup, as before).
//
// It is bounded at StoreConfig.SeenFilterBytes, by default seenMaxBytes (eight layers, about 16.7 million
// keys; the standalone's memory plan gives it 7 MiB of the default 256 MiB, five layers, about 2 million): a
// store that outgrows it has a full filter, and from then on every lookup asks Pebble, as without a filter.
// The bound keeps the filter's memory and the store's opening scan (loadSeen stops when it is full) small
// whatever the crawl's size. Add is called under Store.mu (or before the store is shared); MayContain takes no
// lock, as the reads it stands before: a key's bits are set before the batch that writes it commits, so a
// reader that misses them read before that commit as far as the store's answers go. A nil filter (none) holds
// every key.
const (
	seenFirstCap = 1 << 16
	seenMaxBytes = 32 << 20
)

// newSeenFilter returns an empty seen filter bounded at maxBytes (0: seenMaxBytes).
func newSeenFilter(maxBytes int64) *keyfilter.Filter {
	if maxBytes <= 0 {
		maxBytes = seenMaxBytes
	}
	return keyfilter.New(seenFirstCap, int(min(maxBytes, math.MaxInt32)))
}
