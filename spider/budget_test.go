package spider

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/spider/links"
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

// largeHTML is an HTML page of about size bytes with links at its start, middle and end.
func largeHTML(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`<html><head><title>t</title></head><body><a href="/first">first</a>` + "\n")
	for i := 0; b.Len() < size-100; i++ {
		if i%500 == 0 {
			fmt.Fprintf(&b, `<p><a href="/p%d">page %d</a></p>`+"\n", i, i)
			continue
		}
		b.WriteString("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n")
	}
	b.WriteString(`<a href="http://other.test/last">last</a></body></html>` + "\n")
	return b.Bytes()
}

// TestStreamedBody: with nothing reading bodies after the fetch (stream mode), a body past the spill
// threshold is parsed and digested as it arrives and not kept, and gives the links, digest and truncation
// that the spilled body read back gives.
func TestStreamedBody(t *testing.T) {
	page := largeHTML(300 << 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/text":
			w.Header().Set("Content-Type", "text/plain")
		case "/missing":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		_, _ = w.Write(page)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name       string
		path       string
		max, spill int64
		streamed   bool // not kept: links and digest computed on the way
		links      bool
	}{
		{"small, in memory", "/page", 1 << 20, 1 << 20, false, true},
		{"large, streamed", "/page", 1 << 20, 16 << 10, true, true},
		{"large, streamed, truncated", "/page", 100 << 10, 16 << 10, true, true},
		{"large, truncated below the threshold", "/page", 8 << 10, 16 << 10, false, true},
		{"large text, streamed", "/text", 1 << 20, 16 << 10, true, false},
		{"large 404, streamed", "/missing", 1 << 20, 16 << 10, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.MaxBodyBytes, cfg.SpillBytes, cfg.BodyBudgetBytes = tc.max, tc.spill, 4<<20
			f := newFetcher(cfg, http.DefaultTransport, false)
			f.budget, f.spillDir, f.streamLarge = newByteBudget(cfg.BodyBudgetBytes), t.TempDir(), true
			u := mustParse(t, srv.URL+tc.path)
			out, err := f.fetch(t.Context(), reqFor(u.String()), u, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer out.releaseBody()
			if err := out.loadBody(t.Context()); err != nil {
				t.Fatal(err)
			}
			want := page[:min(int64(len(page)), tc.max)]
			if out.Truncated != (int64(len(page)) > tc.max) {
				t.Errorf("truncated %v, want %v", out.Truncated, !out.Truncated)
			}
			if got := out.contentDigest(); got != bodyDigest(want) {
				t.Errorf("digest %s, want %s", got, bodyDigest(want))
			}
			if f.budget.spills.Load() != 0 {
				t.Errorf("%d spills, want none in stream mode", f.budget.spills.Load())
			}
			if tc.streamed && f.budget.inUse() != 0 {
				t.Errorf("streamed: %d bytes still reserved, want none (the reservation ends when streaming starts)", f.budget.inUse())
			}
			if tc.streamed {
				if out.Body != nil || out.linksDone != tc.links {
					t.Errorf("streamed: body of %d bytes kept, links extracted %v; want none kept, %v", len(out.Body), out.linksDone, tc.links)
				}
			} else if !bytes.Equal(out.Body, want) || out.linksDone {
				t.Errorf("in memory: body %d bytes, links extracted %v; want %d, false", len(out.Body), out.linksDone, len(want))
			}
			if tc.links {
				got := out.Links
				if !out.linksDone {
					got = links.Extract(u, out.Body, links.Options{MaxLinks: cfg.MaxLinksPerPage})
				}
				wantLinks := links.Extract(u, want, links.Options{MaxLinks: cfg.MaxLinksPerPage})
				if len(wantLinks) < 2 || !reflect.DeepEqual(got, wantLinks) {
					t.Errorf("links: %d, want %d (%v)", len(got), len(wantLinks), got)
				}
			}
			out.releaseBody()
			if f.budget.inUse() != 0 {
				t.Errorf("%d bytes still reserved after release", f.budget.inUse())
			}
		})
	}
}

