package dbworker

import (
	"testing"

	"github.com/frontiercrawl/frontier"
)

// TestItemDueTime: a revisit's due time (meta frontier_not_before) becomes the queue item's NotBefore, so the
// queue holds the request until then; a request without one is due now.
func TestItemDueTime(t *testing.T) {
	r := start(t, DefaultConfig())
	for _, tc := range []struct {
		set  int64
		want int64
	}{{0, 0}, {2_000_000_000, 2_000_000_000}, {-5, 0}} {
		q := req("http://h.test/p", "h.test")
		if tc.set != 0 {
			q.Meta.Set(frontier.MetaKeyNotBefore, tc.set)
		}
		it, err := r.w.item(&frontier.UpdateScore{Request: q, Score: 0.5, Schedule: true})
		if err != nil {
			t.Fatal(err)
		}
		if it.NotBefore != tc.want {
			t.Errorf("not_before %d: item due %d, want %d", tc.set, it.NotBefore, tc.want)
		}
	}
}
