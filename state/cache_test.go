package state_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/state"
	"github.com/frontiercrawl/frontier/state/statetest"
)

func newCache(t testing.TB, s state.Store, max, every int) *state.Cache {
	t.Helper()
	c, err := state.NewCache(s, state.CacheConfig{MaxEntries: max, FlushEvery: every})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCacheConformance(t *testing.T) {
	for _, size := range []struct{ max, every int }{{1_000_000, 15_000}, {300, 50}} {
		t.Run("", func(t *testing.T) {
			stores := map[state.Store]*state.Memory{}
			var mu sync.Mutex
			statetest.Run(t, func(t *testing.T) state.Store {
				m := state.NewMemory()
				c := newCache(t, m, size.max, size.every)
				mu.Lock()
				stores[c] = m
				mu.Unlock()
				return c
			}, statetest.WithReopen(func(t *testing.T, s state.Store) state.Store {
				if err := s.(*state.Cache).Flush(t.Context()); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				m := stores[s]
				mu.Unlock()
				c := newCache(t, m, size.max, size.every)
				mu.Lock()
				stores[c] = m
				mu.Unlock()
				return c
			}))
		})
	}
}

func TestCacheConfigValidate(t *testing.T) {
	if err := state.DefaultCacheConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	err := state.CacheConfig{MaxEntries: 1, FlushEvery: 5}.Validate()
	if err == nil || !containsAll(err.Error(), "max_entries", "flush_every") {
		t.Fatalf("Validate = %v, want both problems", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !contains(s, x) {
			return false
		}
	}
	return true
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestCacheModel checks a tiny cache (constant eviction) against a map, with random gets, puts and flushes.
func TestCacheModel(t *testing.T) {
	ctx := t.Context()
	store := state.NewMemory()
	c := newCache(t, store, 64, 16)
	model := map[int]state.Entry{}
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 20_000 {
		n := 1 + rng.IntN(20)
		ids := make([]int, n)
		fps := make([]frontier.Fingerprint, n)
		for i := range ids {
			ids[i] = rng.IntN(400)
			fps[i] = statetest.FP(ids[i])
		}
		switch rng.IntN(10) {
		case 0:
			if err := c.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		case 1, 2, 3, 4:
			es := make([]state.Entry, n)
			for i := range es {
				es[i] = state.Entry{State: frontier.State(rng.IntN(4)), RevisitAt: rng.Int64N(1 << 34)}
				model[ids[i]] = es[i]
			}
			if err := c.Put(ctx, fps, es); err != nil {
				t.Fatal(err)
			}
		default:
			out, found := make([]state.Entry, n), make([]bool, n)
			if err := c.Get(ctx, fps, out, found); err != nil {
				t.Fatal(err)
			}
			for i, id := range ids {
				want, ok := model[id]
				if found[i] != ok || out[i] != want {
					t.Fatalf("step %d: fingerprint %d = %v %+v, want %v %+v", step, id, found[i], out[i], ok, want)
				}
			}
		}
		if st := c.Stats(); st.Len > 64 {
			t.Fatalf("step %d: %d entries, over the bound 64", step, st.Len)
		}
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for id, want := range model { // everything reached the store
		out, found := make([]state.Entry, 1), make([]bool, 1)
		if err := store.Get(ctx, []frontier.Fingerprint{statetest.FP(id)}, out, found); err != nil || !found[0] || out[0] != want {
			t.Fatalf("store after flush: %d = %v %+v, want %+v", id, found[0], out[0], want)
		}
	}
	st := c.Stats()
	if st.Evictions == 0 || st.Hits == 0 || st.Misses == 0 || st.Flushes == 0 || st.Dirty != 0 {
		t.Fatalf("stats %+v: want evictions, hits, misses and flushes, nothing dirty", st)
	}
}

// failing is a Store whose Put fails while fail is set.
type failing struct {
	*state.Memory
	mu   sync.Mutex
	fail bool
}

func (f *failing) Put(ctx context.Context, fps []frontier.Fingerprint, es []state.Entry) error {
	f.mu.Lock()
	fail := f.fail
	f.mu.Unlock()
	if fail {
		return errors.New("store down")
	}
	return f.Memory.Put(ctx, fps, es)
}

func TestCacheNeverDropsDirty(t *testing.T) {
	ctx := t.Context()
	f := &failing{Memory: state.NewMemory(), fail: true}
	c := newCache(t, f, 10, 100-91) // flush every 9 of 10 slots
	var fps []frontier.Fingerprint
	var errs int
	for i := range 30 {
		fp := statetest.FP(i)
		if err := c.Put(ctx, []frontier.Fingerprint{fp}, []state.Entry{{State: frontier.Crawled, RevisitAt: int64(i)}}); err != nil {
			errs++
			continue
		}
		fps = append(fps, fp)
	}
	if errs == 0 {
		t.Fatal("a cache full of dirty entries over a failing store accepted everything")
	}
	// Everything accepted is still readable, from the cache.
	out, found := make([]state.Entry, len(fps)), make([]bool, len(fps))
	if err := c.Get(ctx, fps, out, found); err != nil {
		t.Fatal(err)
	}
	for i := range fps {
		if !found[i] || out[i].State != frontier.Crawled {
			t.Fatalf("accepted entry %d lost while the store was down: %v %+v", i, found[i], out[i])
		}
	}
	f.mu.Lock()
	f.fail = false
	f.mu.Unlock()
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// A Put whose triggered flush failed may have kept its entries (dirty) too: at least the accepted ones.
	if f.Len() < len(fps) || f.Len() > 10 {
		t.Fatalf("store holds %d entries after the flush, want the %d accepted (and at most the 10 cached)", f.Len(), len(fps))
	}
}

func TestCacheConcurrent(t *testing.T) {
	c := newCache(t, state.NewMemory(), 500, 100)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				fp := []frontier.Fingerprint{statetest.FP(w*10_000 + i%300)}
				if i%3 == 0 {
					if err := c.Put(context.Background(), fp, []state.Entry{{State: frontier.Queued, RevisitAt: int64(w)}}); err != nil {
						t.Error(err)
						return
					}
				} else {
					out, found := make([]state.Entry, 1), make([]bool, 1)
					if err := c.Get(context.Background(), fp, out, found); err != nil {
						t.Error(err)
						return
					}
					if found[0] && out[0].RevisitAt != int64(w) {
						t.Errorf("writer %d reads another writer's entry %+v", w, out[0])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

func TestCacheFootprint(t *testing.T) {
	c := newCache(t, state.NewMemory(), 10_000_000, 15_000)
	if per := float64(c.TableBytes()) / 10_000_000; per > 24 {
		t.Fatalf("table is %.2f B per entry at capacity, want <= 24", per)
	}
}

// TestCacheGrowth checks that the table starts small, grows with the entries held (staying at a load factor of
// at most 0.8 after each doubling), never passes its bound, and keeps every entry across the rehashes.
func TestCacheGrowth(t *testing.T) {
	const slot = 17
	for _, tc := range []struct {
		name        string
		max, insert int
		viaGet      bool // entries arrive as store reads (Get) rather than writes (Put)
	}{
		{"empty", 3_000_000, 0, false},
		{"few", 3_000_000, 1_000, false},
		{"one doubling", 3_000_000, 60_000, false},
		{"many doublings", 3_000_000, 400_000, false},
		{"many doublings via get", 3_000_000, 400_000, true},
		{"to the bound", 200_000, 200_000, false},
		{"past the bound", 200_000, 300_000, true},
		{"bound below the start size", 1_000, 5_000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			m := state.NewMemory()
			c := newCache(t, m, tc.max, min(15_000, tc.max-1))
			maxBytes := int(float64(tc.max)/0.8+1) * slot
			if got := c.TableBytes(); got > min(1<<16*slot, maxBytes) {
				t.Fatalf("table at start is %d B, want <= %d", got, min(1<<16*slot, maxBytes))
			}
			fps := make([]frontier.Fingerprint, tc.insert)
			for i := range fps {
				fps[i] = frontier.Fingerprint{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i), 0xA5}
			}
			es := make([]state.Entry, len(fps))
			for i := range es {
				es[i] = state.Entry{State: frontier.Queued, RevisitAt: int64(i)}
			}
			for lo := 0; lo < len(fps); lo += 1000 {
				hi := min(lo+1000, len(fps))
				if tc.viaGet {
					if err := m.Put(ctx, fps[lo:hi], es[lo:hi]); err != nil {
						t.Fatal(err)
					}
					if err := c.Get(ctx, fps[lo:hi], make([]state.Entry, hi-lo), make([]bool, hi-lo)); err != nil {
						t.Fatal(err)
					}
				} else if err := c.Put(ctx, fps[lo:hi], es[lo:hi]); err != nil {
					t.Fatal(err)
				}
			}
			st := c.Stats()
			if st.Len > tc.max {
				t.Fatalf("holds %d entries, bound %d", st.Len, tc.max)
			}
			got := c.TableBytes()
			if got > maxBytes {
				t.Fatalf("table is %d B, bound %d B", got, maxBytes)
			}
			// Grown no further than one doubling past what 0.8 load needs (or the start size).
			if need := max(1<<16, 2*int(float64(st.Len)/0.8+1)) * slot; got > need {
				t.Fatalf("table is %d B for %d entries, want <= %d", got, st.Len, need)
			}
			if st.Len == tc.max {
				if per := float64(got) / float64(tc.max); per > 24 {
					t.Fatalf("full table is %.2f B per entry, want <= 24", per)
				}
			}
			out, found := make([]state.Entry, len(fps)), make([]bool, len(fps))
			if err := c.Get(ctx, fps, out, found); err != nil {
				t.Fatal(err)
			}
			for i := range fps {
				if !found[i] || out[i] != es[i] {
					t.Fatalf("entry %d after growth: %+v found=%v, want %+v", i, out[i], found[i], es[i])
				}
			}
		})
	}
}
