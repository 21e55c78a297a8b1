package dbworker

import (
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
)

// A spider-log batch replayed after a crash before its commit, cut into other batches the second time, counts
// each event once: every event is a tally of its partition at its offset.
func TestCountExactAcrossReplays(t *testing.T) {
	d := metadata.NewMemoryDomains()
	now := time.Unix(6000, 0)
	w := &Worker{deps: Deps{Counters: d, Now: func() time.Time { return now }}}
	crawled := &frontier.PageCrawled{Response: &frontier.Response{Request: req("http://a.com/", "a.com"), Status: 200}}
	failed := &frontier.RequestError{Request: req("http://b.com/", "b.com"), Error: "DNSLookupError"}
	events := []frontier.Message{crawled, failed, crawled, crawled}
	at := []position{{0, 10}, {0, 11}, {1, 5}, {0, 12}}
	for _, tc := range []struct {
		name   string
		events []frontier.Message
		at     []position
	}{
		{"first two events", events[:2], at[:2]},
		{"replayed with the rest (a crash before the commit)", events, at},
		{"replayed again in two pieces", events[:3], at[:3]},
		{"last piece", events[3:], at[3:]},
	} {
		if err := w.count(t.Context(), tc.events, tc.at); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
	ctx := t.Context()
	for _, c := range []struct {
		name, row string
		want      int64
	}{{CounterCrawled, CounterRow, 3}, {CounterErrors, CounterRow, 1}, {CounterErrors, "b.com", 1}, {CounterPages, MinuteRow(100), 3}} {
		got, err := d.Get(ctx, c.name, []string{c.row})
		if err != nil || got[0] != c.want {
			t.Errorf("counter %s of %s = %v, %v, want %d", c.name, c.row, got, err, c.want)
		}
	}
}
