package hbase

import (
	"fmt"
	"testing"

	"github.com/frontiercrawl/frontier/metadata"
)

// A counter write is one round trip (a check-and-put) when this Domains wrote the row last, and stays exact
// when another writer (another process's Domains) moved the row in between: its check fails, it reads the row
// and puts again, and reads that row before each write from then on (two round trips, as without the cache).
func TestCounterWriteRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string // which Domains writes, in turn: "a" or "b"; each writes the next Seq of its own source
		trips  []int    // the round trips (gets + check-and-puts) each write costs
	}{
		{"one writer", []string{"a", "a", "a", "a"}, []int{2, 1, 1, 1}},
		// The first write after the other's fails its cached check (3); the row is then read first (2).
		{"two writers taking turns", []string{"a", "b", "a", "b", "a", "b"}, []int{2, 2, 3, 3, 2, 2}},
		{"a second writer once", []string{"a", "a", "b", "a", "a"}, []int{2, 1, 2, 3, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeHBase()
			c := newFakeClient(f, quickConfig())
			doms := map[string]*Domains{"a": c.Domains(), "b": c.Domains()}
			seq := map[string]int64{}
			var want int64
			for i, who := range tc.writes {
				before := f.calls["getMultiple"] + f.calls["checkAndMutate"]
				seq[who]++
				want += int64(i + 1)
				got, err := doms[who].AddOnce(t.Context(), "n", []metadata.Tally{{Domain: "a.com", Delta: int64(i + 1), Source: "p/" + who, Seq: seq[who]}})
				if err != nil {
					t.Fatal(err)
				}
				if got[0] != want {
					t.Errorf("write %d (%s) = %d, want %d", i, who, got[0], want)
				}
				if trips := f.calls["getMultiple"] + f.calls["checkAndMutate"] - before; trips != tc.trips[i] {
					t.Errorf("write %d (%s) cost %d round trips, want %d", i, who, trips, tc.trips[i])
				}
				// A replay of the same tally by the same writer counts nothing.
				if got, err := doms[who].AddOnce(t.Context(), "n", []metadata.Tally{{Domain: "a.com", Delta: int64(i + 1), Source: "p/" + who, Seq: seq[who]}}); err != nil || got[0] < want {
					t.Fatalf("replay of write %d = %v, %v", i, got, err)
				}
			}
			if got, err := c.Domains().Get(t.Context(), "n", []string{"a.com"}); err != nil || got[0] != want {
				t.Errorf("counter = %v, %v, want %d", got, err, want)
			}
		})
	}
}

// The cache of counter rows is bounded: past its size, rows are forgotten (and read again when written).
func TestCounterRowCacheBounded(t *testing.T) {
	c := rowCache{max: 3}
	for i := range 10 {
		c.put(fmt.Sprint(i), rowState{known: map[string]bool{"s": true}})
	}
	if len(c.rows) != 3 {
		t.Fatalf("%d rows cached, want the bound 3", len(c.rows))
	}
	if _, ok := c.get("9", []string{"s"}); !ok {
		t.Error("the row put last is not cached")
	}
	if _, ok := c.get("9", []string{"s", "other"}); ok {
		t.Error("a row is cached for a source it was never read for")
	}
}
