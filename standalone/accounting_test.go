package standalone

import (
	"errors"
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/state"

	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/pebblestore"
)

// requireAccounted opens the store of a crawl that has ended and checks the end-of-crawl invariant: every
// URL the frontier scheduled is crawled, in an error state with its reason, or still queued
// (frontiertest.CheckAccounting).
func requireAccounted(t *testing.T, dataDir string) frontiertest.Accounting {
	t.Helper()
	return frontiertest.RequireStandaloneAccounted(t, dataDir)
}

// TestCheckStranded: the finish check finds a QUEUED URL with no queue row, and accepts one with a row.
func TestCheckStranded(t *testing.T) {
	pcfg := pebblestore.DefaultConfig()
	pcfg.Dir = t.TempDir()
	pcfg.Sync = false
	db, err := pebblestore.Open(pcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	queued, stranded, crawled := frontier.Fingerprint("fp-queued-0000000000"), frontier.Fingerprint("fp-stranded-00000000"), frontier.Fingerprint("fp-crawled-000000000")
	if err := db.RawStates().Put(ctx, []frontier.Fingerprint{queued, crawled},
		[]state.Entry{{State: frontier.Queued}, {State: frontier.Crawled}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Queue().Schedule(ctx, []queue.Item{{Partition: 0, Host: "a.test", Fingerprint: queued, Score: 1, Request: []byte("r")}}); err != nil {
		t.Fatal(err)
	}
	if err := checkStranded(ctx, db); err != nil {
		t.Fatalf("checkStranded with every QUEUED URL in the queue: %v", err)
	}
	if err := db.Pages().Put(ctx, []metadata.Page{{Fingerprint: stranded, URL: "http://a.test/lost", FirstSeen: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RawStates().Put(ctx, []frontier.Fingerprint{stranded}, []state.Entry{{State: frontier.Queued}}); err != nil {
		t.Fatal(err)
	}
	err = checkStranded(ctx, db)
	if !errors.Is(err, ErrStranded) || !strings.Contains(err.Error(), "http://a.test/lost") {
		t.Fatalf("checkStranded = %v, want ErrStranded naming http://a.test/lost", err)
	}
}
