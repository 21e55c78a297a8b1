package frontiertest

import (
	"path/filepath"
	"testing"

	"github.com/frontiercrawl/frontier/pebblestore"
)

// RequireStandaloneAccounted opens the store of a standalone crawl that has ended (dataDir is its data
// directory, the store is in its "pebble" folder) and checks the end-of-crawl invariant on it
// (RequireAccounted): every URL scheduled is crawled, in an error state with its reason, or still queued.
func RequireStandaloneAccounted(tb testing.TB, dataDir string) Accounting {
	tb.Helper()
	pcfg := pebblestore.DefaultConfig()
	pcfg.Dir = filepath.Join(dataDir, "pebble")
	db, err := pebblestore.Open(pcfg, nil)
	if err != nil {
		tb.Fatalf("open the crawl's store for the accounting check: %v", err)
	}
	defer db.Close()
	return RequireAccounted(tb, AccountingStores{States: db.RawStates(), Queue: db.Queue(), Pages: db.Pages()})
}
