package spider

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	frontier "github.com/frontiercrawl/frontier"
)

// leaseSite serves /slow (blocks until release is closed), /fail (500 the first time, 200 after) and 404 for
// everything else (robots.txt included), counting hits per path.
type leaseSite struct {
	srv     *httptest.Server
	release chan struct{}
	mu      sync.Mutex
	hits    map[string]int
}

func newLeaseSite(t *testing.T) *leaseSite {
	ls := &leaseSite{release: make(chan struct{}), hits: map[string]int{}}
	ls.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ls.mu.Lock()
		ls.hits[r.URL.Path]++
		n := ls.hits[r.URL.Path]
		ls.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
		switch r.URL.Path {
		case "/slow":
			select {
			case <-ls.release:
			case <-r.Context().Done():
			}
		case "/fail":
			if n == 1 {
				w.WriteHeader(http.StatusInternalServerError)
			}
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(ls.srv.Close)
	t.Cleanup(ls.unblock)
	return ls
}

func (ls *leaseSite) unblock() {
	select {
	case <-ls.release:
	default:
		close(ls.release)
	}
}

func (ls *leaseSite) count(path string) int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.hits[path]
}

// url is path on host name (any name: the spider dials the test server for every host).
func (ls *leaseSite) url(name, path string) string { return "http://" + name + path }

// leaseSpider runs a spider over the harness's feed that dials ls for every host name (flowSpider with the
// test configuration as it is).
func leaseSpider(t *testing.T, h *harness, ls *leaseSite) (*Spider, func()) {
	return flowSpider(t, h, ls, nil)
}

// waitFor polls cond until it holds (a hang guard, not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	guard := time.After(2 * time.Minute)
	for !cond() {
		select {
		case <-guard:
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// statuses lists the statuses reported for url, in order.
func statuses(h *harness, url string) []int {
	var out []int
	for _, r := range h.log.records() {
		if pc, ok := r.msg.(*frontier.PageCrawled); ok && pc.Response.URL == url {
			out = append(out, pc.Response.Status)
		}
	}
	return out
}

// TestRetryFetchedWhileWatermarkHeld reproduces the lost retry: a page fails, its retry comes back on the
// feed while an earlier slow request still holds the commit watermark, and the retry must be fetched, not
// dropped as a duplicate of the attempt already reported (that left the URL QUEUED with no queue row).
func TestRetryFetchedWhileWatermarkHeld(t *testing.T) {
	for _, tc := range []struct {
		name  string
		retry string // the feed value of the retry
	}{
		{"retry_times set", " retry_times=1"},
		// A re-sent batch (DB worker killed before its Ack) carries the same attempt; once that attempt is
		// reported, the copy is fetched again rather than dropped.
		{"same attempt already reported", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ls := newLeaseSite(t)
			slow, fail := ls.url("slow.test", "/slow"), ls.url("fail.test", "/fail")
			h := newHarness(t, nil, []string{slow, fail})
			s, stop := leaseSpider(t, h, ls)
			defer stop()
			waitFor(t, "the first attempt's 500 on the spider log", func() bool { return len(statuses(h, fail)) == 1 })
			if _, ok := s.tracker.toCommit(); ok {
				t.Fatal("watermark moved past the slow request")
			}
			h.feed.add(fail + tc.retry)
			waitFor(t, "the retry to be fetched or dropped", func() bool {
				return ls.count("/fail") == 2 || s.nDuplicates.Load() > 0
			})
			if d := s.nDuplicates.Load(); d != 0 {
				t.Errorf("retry counted as a duplicate (%v) and dropped", d)
			}
			ls.unblock()
			waitFor(t, "the commit of all three requests", func() bool { return h.feed.Committed() == 3 })
			if got := ls.count("/fail"); got != 2 {
				t.Errorf("/fail fetched %d times, want 2 (the failure and its retry)", got)
			}
			if got := statuses(h, fail); fmt.Sprint(got) != "[500 200]" {
				t.Errorf("reported statuses of /fail = %v, want [500 200]", got)
			}
		})
	}
}

// TestSameAttemptRunningIsDuplicate: a copy of a request whose same attempt is still being fetched (a batch
// the DB worker sent again) is dropped; the running copy is reported once.
func TestSameAttemptRunningIsDuplicate(t *testing.T) {
	ls := newLeaseSite(t)
	slow := ls.url("slow.test", "/slow")
	h := newHarness(t, nil, []string{slow, slow})
	s, stop := leaseSpider(t, h, ls)
	defer stop()
	waitFor(t, "the copy to be dropped", func() bool { return s.nDuplicates.Load() == 1 })
	ls.unblock()
	waitFor(t, "the commit of both copies", func() bool { return h.feed.Committed() == 2 })
	if got := ls.count("/slow"); got != 1 {
		t.Errorf("/slow fetched %d times, want 1", got)
	}
	if got := statuses(h, slow); len(got) != 1 {
		t.Errorf("/slow reported %d times, want 1", len(got))
	}
}

// TestTrackerLeases: a lease is held from claim to done, per attempt, and a done entry releases only its own
// lease, whatever the watermark does.
func TestTrackerLeases(t *testing.T) {
	tr := newTracker(10)
	blocker := tr.add(busMsg(0)) // holds the watermark throughout
	first := tr.add(busMsg(1))
	if !tr.claim(first, "fp", 0) {
		t.Fatal("first claim refused")
	}
	dup := tr.add(busMsg(2))
	if tr.claim(dup, "fp", 0) {
		t.Fatal("the same attempt claimed twice while running")
	}
	tr.done(dup)
	retry := tr.add(busMsg(3))
	if !tr.claim(retry, "fp", 1) {
		t.Fatal("another attempt refused while the first runs")
	}
	tr.done(first) // the older attempt's outcome must not release the retry's lease
	if !tr.leased("fp") {
		t.Fatal("first attempt's done released the retry's lease")
	}
	again := tr.add(busMsg(4))
	if tr.claim(again, "fp", 1) {
		t.Fatal("the retry's attempt claimed twice while running")
	}
	tr.done(again)
	tr.done(retry)
	if tr.leased("fp") {
		t.Fatal("lease held after its outcome was done, with the watermark still held")
	}
	if _, ok := tr.toCommit(); ok {
		t.Fatal("watermark moved past an entry not done")
	}
	resent := tr.add(busMsg(5))
	if !tr.claim(resent, "fp", 0) {
		t.Fatal("a copy of an attempt already reported refused")
	}
	tr.done(resent)
	tr.done(blocker)
	if m, ok := tr.toCommit(); !ok || m.Offset != 5 {
		t.Fatalf("toCommit = %d, %v; want 5", m.Offset, ok)
	}
}
