package pebblestore

import (
	"fmt"
	"testing"
)

// TestPageFilter: every key added is held (no false negative) while the filter has room; past its bound it is
// full and holds every key; keys never added are mostly not held.
func TestPageFilter(t *testing.T) {
	for _, tc := range []struct {
		name               string
		firstCap, maxBytes int
		keys               int
		full               bool
		layers             int
	}{
		{name: "one layer", firstCap: 64, maxBytes: 1 << 20, keys: 64, layers: 1},
		{name: "grows", firstCap: 64, maxBytes: 1 << 20, keys: 1000, layers: 5},
		{name: "fills", firstCap: 64, maxBytes: 3 * 128, keys: 1000, full: true},
		{name: "default", firstCap: pageFilterFirstCap, maxBytes: pageFilterMaxBytes, keys: 90_000, layers: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newPageFilter(tc.firstCap, tc.maxBytes)
			key := func(i int) []byte { return fmt.Appendf([]byte{pfxPage}, "page-%d", i) }
			for i := range tc.keys {
				f.add(key(i))
				if !f.mayContain(key(i)) {
					t.Fatalf("key %d not held right after its add", i)
				}
			}
			if f.full != tc.full {
				t.Fatalf("full = %v, want %v", f.full, tc.full)
			}
			if !tc.full && len(f.layers) != tc.layers {
				t.Fatalf("%d layers, want %d", len(f.layers), tc.layers)
			}
			for i := range tc.keys {
				if !f.mayContain(key(i)) {
					t.Fatalf("key %d of %d not held", i, tc.keys)
				}
			}
			fp := 0
			for i := tc.keys; i < tc.keys+10_000; i++ {
				if f.mayContain(key(i)) {
					fp++
				}
			}
			if tc.full && fp != 10_000 {
				t.Fatalf("a full filter holds %d of 10,000 keys never added, want all", fp)
			}
			if !tc.full && fp > 500 { // 10 bits a key, 7 probes: about 1% per layer
				t.Fatalf("%d of 10,000 keys never added held, want about 1%% a layer", fp)
			}
		})
	}
}

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
