package pebblestore

import (
	"fmt"
	"testing"
)

// TestPageCache: records put are got back; a generation past half the bound becomes the older; one found in
// the older moves to the current; drop forgets.
func TestPageCache(t *testing.T) {
	rec := func(i int) []byte { return fmt.Appendf(nil, "record-%03d", i) } // 10 bytes
	key := func(i int) string { return fmt.Sprintf("k%03d", i) }            // 4 bytes
	entry := 4 + 10 + pageCacheEntry
	for _, tc := range []struct {
		name    string
		puts    int
		max     int
		getBack []int // keys held at the end
		gone    []int // keys not held
	}{
		{name: "room for all", puts: 10, max: 20 * entry, getBack: []int{0, 5, 9}},
		{name: "one turn", puts: 10, max: 16 * entry, getBack: []int{0, 7, 9}},                 // prev 0..7, cur 8..9
		{name: "two turns", puts: 10, max: 8 * entry, getBack: []int{4, 9}, gone: []int{0, 3}}, // prev 4..7, cur 8..9
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pageCache{max: tc.max}
			for i := range tc.puts {
				c.put(key(i), rec(i))
			}
			for _, i := range tc.gone {
				if _, ok := c.get([]byte(key(i))); ok {
					t.Fatalf("key %d held, want dropped", i)
				}
			}
			for _, i := range tc.getBack {
				got, ok := c.get([]byte(key(i)))
				if !ok || string(got) != string(rec(i)) {
					t.Fatalf("key %d: %q, %v; want %q", i, got, ok, rec(i))
				}
				if _, ok := c.cur[key(i)]; !ok {
					t.Fatalf("key %d got but not in the current generation", i)
				}
			}
			c.drop([]knownPage{{key: key(tc.puts - 1)}})
			if _, ok := c.get([]byte(key(tc.puts - 1))); ok {
				t.Fatal("dropped key still held")
			}
		})
	}
}
