package strategyworker

import (
	"net/http"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
)

func withRetries(r *frontier.Request, n int64) *frontier.Request {
	if n > 0 {
		r.Meta.Set(MetaKeyRetryTimes, n)
	}
	return r
}

func page(r *frontier.Request, status int, hdr ...string) *frontier.PageCrawled {
	var h frontier.Headers
	for i := 0; i+1 < len(hdr); i += 2 {
		h = append(h, frontier.Header{Name: []byte(hdr[i]), Values: [][]byte{[]byte(hdr[i+1])}})
	}
	return &frontier.PageCrawled{Response: &frontier.Response{URL: r.URL, Status: status, Headers: h, Request: r}}
}

// TestRetries: transient failures are scheduled again with a due time (backoff doubling, or a later
// Retry-After) and the count in meta; after the last try, or for a failure that is not transient, the URL
// ends ERROR (or CRAWLED for a 404) and is not scheduled.
func TestRetries(t *testing.T) {
	r := newRig(t)
	now := time.Unix(2_000_000_000, 0)
	r.now = func() time.Time { return now }
	r.publish(t,
		page(withRetries(req("http://a/500", 1), 0), 500),
		page(withRetries(req("http://a/503", 1), 1), 503, "Retry-After", "30"),
		page(withRetries(req("http://a/429", 1), 0), 429, "retry-after", now.Add(90*time.Second).UTC().Format(http.TimeFormat)),
		page(withRetries(req("http://a/spent", 1), 2), 502),
		page(req("http://a/404", 1), 404),
		&frontier.RequestError{Request: withRetries(req("http://a/timeout", 1), 1), Error: "TimeoutError"},
		&frontier.RequestError{Request: req("http://a/dns", 1), Error: "DNSLookupError"},
	)
	r.runUntilIdle(t)
	type want struct {
		retries int64
		due     time.Duration
	}
	wants := map[string]want{
		"http://a/500":     {1, time.Second},
		"http://a/503":     {2, 30 * time.Second},
		"http://a/429":     {1, 90 * time.Second},
		"http://a/timeout": {2, 2 * time.Second},
	}
	got := r.scores(t)
	for _, us := range got {
		w, ok := wants[us.Request.URL]
		if !ok {
			t.Errorf("%s scheduled again", us.Request.URL)
			continue
		}
		delete(wants, us.Request.URL)
		nb, _ := us.Request.MetaNotBefore()
		if n := retryTimes(us.Request); n != w.retries || nb != now.Add(w.due).Unix() {
			t.Errorf("%s: retry_times %d due +%ds, want %d due +%v", us.Request.URL, n, nb-now.Unix(), w.retries, w.due)
		}
		if d, _ := us.Request.MetaDepth(); d != 1 {
			t.Errorf("%s: depth %d, want 1 (kept)", us.Request.URL, d)
		}
		if st := r.state(t, us.Request.URL); st != frontier.Queued {
			t.Errorf("%s: state %v, want QUEUED", us.Request.URL, st)
		}
	}
	for u := range wants {
		t.Errorf("%s not scheduled again", u)
	}
	for u, st := range map[string]frontier.State{"http://a/spent": frontier.Error, "http://a/404": frontier.Crawled, "http://a/dns": frontier.Error} {
		if got := r.state(t, u); got != st {
			t.Errorf("%s: state %v, want %v", u, got, st)
		}
	}
}

// TestRetryDue: a back-off's due time is rounded to the nearest second, a later Retry-After's up.
func TestRetryDue(t *testing.T) {
	base := time.Unix(2_000_000_000, 0)
	for _, tc := range []struct {
		frac, backoff, after time.Duration
		want                 int64
	}{
		{0, time.Second, 0, 1},
		{400 * time.Millisecond, time.Second, 0, 1},
		{600 * time.Millisecond, time.Second, 0, 2},
		{600 * time.Millisecond, 4 * time.Second, 0, 5},
		{400 * time.Millisecond, time.Second, 30 * time.Second, 31},
		{0, time.Second, 30 * time.Second, 30},
		{400 * time.Millisecond, 2 * time.Second, time.Second, 2}, // the back-off is later: it rules
	} {
		if got := retryDue(base.Add(tc.frac), tc.backoff, tc.after) - base.Unix(); got != tc.want {
			t.Errorf("at +%v, backoff %v, Retry-After %v: due +%ds, want +%ds", tc.frac, tc.backoff, tc.after, got, tc.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		v    string
		want time.Duration
	}{
		{"", 0}, {"5", 5 * time.Second}, {" 120 ", 2 * time.Minute}, {"-3", 0}, {"soon", 0},
		{now.Add(time.Minute).Format(http.TimeFormat), time.Minute}, {now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"99999999999999999999", 0},
	} {
		var h frontier.Headers
		if tc.v != "" {
			h = frontier.Headers{{Name: []byte("Retry-After"), Values: [][]byte{[]byte(tc.v)}}}
		}
		if got := retryAfter(h, now); got != tc.want {
			t.Errorf("Retry-After %q: %v, want %v", tc.v, got, tc.want)
		}
	}
}

func TestRetryConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*RetryConfig)
	}{
		{"negative max_retries", func(c *RetryConfig) { c.MaxRetries = -1 }},
		{"zero backoff", func(c *RetryConfig) { c.Backoff = 0 }},
		{"max below backoff", func(c *RetryConfig) { c.MaxBackoff = c.Backoff / 2 }},
		{"bad status", func(c *RetryConfig) { c.Statuses = []int{700} }},
		{"empty error name", func(c *RetryConfig) { c.Errors = []string{""} }},
		{"negative retry-after cap", func(c *RetryConfig) { c.MaxRetryAfter = -time.Second }},
	} {
		c := DefaultRetryConfig()
		tc.edit(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if err := DefaultRetryConfig().Validate(); err != nil {
		t.Error(err)
	}
}
