package urlfrontier

import "github.com/frontiercrawl/frontier/internal/keyfilter"

// The seen filter (Store.seen) is a keyfilter over the URL keys a Store has ever been given to write: a key it
// has not seen is certainly not stored, so Store.seekEach answers it without asking Pebble (most puts, the
// client's and the feed's, look up a URL that is not there; Pebble's answer walks the memtable and asks every
// table's filter). Deleted keys stay in it (a false positive costs one lookup, as before).
//
// It is bounded at seenMaxBytes (eight layers, about 16.7 million keys): a store that outgrows it has a full
// filter, and from then on every lookup asks Pebble, as without a filter. The bound keeps the filter's memory
// (not in the standalone's memory plan) and the store's opening scan (loadSeen stops when it is full) small
// whatever the crawl's size. Add is called under Store.mu (or before the store is shared); MayContain takes no
// lock, as the reads it stands before: a key's bits are set before the batch that writes it commits, so a
// reader that misses them read before that commit as far as the store's answers go. A nil filter (none) holds
// every key.
const (
	seenFirstCap = 1 << 16
	seenMaxBytes = 32 << 20
)

func newSeenFilter() *keyfilter.Filter { return keyfilter.New(seenFirstCap, seenMaxBytes) }
