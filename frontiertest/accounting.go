package frontiertest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/state"
)

// The end-of-crawl accounting invariant (issue 21, deliverable 2): every URL the frontier ever scheduled is
// crawled, in a terminal error state with its reason, or still in the queue. A URL the strategy worker marked
// QUEUED whose queue row is gone and whose outcome never came back is stranded: nothing will ever fetch it,
// and a standalone crawl would still report "finished". CheckAccounting finds such URLs by reading the
// frontier's own stores after the crawl ended, so it needs no knowledge of the web that was crawled.
//
// Call it once the crawl has stopped (every role's Run returned, or a standalone Run returned): a request on
// the spider feed or being fetched is QUEUED without a queue row by design, and would be reported as
// stranded (list such fingerprints in AccountingStores.InFlight when checking a crawl stopped mid-way).
//
// Both store families implement the interfaces: pass pebblestore's db.RawStates(), db.Queue() and db.Pages()
// for a standalone crawl, and hbase's client.States(), client.Queue() and client.Pages() for a cluster.

// StateLister is the part of a state store the check reads: every known URL's state. pebblestore.States and
// hbase.States implement it. fp may be valid only during the call.
type StateLister interface {
	Each(ctx context.Context, fn func(fp frontier.Fingerprint, e state.Entry) error) error
}

// QueueLookup says which fingerprints have a queue row (due or not). pebblestore.Queue and hbase.Queue
// implement it.
type QueueLookup interface {
	Has(ctx context.Context, fps []frontier.Fingerprint) ([]bool, error)
}

// AccountingStores are the stores CheckAccounting reads.
type AccountingStores struct {
	States StateLister // required
	Queue  QueueLookup // required
	// Pages gives the URL of a stranded fingerprint and the reason of an ERROR one (metadata.Page.Error, or an
	// HTTP status >= 400). nil skips the reason check (a crawl run without the DB worker's links role).
	Pages metadata.Store
	// InFlight are fingerprints known to be on the spider feed or being fetched (none after a finished crawl).
	InFlight []frontier.Fingerprint
}

// StrandedURL is one URL that breaks the invariant.
type StrandedURL struct {
	Fingerprint frontier.Fingerprint
	URL         string // from the page metadata, "" when unknown
	State       frontier.State
	Why         string
}

func (s StrandedURL) String() string {
	u := s.URL
	if u == "" {
		u = "(url unknown)"
	}
	return fmt.Sprintf("%s %x %s: %s", u, []byte(s.Fingerprint), s.State, s.Why)
}

// Accounting is what CheckAccounting found.
type Accounting struct {
	Known      int // URLs with a state
	NotCrawled int // seen, never scheduled (e.g. out of scope)
	Crawled    int
	Errors     int // ERROR with a reason
	Queued     int // QUEUED with a queue row (or in flight)
	// ErrorReasons counts the ERROR URLs by reason (an error name such as "DNSLookupError", or "HTTP 500").
	ErrorReasons map[string]int
	// Stranded are the URLs that break the invariant: QUEUED without a queue row, ERROR without a reason, or a
	// state that is not one of the four.
	Stranded []StrandedURL
}

// OK reports whether no URL is stranded.
func (a Accounting) OK() bool { return len(a.Stranded) == 0 }

func (a Accounting) String() string {
	return fmt.Sprintf("%d known: %d crawled, %d errors %v, %d queued, %d not scheduled, %d stranded",
		a.Known, a.Crawled, a.Errors, a.ErrorReasons, a.Queued, a.NotCrawled, len(a.Stranded))
}

// accountingChunk is how many QUEUED fingerprints are looked up in the queue at once.
const accountingChunk = 1000

