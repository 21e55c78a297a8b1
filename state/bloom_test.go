package state_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/state"
	"github.com/frontiercrawl/frontier/state/statetest"
)

func newBloom(t testing.TB, n uint64, p float64, log *slog.Logger) *state.Bloom {
	t.Helper()
	b, err := state.NewBloom(state.BloomConfig{Expected: n, FPRate: p}, log)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBloomFPRate fills filters to their design size and checks the measured false-positive rate against
// theory, (1 − e^(−kn/m))^k, within 10%. Millions of adds and tests in one goroutine (the probes must expect
// 2,000 false positives): under the race detector it took about a minute with nothing to detect, so it runs
// only without it (deploy/test.sh runs this package again without -race).
func TestBloomFPRate(t *testing.T) {
	if raceEnabled {
		t.Skip("millions of operations in one goroutine: run without -race (deploy/test.sh does)")
	}
	for _, tc := range []struct {
		n uint64
		p float64
	}{{200_000, 0.01}, {100_000, 0.05}, {50_000, 0.001}} {
		t.Run(fmt.Sprintf("n=%d,p=%v", tc.n, tc.p), func(t *testing.T) {
			b := newBloom(t, tc.n, tc.p, nil)
			for i := range int(tc.n) {
				b.Add(statetest.FP(i))
			}
			for i := range int(tc.n) { // no false negatives
				if !b.Test(statetest.FP(i)) {
					t.Fatalf("added fingerprint %d tests as new", i)
				}
			}
			probes := int(math.Max(500_000, 2000/tc.p)) // ≥ 2,000 expected false positives: ±2% noise
			fp := 0
			for i := range probes {
				if b.Test(statetest.FP(int(tc.n) + i)) {
					fp++
				}
			}
			got := float64(fp) / float64(probes)
			theory := b.ExpectedFPRate(tc.n)
			t.Logf("m=%d bits k=%d: measured %.5f, theory %.5f, target %v", b.Bits(), b.HashFuncs(), got, theory, tc.p)
			if math.Abs(got-theory) > 0.1*theory {
				t.Fatalf("measured false-positive rate %.5f, theory %.5f: more than 10%% apart", got, theory)
			}
			if theory > tc.p*1.05 {
				t.Fatalf("theoretical rate %.5f at design size above the target %v", theory, tc.p)
			}
		})
	}
}

func TestBloomSaveLoad(t *testing.T) {
	b := newBloom(t, 10_000, 0.01, nil)
	for i := range 5000 {
		b.Add(statetest.FP(i))
	}
	var buf bytes.Buffer
	n, err := b.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo = %d, %v; wrote %d", n, err, buf.Len())
	}
	c, err := state.ReadBloom(bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Config() != b.Config() || c.Count() != b.Count() || c.Bits() != b.Bits() || c.HashFuncs() != b.HashFuncs() {
		t.Fatalf("loaded %+v/%d, saved %+v/%d", c.Config(), c.Count(), b.Config(), b.Count())
	}
	for i := range 10_000 {
		if b.Test(statetest.FP(i)) != c.Test(statetest.FP(i)) {
			t.Fatalf("fingerprint %d tests differently after load", i)
		}
	}
	data := buf.Bytes()
	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"empty", "header", nil},
		{"magic", "magic", append([]byte("XXBLOOM1"), data[8:]...)},
		{"truncated", "bits", data[:len(data)/2]},
		{"no checksum", "checksum", data[:len(data)-4]},
		{"flipped bit", "checksum", flip(data, 100)},
		{"geometry", "geometry", flip(data, 8)},
	} {
		_, err := state.ReadBloom(bytes.NewReader(tc.data), -1, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ReadBloom(size unknown) = %v, want an error about %q", tc.name, err, tc.want)
		}
		if _, err := state.ReadBloom(bytes.NewReader(tc.data), int64(len(tc.data)), nil); err == nil {
			t.Errorf("%s: ReadBloom(size known): no error", tc.name)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 1
	return c
}

type recordHandler struct {
	mu   sync.Mutex
	msgs []string
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Level.String()+" "+r.Message)
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

func TestBloomWarnsPastDesign(t *testing.T) {
	h := &recordHandler{}
	b := newBloom(t, 1000, 0.01, slog.New(h))
	for i := range 1000 {
		b.Add(statetest.FP(i))
	}
	if len(h.msgs) != 0 {
		t.Fatalf("warned at the design size: %v", h.msgs)
	}
	for i := 1000; i < 1100; i++ {
		b.Add(statetest.FP(i))
	}
	if len(h.msgs) != 1 || !strings.HasPrefix(h.msgs[0], "WARN") || !strings.Contains(h.msgs[0], "design size") {
		t.Fatalf("past the design size: log %v, want one warning", h.msgs)
	}
}

func TestBloomConfigValidate(t *testing.T) {
	for _, c := range []state.BloomConfig{{Expected: 10, FPRate: 0}, {Expected: 10, FPRate: 0.9}, {Expected: 1 << 41, FPRate: 0.01}} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if err := (state.BloomConfig{}).Validate(); err != nil {
		t.Errorf("disabled filter: %v", err)
	}
}

func TestBloomStoreConformance(t *testing.T) {
	type pair struct {
		m *state.Memory
		b *state.Bloom
	}
	var mu sync.Mutex
	under := map[state.Store]pair{}
	statetest.Run(t, func(t *testing.T) state.Store {
		p := pair{state.NewMemory(), newBloom(t, 50_000, 0.01, nil)}
		s := state.NewBloomStore(p.m, p.b)
		mu.Lock()
		under[s] = p
		mu.Unlock()
		return s
	}, statetest.WithReopen(func(t *testing.T, s state.Store) state.Store {
		mu.Lock()
		p := under[s]
		mu.Unlock()
		var buf bytes.Buffer
		if _, err := p.b.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		b, err := state.ReadBloom(&buf, int64(buf.Len()), nil)
		if err != nil {
			t.Fatal(err)
		}
		s2 := state.NewBloomStore(p.m, b)
		mu.Lock()
		under[s2] = pair{p.m, b}
		mu.Unlock()
		return s2
	}))
}

func TestBloomStoreSkipsReads(t *testing.T) {
	ctx := t.Context()
	bs := state.NewBloomStore(state.NewMemory(), newBloom(t, 10_000, 0.01, nil))
	var fps []frontier.Fingerprint
	for i := range 1000 {
		fps = append(fps, statetest.FP(i))
	}
	if err := bs.Put(ctx, fps[:500], make([]state.Entry, 500)); err != nil {
		t.Fatal(err)
	}
	out, found := make([]state.Entry, 1000), make([]bool, 1000)
	if err := bs.Get(ctx, fps, out, found); err != nil {
		t.Fatal(err)
	}
	for i := range found {
		if found[i] != (i < 500) {
			t.Fatalf("fingerprint %d found=%v", i, found[i])
		}
	}
	if s := bs.Skipped.Load(); s < 480 || bs.Passed.Load() != 1000-s || bs.FalsePositives.Load() != 500-s {
		t.Fatalf("skipped %d, passed %d, false positives %d", s, bs.Passed.Load(), bs.FalsePositives.Load())
	}
}

func FuzzReadBloom(f *testing.F) {
	b, _ := state.NewBloom(state.BloomConfig{Expected: 100, FPRate: 0.1}, nil)
	b.Add(frontier.Fingerprint("x"))
	var buf bytes.Buffer
	b.WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte("FRBLOOM1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := state.ReadBloom(bytes.NewReader(data), -1, nil)
		if err != nil {
			if _, err := state.ReadBloom(bytes.NewReader(data), int64(len(data)), nil); err == nil {
				t.Fatal("loads with the size known but not without")
			}
			return
		}
		var out bytes.Buffer
		if _, err := b.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), data[:out.Len()]) {
			t.Fatal("a stream that loads does not save back to the same bytes")
		}
		b.Test(frontier.Fingerprint("y"))
	})
}

