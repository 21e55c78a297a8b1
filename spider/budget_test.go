package spider

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	frontier "github.com/frontiercrawl/frontier"
)

func TestByteBudget(t *testing.T) {
	b := newByteBudget(100)
	if !b.tryAcquire(60) || b.tryAcquire(50) {
		t.Fatal("tryAcquire: 60 then 50 of 100 should give yes then no")
	}
	got, err := b.acquire(t.Context(), 40)
	if err != nil || got != 40 {
		t.Fatalf("acquire(40) = %d, %v", got, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := b.acquire(ctx, 1); err == nil {
		t.Fatal("acquire on a full budget with a cancelled context returned no error")
	}
	done := make(chan int64)
	go func() {
		n, _ := b.acquire(t.Context(), 500) // more than the whole budget: clamped, waits for all of it
		done <- n
	}()
	b.release(60)
	b.release(40)
	if n := <-done; n != 100 {
		t.Fatalf("acquire(500) on a budget of 100 reserved %d, want 100", n)
	}
	b.release(100)
	if b.inUse() != 0 || b.highWater() != 100 {
		t.Fatalf("in use %d, high-water %d; want 0 and 100", b.inUse(), b.highWater())
	}
}

// TestBodyBudgetBoundsManyLargeBodies fetches many large pages at once (each server handler waits until
// every request has arrived before sending the rest of its body, so all bodies are in flight together) and
// checks, in bytes, that the memory held for bodies never exceeded the budget, that the large bodies were
// spilled, and that the handler still saw every body whole.
func TestBodyBudgetBoundsManyLargeBodies(t *testing.T) {
	const (
		hosts    = 32
		bodySize = 1 << 20
		budget   = 2 << 20
	)
	var arrived atomic.Int32
	all := make(chan struct{})
	var once sync.Once
	chunk := bytes.Repeat([]byte("<p>0123456789abcdef</p>\n"), 1<<10) // 24 KiB of HTML
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/sized" {
			w.Header().Set("Content-Length", fmt.Sprint(bodySize))
		}
		if arrived.Add(1) == hosts {
			once.Do(func() { close(all) })
		}
		sent := 0
		for sent < bodySize {
			if sent >= 128<<10 {
				select { // the rest only once every body is in flight
				case <-all:
				case <-r.Context().Done():
					return
				}
			}
			n := min(len(chunk), bodySize-sent)
			if _, err := w.Write(chunk[:n]); err != nil {
				return
			}
			sent += n
		}
	}))
	defer srv.Close()
	var urls []string
	for i := range hosts - 1 {
		urls = append(urls, fmt.Sprintf("http://h%d.test/page", i))
	}
	urls = append(urls, "http://sized.test/sized")
	h := newHarness(t, nil, urls)
	addr := srv.Listener.Addr().String()
	h.deps.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	cfg := testConfig(t)
	cfg.Delay = 0
	cfg.RequestTimeout = time.Minute
	cfg.MaxBodyBytes = bodySize
	cfg.BodyBudgetBytes, cfg.SpillBytes = budget, 64<<10
	deps := h.deps
	deps.Feed = h.feed.consumer()
	s, err := New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	got := h.waitOutcomes(urls)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b := s.fetcher.budget
	t.Logf("budget %d bytes: high-water %d, in use at the end %d, spills %d (%d bodies of %d bytes at once)",
		budget, b.highWater(), b.inUse(), b.spills.Load(), hosts, bodySize)
	if b.highWater() > budget {
		t.Errorf("body bytes in memory reached %d, over the budget of %d", b.highWater(), budget)
	}
	if b.inUse() != 0 {
		t.Errorf("%d body bytes still reserved after every outcome was reported", b.inUse())
	}
	if b.spills.Load() < hosts/2 {
		t.Errorf("%d spills, want most of the %d large bodies spilled", b.spills.Load(), hosts)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, u := range urls {
		if _, ok := got[u]; !ok {
			t.Errorf("%s: no outcome", u)
		}
		if n := h.bodies[u]; n != bodySize {
			t.Errorf("%s: handler saw %d body bytes, want %d", u, n, bodySize)
		}
	}
	if ents, err := os.ReadDir(spillDir(cfg.StateDir)); err != nil || len(ents) != 0 {
		t.Errorf("spill directory holds %d files (%v), want none", len(ents), err)
	}
}

// TestSpilledBodyTruncated: a spilled body longer than MaxBodyBytes is cut there, as an in-memory one is.
func TestSpilledBodyTruncated(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 300<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name       string
		max, spill int64
		truncated  bool
	}{
		{"in memory", 1 << 20, 1 << 20, false},
		{"spilled", 1 << 20, 16 << 10, false},
		{"spilled, truncated", 100 << 10, 16 << 10, true},
		{"in memory, truncated", 100 << 10, 1 << 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.MaxBodyBytes, cfg.SpillBytes, cfg.BodyBudgetBytes = tc.max, tc.spill, 4<<20
			f := newFetcher(cfg, http.DefaultTransport, false)
			f.budget, f.spillDir = newByteBudget(cfg.BodyBudgetBytes), t.TempDir()
			u := mustParse(t, srv.URL+"/b")
			out, err := f.fetch(t.Context(), reqFor(u.String()), u, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer out.releaseBody()
			if err := out.loadBody(t.Context()); err != nil {
				t.Fatal(err)
			}
			want := min(int64(len(body)), tc.max)
			if int64(len(out.Body)) != want || out.Truncated != tc.truncated || !bytes.Equal(out.Body, body[:want]) {
				t.Errorf("body %d bytes, truncated %v; want %d, %v", len(out.Body), out.Truncated, want, tc.truncated)
			}
			if out.ContentType != "text/plain" {
				t.Errorf("content type %q", out.ContentType)
			}
			out.releaseBody()
			if f.budget.inUse() != 0 {
				t.Errorf("%d bytes still reserved after release", f.budget.inUse())
			}
		})
	}
}

// BenchmarkBodyBuffer reads bodies through the budget: small ones stay in memory, large ones spill.
func BenchmarkBodyBuffer(b *testing.B) {
	for _, size := range []int{8 << 10, 256 << 10, 4 << 20} {
		b.Run(fmt.Sprintf("body=%dKiB", size>>10), func(b *testing.B) {
			budget := newByteBudget(64 << 20)
			dir := b.TempDir()
			src := bytes.Repeat([]byte("a"), size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				w := &bodyBuffer{ctx: context.Background(), budget: budget, threshold: 64 << 10, dir: dir}
				for off := 0; off < size; off += 32 << 10 {
					if _, err := w.Write(src[off:min(size, off+32<<10)]); err != nil {
						b.Fatal(err)
					}
				}
				var out Fetched
				w.finish(&out)
				if err := out.loadBody(context.Background()); err != nil {
					b.Fatal(err)
				}
				out.releaseBody()
			}
			b.ReportMetric(float64(budget.spills.Load())/float64(b.N), "spills/op")
			b.ReportMetric(float64(budget.highWater()), "high-water-bytes")
		})
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func reqFor(u string) *frontier.Request { return &frontier.Request{URL: u} }
