// Package metadata records what the crawl learned about each page (docs/architecture.md, "Stores": metadata) and the
// per-domain counters strategies need ("domain metadata"). It defines the interfaces HBase and Pebble
// implement and an in-memory implementation for unit tests.
//
// It imports only the frontier package and the standard library.
package metadata

import (
	"context"
	"fmt"

	"github.com/frontiercrawl/frontier"
)

// Page is the record of one URL. Zero fields are "unknown" and do not overwrite known values on Put.
type Page struct {
	Fingerprint frontier.Fingerprint
	URL         string
	FirstSeen   int64 // Unix seconds; kept from the first Put that sets it
	LastFetched int64 // Unix seconds
	Status      int   // HTTP status of the last fetch
	Depth       int
	ContentType string
	Error       string // stable error name of the last failed fetch, e.g. "DNSLookupError"
	RedirectTo  frontier.Fingerprint
}

// Store persists page records. Safe for concurrent use.
type Store interface {
	// Put merges the records into the store (see Page for the merge rule).
	Put(ctx context.Context, pages []Page) error
	// Get returns the record of fp and whether it exists.
	Get(ctx context.Context, fp frontier.Fingerprint) (Page, bool, error)
}

// Domains keeps per-domain counters (e.g. pages queued per registrable domain). Safe for concurrent use.
type Domains interface {
	// Add adds delta to counter name of each domain and returns the new values, in order.
	Add(ctx context.Context, name string, domains []string, delta []int64) ([]int64, error)
	// Get returns the counter values, 0 for domains never counted.
	Get(ctx context.Context, name string, domains []string) ([]int64, error)
}

// Tally is one contribution to a counter, made exactly once: Source names an ordered input of the writer (the
// consumed partition, e.g. "dbw-spider-log/3") and Seq the contribution's position in it (the offset of the
// message counted, or the last offset of the batch). A store applies a tally only when its Seq is above the
// highest Seq it has applied for that Source on that counter, and records the new highest in the same atomic
// write as the counter. So a write retried after a lost answer, or a batch replayed after a crash before its
// offsets were committed, is not counted twice, however its messages are cut into batches the second time.
//
// This needs one writer per Source at a time, writing in Seq order: what partition ownership gives (a
// partition's messages are consumed in offset order by its one owner).
type Tally struct {
	Domain string
	Delta  int64
	Source string
	Seq    int64
}

// ExactDomains is implemented by the Domains that count exactly once (memory, Pebble, HBase). Writers that know
// where their counts come from (the DB worker's and strategy worker's consumed offsets) use it instead of Add.
type ExactDomains interface {
	Domains
	// AddOnce applies the tallies of counter name that were not applied before (see Tally) and returns the value
	// of each tally's domain after the call, in order (the stored value, also for a tally that was skipped).
	AddOnce(ctx context.Context, name string, tallies []Tally) ([]int64, error)
}

// AddOnce adds tallies through d's AddOnce when d counts exactly once, and otherwise with Add (at least once).
func AddOnce(ctx context.Context, d Domains, name string, tallies []Tally) ([]int64, error) {
	if e, ok := d.(ExactDomains); ok {
		return e.AddOnce(ctx, name, tallies)
	}
	domains := make([]string, len(tallies))
	delta := make([]int64, len(tallies))
	for i, t := range tallies {
		domains[i], delta[i] = t.Domain, t.Delta
	}
	return d.Add(ctx, name, domains, delta)
}

// Pending is the part of an AddOnce call on one domain that a store has not applied yet: the sum of the deltas
// whose Seq is above applied[Source], and the new highest Seq per Source. applied is what the store recorded
// (absent: nothing applied). Stores call it so every store filters alike.
func Pending(tallies []Tally, applied map[string]int64) (delta int64, seqs map[string]int64) {
	seqs = map[string]int64{}
	for _, t := range tallies {
		last, ok := applied[t.Source]
		if ok && t.Seq <= last {
			continue
		}
		delta += t.Delta
		if s, ok := seqs[t.Source]; !ok || t.Seq > s {
			seqs[t.Source] = t.Seq
		}
	}
	return delta, seqs
}

// CheckTallies validates the arguments of AddOnce.
func CheckTallies(name string, tallies []Tally) error {
	if name == "" {
		return fmt.Errorf("metadata: add once: counter name is empty")
	}
	for i, t := range tallies {
		if t.Domain == "" {
			return fmt.Errorf("metadata: add once %s: tally %d has no domain", name, i)
		}
		if t.Source == "" {
			return fmt.Errorf("metadata: add once %s: tally %d (%s) has no source", name, i, t.Domain)
		}
	}
	return nil
}

// ByDomain groups tallies by domain, in order of first appearance.
func ByDomain(tallies []Tally) (order []string, groups map[string][]Tally) {
	groups = map[string][]Tally{}
	for _, t := range tallies {
		if _, ok := groups[t.Domain]; !ok {
			order = append(order, t.Domain)
		}
		groups[t.Domain] = append(groups[t.Domain], t)
	}
	return order, groups
}
