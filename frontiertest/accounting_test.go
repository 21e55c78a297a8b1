package frontiertest

import (
	"context"
	"slices"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/state"
)

type fakeStates map[string]frontier.State

func (f fakeStates) Each(_ context.Context, fn func(frontier.Fingerprint, state.Entry) error) error {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := fn(frontier.Fingerprint(k), state.Entry{State: f[k]}); err != nil {
			return err
		}
	}
	return nil
}

type fakeQueue map[string]bool

func (f fakeQueue) Has(_ context.Context, fps []frontier.Fingerprint) ([]bool, error) {
	out := make([]bool, len(fps))
	for i, fp := range fps {
		out[i] = f[string(fp)]
	}
	return out, nil
}

func TestCheckAccounting(t *testing.T) {
	pages := metadata.NewMemory()
	put := func(fp, url string, status int, errName string) {
		if err := pages.Put(t.Context(), []metadata.Page{{Fingerprint: frontier.Fingerprint(fp), URL: url, FirstSeen: 1, Status: status, Error: errName}}); err != nil {
			t.Fatal(err)
		}
	}
	put("c", "http://a/crawled", 200, "")
	put("e1", "http://a/dns", 0, "DNSLookupError")
	put("e2", "http://a/500", 500, "")
	put("e3", "http://a/noreason", 200, "")
	put("q2", "http://a/stranded", 0, "")
	for _, tc := range []struct {
		name     string
		states   fakeStates
		queue    fakeQueue
		inFlight []string
		pages    metadata.Store
		stranded []string // URLs (or fingerprints when unknown)
		errors   int
	}{
		{name: "all accounted", states: fakeStates{"c": frontier.Crawled, "e1": frontier.Error, "e2": frontier.Error, "q1": frontier.Queued, "n": frontier.NotCrawled},
			queue: fakeQueue{"q1": true}, pages: pages, errors: 2},
		{name: "queued without a row", states: fakeStates{"c": frontier.Crawled, "q2": frontier.Queued},
			queue: fakeQueue{}, pages: pages, stranded: []string{"http://a/stranded"}},
		{name: "queued in flight", states: fakeStates{"q2": frontier.Queued}, queue: fakeQueue{}, inFlight: []string{"q2"}, pages: pages},
		{name: "error without reason", states: fakeStates{"e3": frontier.Error, "e4": frontier.Error},
			queue: fakeQueue{}, pages: pages, stranded: []string{"", "http://a/noreason"}},
		{name: "no metadata: reasons not checked", states: fakeStates{"e3": frontier.Error}, queue: fakeQueue{}, errors: 1},
		{name: "invalid state", states: fakeStates{"x": frontier.State(9)}, queue: fakeQueue{}, pages: pages, stranded: []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inFlight []frontier.Fingerprint
			for _, f := range tc.inFlight {
				inFlight = append(inFlight, frontier.Fingerprint(f))
			}
			a, err := CheckAccounting(t.Context(), AccountingStores{States: tc.states, Queue: tc.queue, Pages: tc.pages, InFlight: inFlight})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range a.Stranded {
				got = append(got, s.URL)
			}
			if !slices.Equal(got, tc.stranded) {
				t.Errorf("stranded = %q, want %q (%v)", got, tc.stranded, a.Stranded)
			}
			if a.Errors != tc.errors {
				t.Errorf("errors = %d, want %d", a.Errors, tc.errors)
			}
			if a.Known != len(tc.states) || a.OK() != (len(tc.stranded) == 0) {
				t.Errorf("known %d of %d, OK %v: %s", a.Known, len(tc.states), a.OK(), a)
			}
		})
	}
}

// TestCheckAccountingChunks: more QUEUED URLs than one lookup holds are all checked.
func TestCheckAccountingChunks(t *testing.T) {
	states, q := fakeStates{}, fakeQueue{}
	for i := range 2*accountingChunk + 7 {
		fp := string(rune(0x100 + i))
		states[fp] = frontier.Queued
		q[fp] = i%500 != 0
	}
	a, err := CheckAccounting(t.Context(), AccountingStores{States: states, Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Stranded) != 5 || a.Queued != len(states)-5 {
		t.Fatalf("%s; want 5 stranded", a)
	}
}
