// Package state holds the crawl state of every URL the frontier has seen (DESIGN.md §4, "states"): the Store
// interface that HBase and Pebble implement, a bounded write-back Cache in front of it, and a Bloom filter that
// answers "certainly new" without a store read.
//
// It imports only the frontier package and the standard library (plus the Bloom filter's hash); the HBase
// and Pebble implementations live elsewhere and import this package, not the reverse.
package state

import (
	"context"

	"github.com/frontiercrawl/frontier"
)

// Entry is the stored state of one URL.
type Entry struct {
	State frontier.State
	// RevisitAt is when a revisit policy wants the URL fetched again, in Unix seconds; 0 means never.
	RevisitAt int64
}

// Store maps fingerprints to entries. Implementations are safe for concurrent use.
//
// Get fills out[i] with the entry of fps[i] and found[i] with whether it exists; a missing fingerprint gets
// the zero Entry (NotCrawled) and found[i] = false. out and found must be at least as long as fps.
//
// Put writes entries[i] under fps[i]; it is atomic per key, not per batch, and when a fingerprint appears
// twice in one batch the later entry wins. It rejects (with an error, storing nothing) an empty fingerprint,
// an invalid State, or fewer entries than fingerprints (see CheckPut). Once Put returns nil the entries are
// durable as the implementation defines it (HBase: acknowledged by the region servers; Pebble: in the synced
// WAL).
//
// The conformance suite is state/statetest.
type Store interface {
	Get(ctx context.Context, fps []frontier.Fingerprint, out []Entry, found []bool) error
	Put(ctx context.Context, fps []frontier.Fingerprint, entries []Entry) error
}
