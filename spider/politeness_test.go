package spider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/frontiercrawl/frontier/internal/cputime"
	"time"
)

// TestPolitenessPerIP: 20 host names on one loopback address are, together, never fetched closer than the
// delay: the gaps between the starts of consecutive requests, as the server recorded them, are all at least
// the delay. A name that fails to resolve is still fetched (gated by its name).
func TestPolitenessPerIP(t *testing.T) {
	var mu sync.Mutex
	type rec struct {
		at   time.Time
		host string
	}
	var log []rec
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		log = append(log, rec{time.Now(), r.Host})
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>page</body></html>")
	}))
	defer srv.Close()
	var urls []string
	for i := 1; i <= 20; i++ {
		for _, p := range []string{"/a", "/b"} {
			urls = append(urls, fmt.Sprintf("http://name%d.test%s", i, p))
		}
	}
	urls = append(urls, "http://unresolved.test/a")
	var lookups atomic.Int64
	h := newHarness(t, nil, urls)
	h.deps.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}
	h.deps.Resolver = func(_ context.Context, _, host string) ([]netip.Addr, error) {
		lookups.Add(1)
		if host == "unresolved.test" {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return []netip.Addr{netip.MustParseAddr("::1"), netip.MustParseAddr("127.0.0.1")}, nil
	}
	cfg := testConfig(t)
	cfg.Delay = 20 * time.Millisecond
	stop := h.start(cfg)
	got := h.waitOutcomes(urls)
	stop()
	for _, u := range urls {
		if _, ok := got[u]; !ok {
			t.Errorf("%s: no outcome", u)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	slices.SortFunc(log, func(a, b rec) int { return a.at.Compare(b.at) })
	hosts := map[string]bool{}
	minGap := time.Duration(-1)
	for i, r := range log {
		hosts[r.host] = true
		if i == 0 || r.host == "unresolved.test" || log[i-1].host == "unresolved.test" {
			continue
		}
		gap := r.at.Sub(log[i-1].at)
		if minGap < 0 || gap < minGap {
			minGap = gap
		}
		if gap < cfg.Delay {
			t.Errorf("request %d (%s) started %v after request %d (%s), want >= %v", i, r.host, gap, i-1, log[i-1].host, cfg.Delay)
		}
	}
	t.Logf("%d requests to 21 names on one address in %v; smallest gap between consecutive starts %v (delay %v)",
		len(log), log[len(log)-1].at.Sub(log[0].at), minGap, cfg.Delay)
	if want := 21 + len(urls); len(hosts) != 21 || len(log) != want { // robots.txt and the pages
		t.Errorf("%d requests to %d hosts, want %d to 21", len(log), len(hosts), want)
	}
	if n := lookups.Load(); n != 21 {
		t.Errorf("%d lookups, want one per name (21)", n)
	}
}

// TestDNSCache: answers are cached for the TTL and failures for the error TTL (reported once each time), one
// lookup at a time per name, IP literals need none, and the cache is bounded.
func TestDNSCache(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	var calls atomic.Int64
	fail := map[string]bool{"bad.test": true}
	var reported []string
	c := newDNSCache(2, time.Minute, 10*time.Second, func(_ context.Context, _, host string) ([]netip.Addr, error) {
		calls.Add(1)
		if fail[host] {
			return nil, errors.New("SERVFAIL")
		}
		return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
	}, func(host string, err error) { reported = append(reported, host+": "+err.Error()) })
	c.now = func() time.Time { return now }
	ctx := t.Context()
	if ip := c.lookup(ctx, "a.test"); ip != "10.0.0.1" || c.lookup(ctx, "a.test") != ip || calls.Load() != 1 {
		t.Fatalf("a.test: %q after %d calls, want 10.0.0.1 after 1", ip, calls.Load())
	}
	if c.lookup(ctx, "bad.test") != "" || c.lookup(ctx, "bad.test") != "" || calls.Load() != 2 || len(reported) != 1 || reported[0] != "bad.test: SERVFAIL" {
		t.Fatalf("bad.test: %d calls, reported %v", calls.Load(), reported)
	}
	now = now.Add(11 * time.Second) // the failure expired, the answer not
	c.lookup(ctx, "bad.test")
	c.lookup(ctx, "a.test")
	if calls.Load() != 3 || len(reported) != 2 {
		t.Errorf("after 11 s: %d calls (want 3), reported %v", calls.Load(), reported)
	}
	now = now.Add(time.Minute)
	c.lookup(ctx, "a.test")
	if calls.Load() != 4 {
		t.Errorf("after the TTL: %d calls, want 4", calls.Load())
	}
	if ip := c.lookup(ctx, "192.0.2.7"); ip != "192.0.2.7" || calls.Load() != 4 || c.peek("[::1]") != "" && c.peek("::1") != "::1" {
		t.Errorf("IP literal: %q, %d calls", ip, calls.Load())
	}
	c.lookup(ctx, "b.test")
	c.lookup(ctx, "c.test")
	if c.lru.Len() > 2 {
		t.Errorf("%d names cached, want at most 2", c.lru.Len())
	}
	// Concurrent lookups of one name wait for one answer.
	calls.Store(0)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); c.lookup(ctx, "d.test") }()
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("8 concurrent lookups of one name: %d calls, want 1", n)
	}
}

// TestIPLiteral: ipLiteral is netip.ParseAddr(host).Unmap().String() for every host, and an IPv4 host is
// returned as it is.
func TestIPLiteral(t *testing.T) {
	hosts := []string{"127.0.0.1", "0.0.0.0", "255.255.255.255", "10.1.2.3", "::1", "::ffff:1.2.3.4", "::ffff:7f00:1",
		"fe80::1%en0", "2001:DB8::1", "127.0.0.01", "127.1", "1.2.3.256", "example.com", "", "1.2.3.4.", " 1.2.3.4"}
	for i := range 2000 {
		hosts = append(hosts, fmt.Sprintf("%d.%d.%d.%d", i%256, i*7%300, i*13%260, i%3))
	}
	for _, h := range hosts {
		want, wantOK := "", false
		if a, err := netip.ParseAddr(h); err == nil {
			want, wantOK = a.Unmap().String(), true
		}
		if got, ok := ipLiteral(h); got != want || ok != wantOK {
			t.Errorf("ipLiteral(%q) = %q, %v; want %q, %v", h, got, ok, want, wantOK)
		}
	}
}

func FuzzIPLiteral(f *testing.F) {
	for _, h := range []string{"127.0.0.1", "::ffff:1.2.3.4", "1.2.3.04", "fe80::1%en0"} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, h string) {
		want, wantOK := "", false
		if a, err := netip.ParseAddr(h); err == nil {
			want, wantOK = a.Unmap().String(), true
		}
		if got, ok := ipLiteral(h); got != want || ok != wantOK {
			t.Errorf("ipLiteral(%q) = %q, %v; want %q, %v", h, got, ok, want, wantOK)
		}
	})
}

// BenchmarkCachedIPOf is dnsCache.peek of a host named by its IPv4 address, as releaseIP asks it on every answer:
// the address printed again (old) against the host returned (new).
func BenchmarkCachedIPOf(b *testing.B) {
	c := newDNSCache(16, time.Minute, time.Second, nil, nil)
	for _, impl := range []string{"old", "new"} {
		b.Run(impl, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cputime.Process()
			for b.Loop() {
				if impl == "old" {
					a, _ := netip.ParseAddr("127.0.0.17")
					_ = a.Unmap().String()
					continue
				}
				_ = c.peek("127.0.0.17")
			}
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/peek") // the process's CPU, not the wall time
		})
	}
}