// CheckAccounting reads every state and checks the invariant (see the top of this file). It returns an error
// only when a store cannot be read; broken invariants are in Accounting.Stranded.
func CheckAccounting(ctx context.Context, s AccountingStores) (Accounting, error) {
	a := Accounting{ErrorReasons: map[string]int{}}
	if s.States == nil || s.Queue == nil {
		return a, fmt.Errorf("frontiertest: CheckAccounting needs States and Queue")
	}
	inFlight := make(map[string]bool, len(s.InFlight))
	for _, fp := range s.InFlight {
		inFlight[string(fp)] = true
	}
	var queued, errs []frontier.Fingerprint
	flush := func() error {
		has, err := s.Queue.Has(ctx, queued)
		if err != nil {
			return fmt.Errorf("frontiertest: queue lookup: %w", err)
		}
		for i, fp := range queued {
			if has[i] || inFlight[string(fp)] {
				a.Queued++
				continue
			}
			a.Stranded = append(a.Stranded, StrandedURL{Fingerprint: fp, State: frontier.Queued,
				Why: "QUEUED but no queue row: no request will ever fetch it"})
		}
		queued = queued[:0]
		return nil
	}
	err := s.States.Each(ctx, func(fp frontier.Fingerprint, e state.Entry) error {
		a.Known++
		fp = frontier.Fingerprint(bytes.Clone(fp))
		switch e.State {
		case frontier.NotCrawled:
			a.NotCrawled++
		case frontier.Crawled:
			a.Crawled++
		case frontier.Error:
			errs = append(errs, fp)
		case frontier.Queued:
			queued = append(queued, fp)
			if len(queued) >= accountingChunk {
				return flush()
			}
		default:
			a.Stranded = append(a.Stranded, StrandedURL{Fingerprint: fp, State: e.State, Why: "not a known state"})
		}
		return nil
	})
	if err == nil && len(queued) > 0 {
		err = flush()
	}
	if err != nil {
		return a, fmt.Errorf("frontiertest: accounting: %w", err)
	}
	for _, fp := range errs {
		if s.Pages == nil {
			a.Errors++
			a.ErrorReasons["(not checked)"]++
			continue
		}
		p, ok, err := s.Pages.Get(ctx, fp)
		if err != nil {
			return a, fmt.Errorf("frontiertest: page metadata %x: %w", []byte(fp), err)
		}
		switch {
		case ok && p.Error != "":
			a.Errors++
			a.ErrorReasons[p.Error]++
		case ok && p.Status >= 400:
			a.Errors++
			a.ErrorReasons[fmt.Sprintf("HTTP %d", p.Status)]++
		default:
			a.Stranded = append(a.Stranded, StrandedURL{Fingerprint: fp, URL: p.URL, State: frontier.Error,
				Why: "ERROR with no reason recorded (no error name, no HTTP error status)"})
		}
	}
	if s.Pages != nil {
		for i := range a.Stranded {
			if a.Stranded[i].URL != "" {
				continue
			}
			if p, ok, err := s.Pages.Get(ctx, a.Stranded[i].Fingerprint); err == nil && ok {
				a.Stranded[i].URL = p.URL
			}
		}
	}
	slices.SortFunc(a.Stranded, func(x, y StrandedURL) int { return strings.Compare(x.URL, y.URL) })
	return a, nil
}

// RequireAccounted runs CheckAccounting and fails t (listing up to 50 stranded URLs) unless every URL is
// accounted for. It logs the tally either way and returns it.
func RequireAccounted(t testing.TB, s AccountingStores) Accounting {
	t.Helper()
	a, err := CheckAccounting(context.WithoutCancel(t.Context()), s)
	if err != nil {
		t.Fatalf("accounting check: %v", err)
	}
	t.Logf("accounting: %s", a)
	if !a.OK() {
		var b strings.Builder
		for i, x := range a.Stranded {
			if i == 50 {
				fmt.Fprintf(&b, "\n  … and %d more", len(a.Stranded)-50)
				break
			}
			fmt.Fprintf(&b, "\n  %s", x)
		}
		t.Errorf("accounting: %d URLs stranded (scheduled, never fetched, not queued):%s", len(a.Stranded), b.String())
	}
	return a
}
