package keyfilter

import (
	"fmt"
	"sync"
	"testing"
)

// TestFilter: every key added is held (no false negative) while the filter has room, across its growth into
// layers; past its bound it is full and holds every key; keys never added are mostly not held.
func TestFilter(t *testing.T) {
	for _, tc := range []struct {
		name               string
		firstCap, maxBytes int
		keys               int
		full               bool
		layers             int
	}{
		{name: "empty", firstCap: 64, maxBytes: 1 << 20, keys: 0, layers: 1},
		{name: "one layer", firstCap: 64, maxBytes: 1 << 20, keys: 64, layers: 1},
		{name: "two layers", firstCap: 64, maxBytes: 1 << 20, keys: 65, layers: 2},
		{name: "grows", firstCap: 64, maxBytes: 1 << 20, keys: 1000, layers: 5},
		{name: "fills", firstCap: 64, maxBytes: 3 * 128, keys: 1000, full: true},
		{name: "large", firstCap: 1 << 15, maxBytes: 16 << 20, keys: 90_000, layers: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := New(tc.firstCap, tc.maxBytes)
			key := func(i int) []byte { return fmt.Appendf(nil, "http://h%d.test/p%d", i%1000, i) }
			for i := range tc.keys {
				f.Add(key(i))
				f.Add(key(i / 2)) // again: takes no room
				if !f.MayContain(key(i)) {
					t.Fatalf("key %d not held right after its add", i)
				}
			}
			if f.Full() != tc.full {
				t.Fatalf("full = %v, want %v", f.Full(), tc.full)
			}
			if !tc.full && f.Layers() != tc.layers {
				t.Fatalf("%d layers, want %d", f.Layers(), tc.layers)
			}
			for i := range tc.keys {
				if !f.MayContain(key(i)) {
					t.Fatalf("key %d of %d not held", i, tc.keys)
				}
			}
			fp := 0
			for i := tc.keys; i < tc.keys+10_000; i++ {
				if f.MayContain(key(i)) {
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
	var f *Filter
	f.Add([]byte("u"))
	if !f.MayContain([]byte("u")) || !f.MayContain([]byte("v")) || !f.Full() {
		t.Fatal("a nil filter must hold every key")
	}
}

// TestFilterFull: a filter that reaches its bound stops growing, frees its layers, and from then on holds
// every key, those it recorded and those it could not.
func TestFilterFull(t *testing.T) {
	const first = 1 << 12
	// Room for the first layer and the second, not a third.
	f := New(first, LayerBytes(first)+LayerBytes(2*first))
	key := func(i int) []byte { return fmt.Appendf(nil, "http://h%d.test/p%d", i%100, i) }
	n, most := 0, 0
	for ; !f.Full(); n++ {
		if n > 10*first {
			t.Fatal("the filter never filled")
		}
		most = max(most, f.Layers())
		f.Add(key(n))
	}
	if most != 2 {
		t.Fatalf("%d layers at the bound, want 2", most)
	}
	if n <= 3*first {
		t.Fatalf("full after %d keys, before both layers took theirs", n)
	}
	if f.Layers() != 0 {
		t.Fatalf("a full filter keeps %d layers, want them freed", f.Layers())
	}
	for i := range n + 1000 {
		if !f.MayContain(key(i)) {
			t.Fatalf("key %d reported absent by a full filter", i)
		}
	}
}

// TestFilterConcurrent: readers beside a writer never miss a key whose Add returned, also while the filter
// grows and fills (run with -race).
func TestFilterConcurrent(t *testing.T) {
	const first = 256
	f := New(first, LayerBytes(first)+LayerBytes(2*first)+LayerBytes(4*first))
	key := func(i int) []byte { return fmt.Appendf(nil, "k%d", i) }
	var added sync.WaitGroup
	done := make(chan int, 1)
	added.Add(1)
	go func() {
		defer added.Done()
		n := 0
		for ; !f.Full(); n++ {
			f.Add(key(n))
		}
		done <- n
	}()
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := r; i < 20*first; i += 2 {
				_ = f.MayContain(key(i))
			}
		}()
	}
	added.Wait()
	wg.Wait()
	n := <-done
	for i := range n {
		if !f.MayContain(key(i)) {
			t.Fatalf("key %d of %d not held", i, n)
		}
	}
}
