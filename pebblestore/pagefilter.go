package pebblestore

import (
	"github.com/cockroachdb/pebble/v2"

	"github.com/frontiercrawl/frontier/internal/keyfilter"
)

// The page filter (Pages.filter) is a keyfilter over the page keys (m keys) stored in the DB: the keys Pages.Put
// wrote, and those it found when it first ran (loadPageFilter). A key it does not hold is certainly not
// stored, so Put merges that page into an empty record without asking Pebble: most pages the links role
// records are new links, and Pebble's answer for an absent key walks the memtable and asks every table's
// filter. Pages.Put is the only writer of the m keys and the DB is this process's alone.
//
// It is bounded at Config.PageFilterBytes, by default pageFilterMaxBytes (eight layers, about 8.4 million
// pages; the standalone's 256 MiB give it 8 MiB, about 4.2 million): a store that outgrows it has a
// full filter, and from then on every page is read before its write, as without a filter. The bound keeps the
// filter's memory and the opening scan small whatever the crawl's size.
const (
	pageFilterFirstCap = 1 << 15
	pageFilterMaxBytes = 16 << 20
)

// loadPageFilter returns a filter holding every page key stored in db, or a full one once they pass maxBytes
// (the scan stops there).
func loadPageFilter(db *pebble.DB, firstCap, maxBytes int) (*keyfilter.Filter, error) {
	f := keyfilter.New(firstCap, maxBytes)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{pfxPage}, UpperBound: []byte{pfxPage + 1}})
	if err != nil {
		return nil, err
	}
	for it.First(); it.Valid() && !f.Full(); it.Next() {
		f.Add(it.Key())
	}
	if err := it.Error(); err != nil {
		it.Close()
		return nil, err
	}
	return f, it.Close()
}