// BenchmarkLargeBody is what a large HTML body costs from the response to its links and digest: spilled
// past the threshold, read back and parsed (a handler reads bodies), or parsed and digested as it streams in
// (nothing reads bodies: stream mode); and a small body, read into memory.
//
//	go test -run XXX -bench BenchmarkLargeBody -benchtime 20x ./spider/
func BenchmarkLargeBody(b *testing.B) {
	u, _ := url.Parse("http://h.test/big")
	for _, bc := range []struct {
		size   int
		stream bool
	}{{8 << 10, false}, {8 << 20, false}, {8 << 20, true}} {
		page, stream := largeHTML(bc.size), bc.stream
		b.Run(fmt.Sprintf("body=%dKiB/%s", bc.size>>10, map[bool]string{false: "spill+load", true: "stream"}[stream]), func(b *testing.B) {
			b.ReportAllocs()
			cfg := DefaultConfig()
			f := newFetcher(cfg, http.DefaultTransport, false)
			f.budget, f.spillDir, f.streamLarge = newByteBudget(cfg.BodyBudgetBytes), b.TempDir(), stream
			b.SetBytes(int64(len(page)))
			nLinks := 0
			for b.Loop() {
				resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/html"}},
					Body: io.NopCloser(bytes.NewReader(page))}
				out := &Fetched{URL: u.String()}
				if _, err := f.readBody(b.Context(), resp, out); err != nil {
					b.Fatal(err)
				}
				if err := out.loadBody(b.Context()); err != nil {
					b.Fatal(err)
				}
				if !out.linksDone {
					out.Links = links.Extract(u, out.Body, links.Options{MaxLinks: cfg.MaxLinksPerPage})
				}
				_ = out.contentDigest()
				nLinks += len(out.Links)
				out.releaseBody()
			}
			b.ReportMetric(float64(nLinks)/float64(b.N), "links/op")
			b.ReportMetric(float64(f.budget.spills.Load())/float64(b.N), "spills/op")
		})
	}
}

// TestBodyBudgetPerProcess: a spider without Deps.BodyBudget has a budget of its own (Config.BodyBudgetBytes,
// 0 meaning DefaultBodyBudgetBytes); spiders given one BodyBudget share it, so the process's bodies are
// bounded once (the standalone's spiders).
func TestBodyBudgetPerProcess(t *testing.T) {
	h := newHarness(t, nil, nil)
	shared := NewBodyBudget(3 << 20)
	for _, tc := range []struct {
		name   string
		cfg    int64
		shared *BodyBudget
		want   int64
	}{
		{"default", 0, nil, DefaultBodyBudgetBytes},
		{"configured", 5 << 20, nil, 5 << 20},
		{"shared wins over the configuration", 5 << 20, shared, 3 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.BodyBudgetBytes = tc.cfg
			var got [2]*byteBudget
			for i := range got {
				deps := h.deps
				deps.Feed, deps.BodyBudget = h.feed.consumer(), tc.shared
				deps.Registerer = prometheus.NewRegistry()
				if i > 0 {
					deps.Registerer = nil // one registers the shared budget's metrics
				}
				s, err := New(cfg, deps)
				if err != nil {
					t.Fatal(err)
				}
				got[i] = s.fetcher.budget
			}
			if got[0].max != tc.want || got[1].max != tc.want {
				t.Errorf("budgets of %d and %d bytes, want %d", got[0].max, got[1].max, tc.want)
			}
			if same := got[0] == got[1]; same != (tc.shared != nil) {
				t.Errorf("the two spiders share one budget: %v, want %v", same, tc.shared != nil)
			}
		})
	}
	if shared.Bytes() != 3<<20 || shared.InUse() != 0 || shared.HighWater() != 0 {
		t.Errorf("shared budget: %d bytes, %d in use, high-water %d", shared.Bytes(), shared.InUse(), shared.HighWater())
	}
}
