package spider

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	neturl "net/url"

	"github.com/google/go-cmp/cmp"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/internal/cputime"
	"github.com/frontiercrawl/frontier/spider/links"
)

// runUntil runs a spider over urls until each has an outcome and returns the log records.
func runUntil(t *testing.T, cfg Config, deps func(*Deps), urls ...string) (*harness, []record) {
	t.Helper()
	h := newHarness(t, nil, urls)
	if deps != nil {
		deps(&h.deps)
	}
	stop := h.start(cfg)
	h.waitOutcomes(urls)
	stop()
	return h, h.log.records()
}

func TestHTTP2AndProto(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<a href="/next">next</a> proto=%s`, r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	var proto string
	var mu sync.Mutex
	cfg := testConfig(t)
	_, recs := runUntil(t, cfg, func(d *Deps) {
		d.TLSConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
		d.Handler = HandlerFunc(func(_ context.Context, f *Fetched) error {
			mu.Lock()
			proto = f.Proto
			mu.Unlock()
			return nil
		})
	}, srv.URL+"/page")
	if proto != "HTTP/2.0" {
		t.Errorf("proto %q, want HTTP/2.0", proto)
	}
	if pc, ok := outcomes(recs)[srv.URL+"/page"].(*frontier.PageCrawled); !ok || pc.Response.Status != 200 {
		t.Errorf("outcome %v", outcomes(recs)[srv.URL+"/page"])
	}
}

func TestErrorNames(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer tlsSrv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/"
	ln.Close()
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(hang)
	cfg := testConfig(t)
	cfg.RequestTimeout = 1500 * time.Millisecond // long enough for a TLS handshake on a loaded machine
	urls := []string{tlsSrv.URL + "/", refused, slow.URL + "/hang", "ftp://example.com/x", "http://bad host/"}
	_, recs := runUntil(t, cfg, nil, urls...)
	got := map[string]string{}
	for u, m := range outcomes(recs) {
		if re, ok := m.(*frontier.RequestError); ok {
			got[u] = re.Error
		}
	}
	want := map[string]string{
		tlsSrv.URL + "/": ErrNameTLS, refused: ErrNameConnRefused, slow.URL + "/hang": ErrNameTimeout,
		"ftp://example.com/x": ErrNameNotSupported, "http://bad host/": ErrNameInvalidURL,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("error names (-want +got):\n%s", d)
	}
}

func TestClassifyError(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", IsNotFound: true}}, ErrNameDNS},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, ErrNameConnRefused},
		{fmt.Errorf("get: %w", context.DeadlineExceeded), ErrNameTimeout},
		{&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, ErrNameConnLost},
		{tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, ErrNameTLS},
		{named(ErrNameRobots, errors.New("x")), ErrNameRobots},
		{errors.New("something else"), ErrNameConnection},
	}
	for _, tt := range tests {
		if got := ClassifyError(tt.err); got != tt.want {
			t.Errorf("ClassifyError(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

func TestFeedSkipsUndecodableAndRetriesSends(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	h := newHarness(t, nil, []string{"!garbage", srv.URL + "/a", srv.URL + "/b"})
	h.log.fail = 3 // the spider log fails three times, then recovers
	stop := h.start(testConfig(t))
	h.waitOutcomes([]string{srv.URL + "/a", srv.URL + "/b"})
	// Wait for the commit to reach the end (the undecodable message is skipped, not blocking).
	guard := time.After(time.Minute)
	for h.feed.Committed() != 3 {
		select {
		case <-guard:
			t.Fatalf("committed %d, want 3", h.feed.Committed())
		case <-time.After(10 * time.Millisecond):
		}
	}
	stop()
}

func TestCommitWaitsForEarlierRequests(t *testing.T) {
	tr := newTracker(10)
	var es []*entry
	for i := range 5 {
		es = append(es, tr.add(busMsg(int64(i))))
	}
	tr.done(es[1])
	tr.done(es[2])
	if _, ok := tr.toCommit(); ok {
		t.Fatal("committable before offset 0 is done")
	}
	tr.done(es[0])
	m, ok := tr.toCommit()
	if !ok || m.Offset != 2 {
		t.Fatalf("toCommit = %d, %v; want 2", m.Offset, ok)
	}
	tr.committed(m)
	tr.done(es[4])
	after, done, _ := tr.beyond()
	if after != 2 || !cmp.Equal(done, []int64{4}) {
		t.Fatalf("beyond = %d, %v; want 2, [4]", after, done)
	}
	if tr.free() != 8 {
		t.Fatalf("free = %d, want 8", tr.free())
	}
}

func TestConnsPerHostTwo(t *testing.T) {
	var mu sync.Mutex
	cur, peak := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cur++
		peak = max(peak, cur)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		cur--
		mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
	}))
	defer srv.Close()
	var urls []string
	for i := range 12 {
		urls = append(urls, fmt.Sprintf("%s/p%d", srv.URL, i))
	}
	cfg := testConfig(t)
	cfg.ConnsPerHost, cfg.Delay = 2, 0
	runUntil(t, cfg, nil, urls...)
	if peak > 2 {
		t.Errorf("%d requests at once, want <= 2", peak)
	}
	t.Logf("peak concurrency %d", peak)
}

func TestParseSeedLine(t *testing.T) {
	tests := []struct {
		line, want string
		err        bool
	}{
		{"", "", false},
		{"   ", "", false},
		{"# a comment", "", false},
		{"  # indented comment", "", false},
		{"http://Example.COM:80/a/../b", "http://example.com/b", false},
		{"https://example.com/ # home page", "https://example.com/", false},
		{"https://example.com/#frag", "https://example.com/", false},
		{"example.com", "", true},
		{"ftp://example.com/", "", true},
		{"http://", "", true},
		{"http://a.com/ http://b.com/", "", true},
		{"\ufeffhttp://bom.example/", "", true}, // a BOM is only stripped on line 1, by ReadSeeds
	}
	for _, tt := range tests {
		u, err := ParseSeedLine(tt.line)
		if (err != nil) != tt.err {
			t.Errorf("ParseSeedLine(%q) error = %v, want error %v", tt.line, err, tt.err)
			continue
		}
		got := ""
		if u != nil {
			got = u.String()
		}
		if got != tt.want {
			t.Errorf("ParseSeedLine(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestInjectSeeds(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "seeds.txt")
	content := "\ufeff# seeds\nhttp://a.test/\n\nnot a url\nhttp://b.test/x\nhttp://a.test/two  # second\nmailto:x@y\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	inject := func() *harness {
		h := newHarness(t, nil, nil)
		h.deps.Feed = h.feed.consumer()
		s, err := New(cfg, h.deps)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.InjectSeeds(t.Context(), path); err != nil {
			t.Fatal(err)
		}
		return h
	}
	h := inject()
	recs := h.log.records()
	got := map[string][]string{}
	for _, r := range recs {
		as, ok := r.msg.(*frontier.AddSeeds)
		if !ok {
			t.Fatalf("unexpected %T", r.msg)
		}
		for _, s := range as.Seeds {
			d, _ := s.MetaDomain()
			if d.Fingerprint != r.key {
				t.Errorf("seed %s keyed %s, want its domain fingerprint %s", s.URL, r.key, d.Fingerprint)
			}
			if _, err := s.MetaFingerprint(); err != nil {
				t.Errorf("seed %s: %v", s.URL, err)
			}
			got[d.Name] = append(got[d.Name], s.URL)
		}
	}
	want := map[string][]string{"a.test": {"http://a.test/", "http://a.test/two"}, "b.test": {"http://b.test/x"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("seeds (-want +got):\n%s", d)
	}
	// The same file again: nothing is sent.
	h2 := inject()
	if n := len(h2.log.records()); n != 0 {
		t.Errorf("second injection sent %d messages, want 0", n)
	}
	// A changed file is injected.
	if err := os.WriteFile(path, []byte(content+"http://c.test/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h3 := inject()
	if n := len(h3.log.records()); n != 3 {
		t.Errorf("changed file sent %d messages, want 3", n)
	}
}

func TestReadSeedsLineNumbers(t *testing.T) {
	var bad []int
	var good []int
	err := ReadSeeds(strings.NewReader("http://a/\nbad\n\n# c\nworse stuff\nhttp://b/\n"),
		func(line int, _ *neturl.URL) error { good = append(good, line); return nil },
		func(e *SeedError) { bad = append(bad, e.Line) })
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(good, []int{1, 6}) || !cmp.Equal(bad, []int{2, 5}) {
		t.Errorf("good %v bad %v; want [1 6] [2 5]", good, bad)
	}
	long := "http://a/" + strings.Repeat("x", MaxSeedLine)
	if err := ReadSeeds(strings.NewReader(long), func(int, *neturl.URL) error { return nil }, nil); err == nil {
		t.Error("an overlong line is not an error")
	}
}

func FuzzParseSeedLine(f *testing.F) {
	f.Add("http://example.com/a/../b # c")
	f.Add("# comment")
	f.Add("HTTPS://[::1]:443/%zz?q#f")
	f.Fuzz(func(t *testing.T, line string) {
		u, err := ParseSeedLine(line)
		if err != nil || u == nil {
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			t.Fatalf("ParseSeedLine(%q) = %q: not an http(s) URL with a host", line, u)
		}
	})
}

func busMsg(off int64) bus.Message { return bus.Message{Offset: off} }

// TestRobotsUnavailableIsRetried: a robots.txt that answers 503 closes the host for RobotsErrorTTL only; the
// next request after that fetches robots.txt again.
func TestRobotsUnavailableIsRetried(t *testing.T) {
	var mu sync.Mutex
	robotsCalls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			mu.Lock()
			robotsCalls++
			n := robotsCalls
			mu.Unlock()
			if n == 1 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		w.Header().Set("Content-Type", "text/plain")
	}))
	defer srv.Close()
	cfg := testConfig(t)
	cfg.RobotsErrorTTL = 50 * time.Millisecond
	h := newHarness(t, nil, []string{srv.URL + "/a"})
	stop := h.start(cfg)
	defer stop()
	got := h.waitOutcomes([]string{srv.URL + "/a"})
	if re, ok := got[srv.URL+"/a"].(*frontier.RequestError); !ok || re.Error != ErrNameRobotsUnavail {
		t.Fatalf("first: %v, want RobotsUnavailable", got[srv.URL+"/a"])
	}
	time.Sleep(2 * cfg.RobotsErrorTTL) // let the verdict expire (ordering, not a timing assertion)
	h.feed.add(srv.URL+"/b", srv.URL+"/private/c")
	got = h.waitOutcomes([]string{srv.URL + "/b", srv.URL + "/private/c"})
	if _, ok := got[srv.URL+"/b"].(*frontier.PageCrawled); !ok {
		t.Errorf("after the TTL: %v, want page_crawled", got[srv.URL+"/b"])
	}
	if re, ok := got[srv.URL+"/private/c"].(*frontier.RequestError); !ok || re.Error != ErrNameRobots {
		t.Errorf("disallowed: %v, want RobotsDisallowed", got[srv.URL+"/private/c"])
	}
	mu.Lock()
	defer mu.Unlock()
	if robotsCalls != 2 {
		t.Errorf("robots.txt fetched %d times, want 2", robotsCalls)
	}
}

// BenchmarkFetchLoopback fetches pages through real net/http over loopback (a transport as the spider builds
// it): a 15 MiB HTML page truncated at 8 MiB in stream mode (parsed and digested as it arrives, as on the
// issue-21 fast web), and a small page read into memory and parsed afterwards. CPU is the process's, the
// loopback server's share included.
//
//	go test -run XXX -bench BenchmarkFetchLoopback -benchtime 20x ./spider/
func BenchmarkFetchLoopback(b *testing.B) {
	for _, bc := range []struct {
		name string
		size int
	}{{"body=15MiB/stream", 15 << 20}, {"body=8KiB/memory", 8 << 10}} {
		b.Run(bc.name, func(b *testing.B) {
			page := largeHTML(bc.size)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				_, _ = w.Write(page)
			}))
			defer srv.Close()
			cfg := DefaultConfig()
			tr := newTransport(cfg, Deps{})
			defer tr.CloseIdleConnections()
			f := newFetcher(cfg, tr, false)
			f.budget, f.spillDir, f.streamLarge = newByteBudget(64<<20), b.TempDir(), true
			u, _ := neturl.Parse(srv.URL + "/page")
			var cpu time.Duration
			var bytes int64
			nLinks := 0
			for b.Loop() {
				c0 := cputime.Process()
				out, err := f.fetch(b.Context(), reqFor(u.String()), u, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				if !out.linksDone {
					out.Links = links.Extract(u, out.Body, links.Options{MaxLinks: cfg.MaxLinksPerPage})
				}
				_ = out.contentDigest()
				cpu += cputime.Process() - c0
				nLinks += len(out.Links)
				bytes += out.WireBytes
				out.releaseBody()
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "CPU-ms/page")
			b.ReportMetric(float64(bytes)/1e6/cpu.Seconds(), "MB/CPU-s")
			b.ReportMetric(float64(nLinks)/float64(b.N), "links/op")
		})
	}
}