// TestBloomConcurrentGrowth: goroutines adding and testing at once while the filter adds layers (the bits set
// with atomic OR, a layer added under the mutex) lose no fingerprint: every one added tests as present after.
func TestBloomConcurrentGrowth(t *testing.T) {
	const workers, each = 4, 3_000
	b := newBloom(t, 1_000, 0.01, nil)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				fp := statetest.FP(w*each + i)
				b.Add(fp)
				if !b.Test(fp) {
					t.Errorf("fingerprint %d tests as new just after its Add", w*each+i)
					return
				}
				_ = b.Test(statetest.FP(workers*each + w*each + i)) // a reader of layers being added
			}
		})
	}
	wg.Wait()
	for i := range workers * each {
		if !b.Test(statetest.FP(i)) {
			t.Fatalf("fingerprint %d tests as new after the concurrent adds", i)
		}
	}
	if b.Layers() < 2 {
		t.Errorf("%d layers after %d adds to a filter for 1,000: it did not grow", b.Layers(), workers*each)
	}
}

// TestBloomGrowth fills filters past their first layer and their design: the layers grow in number, not the
// first layer in size; nothing added ever tests as new; the measured and theoretical false-positive rates
// stay under the configured bound; and a saved filter loads with the same layers and answers. Under the race
// detector only the two small cases run (one layer, and the growth to a second): the others are hundreds of
// thousands to millions of adds and tests in one goroutine, minutes of the unit stage with nothing to detect
// (deploy/test.sh runs this package again without -race, every case included); TestBloomConcurrentGrowth
// is the race detector's test of the growth.
func TestBloomGrowth(t *testing.T) {
	for _, tc := range []struct {
		expected, add uint64
		p             float64
		layers        int
	}{
		{expected: 10_000, add: 5_000, p: 0.01, layers: 1},
		{expected: 10_000, add: 11_000, p: 0.01, layers: 2}, // a layer is added when the newest is full
		{expected: 10_000, add: 35_000, p: 0.01, layers: 3},
		{expected: 10_000, add: 80_000, p: 0.05, layers: 4},
		{expected: 100_000_000, add: 1_500_000, p: 0.01, layers: 2}, // first layer 2^20, not 100 M
	} {
		t.Run(fmt.Sprintf("expected=%d,add=%d,p=%v", tc.expected, tc.add, tc.p), func(t *testing.T) {
			if raceEnabled && tc.add > 20_000 {
				t.Skip("a large single-goroutine case: run without -race (deploy/test.sh does)")
			}
			b := newBloom(t, tc.expected, tc.p, nil)
			first := b.Bits()
			if maxFirst := uint64(min(tc.expected, 1<<20)) * 12; first > maxFirst { // 11 bits per URL at 0.5%
				t.Fatalf("first layer %d bits, want <= %d", first, maxFirst)
			}
			for i := range int(tc.add) {
				b.Add(statetest.FP(i))
			}
			if b.Layers() != tc.layers {
				t.Errorf("%d layers after %d adds, want %d", b.Layers(), tc.add, tc.layers)
			}
			for i := range int(tc.add) {
				if !b.Test(statetest.FP(i)) {
					t.Fatalf("added fingerprint %d tests as new", i)
				}
			}
			if theory := b.ExpectedFPRate(tc.add); theory > tc.p {
				t.Errorf("theoretical rate %.5f above the bound %v", theory, tc.p)
			}
			probes, fp := 200_000, 0
			for i := range probes {
				if b.Test(statetest.FP(int(tc.add) + i)) {
					fp++
				}
			}
			if got := float64(fp) / float64(probes); got > tc.p*1.1 {
				t.Errorf("measured false-positive rate %.5f above the bound %v", got, tc.p)
			}
			var buf bytes.Buffer
			if _, err := b.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			c, err := state.ReadBloom(bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.Layers() != b.Layers() || c.Bits() != b.Bits() || c.Count() != b.Count() || c.Config() != b.Config() {
				t.Fatalf("loaded %d layers %d bits %d count %+v, saved %d %d %d %+v",
					c.Layers(), c.Bits(), c.Count(), c.Config(), b.Layers(), b.Bits(), b.Count(), b.Config())
			}
			for i := range int(tc.add) + 10_000 {
				if b.Test(statetest.FP(i)) != c.Test(statetest.FP(i)) {
					t.Fatalf("fingerprint %d tests differently after load", i)
				}
			}
			if _, err := state.ReadBloom(bytes.NewReader(buf.Bytes()[:buf.Len()-3]), int64(buf.Len()-3), nil); err == nil {
				t.Error("truncated multi-layer file loaded without error")
			}
			// The loaded filter keeps growing where the saved one stopped.
			for i := range 2 * int(tc.add) {
				c.Add(statetest.FP(int(tc.add) + i))
			}
			if c.Layers() <= b.Layers() && tc.add >= 1<<20 {
				t.Errorf("loaded filter did not grow: %d layers", c.Layers())
			}
		})
	}
}

// TestBloomMaxBytes: a cap (SetMaxBytes) stops the layers, never an answer: every fingerprint added still
// tests "maybe", the filter stays within the cap, one warning says so, and a larger cap lets it grow again.
func TestBloomMaxBytes(t *testing.T) {
	h := &recordHandler{}
	b := newBloom(t, 1000, 0.01, slog.New(h))
	first := b.Bits() / 8
	b.SetMaxBytes(int64(first) * 4) // room for the second layer (about 2.3×), not for the third
	if got := b.MaxBytes(); got != int64(first)*4 {
		t.Errorf("MaxBytes() = %d, want %d", got, first*4)
	}
	const n = 20_000 // past the capacities of four layers (1k, 2k, 4k, 8k)
	for i := range n {
		b.Add(statetest.FP(i))
	}
	if b.Layers() != 2 || !b.Full() {
		t.Fatalf("%d layers (full %v) after %d adds under a cap of %d bytes, want 2 and full", b.Layers(), b.Full(), n, first*4)
	}
	if got := b.Bits() / 8; got > first*4 {
		t.Errorf("filter %d bytes, past its cap %d", got, first*4)
	}
	for i := range n {
		if !b.Test(statetest.FP(i)) {
			t.Fatalf("added fingerprint %d tests as new under the cap", i)
		}
	}
	var capped int
	for _, m := range h.msgs {
		if strings.Contains(m, "memory cap") {
			capped++
		}
	}
	if capped != 1 {
		t.Errorf("%d warnings of the cap, want 1: %v", capped, h.msgs)
	}
	b.SetMaxBytes(0)
	for i := n; i < n+100; i++ {
		b.Add(statetest.FP(i))
	}
	if b.Layers() != 3 || b.Full() {
		t.Errorf("%d layers (full %v) once the cap is lifted, want 3 and not full", b.Layers(), b.Full())
	}
}
