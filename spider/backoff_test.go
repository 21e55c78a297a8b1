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
		s.hostOutcome(u, st.f, st.err)
		if got := wait(); got != st.want && !(st.want == 0 && got <= 0) {
			t.Errorf("step %d: host waits %v, want %v", i, got, st.want)
		}
	}
	s.hosts["a.test"].next = time.Time{}
	s.hostOutcome(u, page(200, ""), nil)
	if s.hosts["a.test"].fails != 0 {
		t.Errorf("fails %d after a success, want 0", s.hosts["a.test"].fails)
	}
	s.hostOutcome(u, page(429, "7"), nil)
	if got := wait(); got > 0 {
		t.Errorf("after one 429: host waits %v, want no wait (the URL waits for its retry)", got)
	}
	s.hostOutcome(u, page(503, ""), nil)
	s.hostOutcome(u, page(429, "30"), nil)
	if got := wait(); got != 30*time.Second {
		t.Errorf("after a third failure with Retry-After 30: host waits %v, want 30s", got)
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
