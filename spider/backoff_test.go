package spider

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestHostBackoff: a host that keeps failing is backed off as a whole (doubling), a Retry-After holds it at
// once, a success resets the count, and errors that say nothing about the host's health are ignored.
func TestHostBackoff(t *testing.T) {
	cfg := DefaultConfig()
	cfg.HostFailures, cfg.HostBackoff, cfg.HostBackoffMax = 3, 10*time.Second, 35*time.Second
	s := &Spider{cfg: cfg, hosts: map[string]*host{}, m: newMetrics(nil), log: slog.New(slog.DiscardHandler)}
	u, _ := url.Parse("http://a.test/x")
	timeout := named(ErrNameTimeout, context.DeadlineExceeded)
	page := func(status int, retryAfter string) *Fetched {
		h := http.Header{}
		if retryAfter != "" {
			h.Set("Retry-After", retryAfter)
		}
		return &Fetched{Status: status, Header: h}
	}
	wait := func() time.Duration { return time.Until(s.hosts["a.test"].next).Round(time.Second) }
	steps := []struct {
		f    *Fetched
		err  error
		want time.Duration // the host's wait after the step (0: none)
	}{
		{nil, timeout, 0},
		{page(500, ""), nil, 0},
		{nil, timeout, 10 * time.Second}, // third in a row
		{page(502, ""), nil, 20 * time.Second},
		{nil, named(ErrNameDNS, fmt.Errorf("no such host")), 20 * time.Second}, // ignored
		{page(504, ""), nil, 35 * time.Second},                                 // capped
	}
	for i, st := range steps {
		s.hostOutcome(u, 0, st.f, st.err)
		if got := wait(); got != st.want && !(st.want == 0 && got <= 0) {
			t.Errorf("step %d: host waits %v, want %v", i, got, st.want)
		}
	}
	s.hosts["a.test"].next = time.Time{}
	s.hostOutcome(u, 0, page(200, ""), nil)
	if s.hosts["a.test"].fails != 0 {
		t.Errorf("fails %d after a success, want 0", s.hosts["a.test"].fails)
	}
	s.hostOutcome(u, 0, page(429, "7"), nil)
	if got := wait(); got > 0 {
		t.Errorf("after one 429: host waits %v, want no wait (the URL waits for its retry)", got)
	}
	s.hostOutcome(u, 0, page(503, ""), nil)
	s.hostOutcome(u, 0, page(429, "30"), nil)
	if got := wait(); got != 30*time.Second {
		t.Errorf("after a third failure with Retry-After 30: host waits %v, want 30s", got)
	}
}

// TestHostBackoffIgnoresRetries: retries of broken URLs do not back their host off, however many fail in a row
// (the tail of hostile_test's web: three URLs answering 500, 503 and 429 on every try, retried twice each); a
// retry's success still resets the count of first attempts.
func TestHostBackoffIgnoresRetries(t *testing.T) {
	cfg := DefaultConfig()
	cfg.HostFailures = 3
	s := &Spider{cfg: cfg, hosts: map[string]*host{}, m: newMetrics(nil), log: slog.New(slog.DiscardHandler)}
	u, _ := url.Parse("http://a.test/err/500")
	failed := &Fetched{Status: 500, Header: http.Header{}}
	s.hostOutcome(u, 0, failed, nil)
	s.hostOutcome(u, 0, failed, nil)
	for range 6 {
		s.hostOutcome(u, 1, failed, nil)
		s.hostOutcome(u, 2, failed, nil)
	}
	if h := s.hosts["a.test"]; h.fails != 2 || time.Until(h.next) > 0 {
		t.Fatalf("after 2 first attempts and 12 retries failed: fails %d, waits %v; want 2 and no wait", h.fails, time.Until(h.next))
	}
	s.hostOutcome(u, 1, &Fetched{Status: 200}, nil)
	if h := s.hosts["a.test"]; h.fails != 0 {
		t.Errorf("fails %d after a retry's success, want 0", h.fails)
	}
	s.hostOutcome(u, 0, failed, nil) // first attempts still count
	s.hostOutcome(u, 0, failed, nil)
	s.hostOutcome(u, 0, failed, nil)
	if h := s.hosts["a.test"]; time.Until(h.next) <= 0 {
		t.Error("three first attempts failed in a row: the host is not backed off")
	}
}

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{"": 0, "3": 3 * time.Second, "0": 0, "-1": 0, "x": 0,
		now.Add(time.Minute).Format(http.TimeFormat): time.Minute, "9999999999999": 0} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}
