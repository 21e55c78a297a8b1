package urlfrontier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/google/go-cmp/cmp"

	"github.com/frontiercrawl/frontier/internal/keyfilter"
)

// TestSeenDifferential runs one random sequence of puts (discovered, known, feed), gets, purges, queue
// deletions and restarts on a store with the filter and one without (seen nil: every lookup asks Pebble),
// and wants the same answers from both.
func TestSeenDifferential(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 23))
			ctx := context.Background()
			type side struct {
				fs vfs.FS
				c  *clock
				s  *Store
			}
			var sides [2]*side
			for k := range sides {
				sd := &side{fs: vfs.NewMem(), c: &clock{t: time.Unix(1_800_000_000, 0)}}
				sd.s = openTest(t, sd.fs, sd.c)
				if k == 1 {
					sd.s.seen = nil
				}
				if err := sd.s.SetDelay(ctx, "", "", 0); err != nil {
					t.Fatal(err)
				}
				sides[k] = sd
			}
			defer func() {
				for _, sd := range sides {
					sd.s.Close()
				}
			}()
			u := func() string { return fmt.Sprintf("http://h%d.test/p%d", rng.IntN(5), rng.IntN(60)) }
			off := int64(0)
			for step := range 400 {
				switch op := rng.IntN(20); {
				case op < 12:
					puts := make([]Put, 1+rng.IntN(40))
					for i := range puts {
						switch rng.IntN(4) {
						case 0:
							puts[i] = known(u(), int64(rng.IntN(3))*1_800_000_100)
						case 1:
							off++
							puts[i] = Put{Info: URLInfo{URL: u()}, feed: &feedEntry{src: []byte{byte(off)}, part: int32(rng.IntN(2)), off: off - int64(rng.IntN(2))*off/2}}
						default:
							puts[i] = disc(u())
						}
					}
					var sts [2][]Status
					for k, sd := range sides {
						st, err := sd.s.Put(ctx, puts)
						if err != nil {
							t.Fatal(err)
						}
						sts[k] = st
					}
					if diff := cmp.Diff(sts[1], sts[0]); diff != "" {
						t.Fatalf("step %d: Put statuses (-no filter +filter):\n%s", step, diff)
					}
				case op < 15:
					var got [2][]string
					for k, sd := range sides {
						got[k] = get(t, sd.s, GetParams{MaxURLsPerQueue: 3, Lease: 10 * time.Second})
						sd.c.advance(4 * time.Second)
					}
					if !slices.Equal(got[0], got[1]) {
						t.Fatalf("step %d: Get %v with the filter, %v without", step, got[0], got[1])
					}
				case op < 17:
					key := fmt.Sprintf("h%d.test", rng.IntN(5))
					var n [2]uint64
					for k, sd := range sides {
						var err error
						if op == 15 {
							n[k], err = sd.s.DeleteQueue(ctx, "", key)
						} else {
							n[k], err = sd.s.PurgeURLs(ctx, ListParams{Key: key}, 0)
						}
						if err != nil {
							t.Fatal(err)
						}
					}
					if n[0] != n[1] {
						t.Fatalf("step %d: op %d removed %d with the filter, %d without", step, op, n[0], n[1])
					}
				case op < 18:
					for k, sd := range sides {
						if err := sd.s.Close(); err != nil {
							t.Fatal(err)
						}
						sd.s = openTest(t, sd.fs, sd.c)
						if k == 1 {
							sd.s.seen = nil
						}
					}
				default:
					var n [2]uint64
					for k, sd := range sides {
						var err error
						if n[k], err = sd.s.CountURLs(ctx, ListParams{}); err != nil {
							t.Fatal(err)
						}
					}
					if n[0] != n[1] {
						t.Fatalf("step %d: CountURLs %d with the filter, %d without", step, n[0], n[1])
					}
				}
			}
			for i := range 5 {
				for p := range 60 {
					url := fmt.Sprintf("http://h%d.test/p%d", i, p)
					a, errA := sides[0].s.URLStatus(ctx, "", "", url)
					b, errB := sides[1].s.URLStatus(ctx, "", "", url)
					if fmt.Sprint(errA) != fmt.Sprint(errB) || !cmp.Equal(a, b) {
						t.Fatalf("URLStatus(%s): %+v, %v with the filter; %+v, %v without", url, a, errA, b, errB)
					}
				}
			}
		})
	}
}

// TestSeenFilterBound: StoreConfig.SeenFilterBytes bounds the store's seen filter (the standalone sizes it
// from its memory limit); 0 keeps the default, seenMaxBytes.
func TestSeenFilterBound(t *testing.T) {
	oneLayer := int64(keyfilter.LayerBytes(seenFirstCap))
	for _, tc := range []struct {
		name     string
		maxBytes int64
		full     bool // after 2·seenFirstCap keys (a layer takes seenFirstCap, less its false positives)
	}{
		{name: "default", maxBytes: 0},
		{name: "room for two layers", maxBytes: 3 * oneLayer},
		{name: "one layer", maxBytes: oneLayer, full: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultStoreConfig()
			cfg.Dir, cfg.FS, cfg.Sync, cfg.SeenFilterBytes = "db", vfs.NewMem(), false, tc.maxBytes
			s, err := OpenStore(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for i := range 2 * seenFirstCap {
				s.seen.Add(fmt.Appendf(nil, "k%d", i))
			}
			if s.seen.Full() != tc.full {
				t.Errorf("after %d keys the filter is full: %v, want %v", 2*seenFirstCap, s.seen.Full(), tc.full)
			}
		})
	}
}
