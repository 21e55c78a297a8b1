package strategyworker

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/frontiercrawl/frontier"
)

// RetryConfig configures retries of transient failures. A page_crawled whose status is in Statuses, or a
// request_error whose name is in Errors, is not shown to the strategy while the request has retries left: the
// worker schedules it again with a due time (meta frontier_not_before, which the queue honours) of Backoff ×
// 2^(tries so far), capped at MaxBackoff, or the answer's Retry-After when that is later (capped at
// MaxRetryAfter). The queue counts whole seconds: a back-off's due time is rounded to the nearest one (the
// wait is the back-off ± 0.5 s), a Retry-After's is rounded up (retryDue). The count travels in the request's meta (Scrapy's retry_times), so a restart of any role does
// not reset it. After the last try the strategy sees a request_error: the error's own name, or HttpErrorNNN
// for a status, and the URL ends ERROR.
type RetryConfig struct {
	// MaxRetries is how many times a request is tried again after its first failure. Default 2 (Scrapy's
	// RETRY_TIMES); 0 disables retries.
	MaxRetries int `mapstructure:"max_retries"`
	// Backoff is the wait before the first retry; each retry doubles it. Default 1s, rounded to the queue's
	// whole seconds (0.5-1.5 s). Scrapy's RetryMiddleware retries at once, behind the queue; a short back-off
	// keeps a retry off a server for the second or so a transient 5xx or reset usually lasts without holding
	// the page back for long.
	Backoff time.Duration `mapstructure:"backoff"`
	// MaxBackoff caps the doubled wait. Default 10m.
	MaxBackoff time.Duration `mapstructure:"max_backoff"`
	// MaxRetryAfter caps a server's Retry-After. Default 1h.
	MaxRetryAfter time.Duration `mapstructure:"max_retry_after"`
	// Statuses are the HTTP statuses retried. Default 500, 502, 503, 504, 522, 524, 408, 429 (Scrapy's
	// RETRY_HTTP_CODES).
	Statuses []int `mapstructure:"statuses"`
	// Errors are the request_error names retried. Default TimeoutError, ConnectionLost (a reset or a connection
	// closed before the answer was complete).
	Errors []string `mapstructure:"errors"`
}

// DefaultRetryConfig returns the defaults documented on RetryConfig.
func DefaultRetryConfig() RetryConfig {
	return RetryConfig{MaxRetries: 2, Backoff: time.Second, MaxBackoff: 10 * time.Minute, MaxRetryAfter: time.Hour,
		Statuses: []int{500, 502, 503, 504, 522, 524, 408, 429}, Errors: []string{"TimeoutError", "ConnectionLost"}}
}

// Validate reports every invalid value.
func (c RetryConfig) Validate() error {
	var errs []error
	if c.MaxRetries < 0 {
		errs = append(errs, fmt.Errorf("retry.max_retries = %d, want >= 0", c.MaxRetries))
	}
	if c.Backoff <= 0 || c.MaxBackoff < c.Backoff {
		errs = append(errs, fmt.Errorf("retry.backoff = %v, retry.max_backoff = %v, want 0 < backoff <= max_backoff", c.Backoff, c.MaxBackoff))
	}
	if c.MaxRetryAfter < 0 {
		errs = append(errs, fmt.Errorf("retry.max_retry_after = %v, want >= 0", c.MaxRetryAfter))
	}
	for _, s := range c.Statuses {
		if s < 100 || s > 599 {
			errs = append(errs, fmt.Errorf("retry.statuses: %d is not an HTTP status", s))
		}
	}
	for _, e := range c.Errors {
		if e == "" {
			errs = append(errs, errors.New("retry.errors: an empty error name"))
		}
	}
	return errors.Join(errs...)
}

// MetaKeyRetryTimes is the number of times a request was retried (int; Scrapy's meta['retry_times']).
const MetaKeyRetryTimes = "retry_times"

func retryTimes(r *frontier.Request) int64 {
	v, ok := r.Meta.Get(MetaKeyRetryTimes)
	if !ok {
		return 0
	}
	n, _ := v.(int64)
	return n
}

// HTTPErrorName is the request_error name of a status that is still failing after the last retry.
func HTTPErrorName(status int) string { return "HttpError" + strconv.Itoa(status) }

// retryPage decides on a fetched page: it returns true when the page was a transient failure that is
// scheduled again (the strategy must not see it), and the error name to give the strategy instead of the page
// when the failure is final ("" to show the page as it is).
func (w *Worker) retryPage(c *batchContext, resp *frontier.Response) (retried bool, errName string) {
	if !slices.Contains(w.cfg.Retry.Statuses, resp.Status) {
		return false, ""
	}
	if w.retry(c, resp.Request, retryAfter(resp.Headers, c.Now()), HTTPErrorName(resp.Status)) {
		return true, ""
	}
	return false, HTTPErrorName(resp.Status)
}

// retryError reports whether a request_error is a transient failure scheduled again.
func (w *Worker) retryError(c *batchContext, r *frontier.Request, errName string) bool {
	if !slices.Contains(w.cfg.Retry.Errors, errName) {
		return false
	}
	return w.retry(c, r, 0, errName)
}

// retry schedules r again after its backoff (or wait, when later) unless its retries are spent.
func (w *Worker) retry(c *batchContext, r *frontier.Request, wait time.Duration, reason string) bool {
	n := retryTimes(r)
	if n >= int64(w.cfg.Retry.MaxRetries) {
		w.m.retries.WithLabelValues("gave_up").Inc()
		return false
	}
	backoff := time.Duration(float64(w.cfg.Retry.Backoff) * math.Pow(2, float64(n)))
	if backoff > w.cfg.Retry.MaxBackoff || backoff <= 0 {
		backoff = w.cfg.Retry.MaxBackoff
	}
	nb := retryDue(c.Now(), backoff, min(wait, w.cfg.Retry.MaxRetryAfter))
	again := &frontier.Request{URL: r.URL, Method: r.Method, Headers: r.Headers, Cookies: r.Cookies, Body: r.Body, Meta: r.Meta.Clone()}
	again.Meta.Set(MetaKeyRetryTimes, n+1)
	again.SetMetaNotBefore(nb)
	score, err := r.MetaScore()
	if err != nil || score < 0 || score > 1 {
		score = 1
	}
	if err := c.Schedule(again, score); err != nil {
		return false
	}
	c.SetState(again, frontier.Queued)
	w.m.retries.WithLabelValues("scheduled").Inc()
	w.log.Debug("transient failure; retrying", "url", r.URL, "reason", reason, "retry", n+1, "due", nb)
	return true
}

// retryDue is the due time (Unix seconds, the queue's unit) of a retry at now after backoff, or after the
// server's Retry-After wait when that is later. A Retry-After is the server's word: its due time is rounded up,
// never earlier than asked. A back-off is the frontier's own guess at how long a transient failure lasts: its
// due time is rounded to the nearest second, so the retry waits backoff ± 0.5 s, backoff on average (rounded up,
// the 1 s default waited 1.5 s on average and up to 2 s, which at the end of a crawl was its last seconds),
// and the retries of a burst of failures spread over two seconds instead of all falling due together.
func retryDue(now time.Time, backoff, retryAfter time.Duration) int64 {
	if retryAfter > backoff {
		due := now.Add(retryAfter)
		nb := due.Unix()
		if due.Nanosecond() > 0 {
			nb++
		}
		return nb
	}
	return now.Add(backoff).Round(time.Second).Unix()
}

// retryAfter reads a Retry-After header (delay-seconds or an HTTP date) as a wait from now; 0 when absent or
// unreadable.
func retryAfter(h frontier.Headers, now time.Time) time.Duration {
	for _, x := range h {
		if !strings.EqualFold(string(x.Name), "Retry-After") || len(x.Values) == 0 {
			continue
		}
		v := strings.TrimSpace(string(x.Values[0]))
		if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
			if secs < 0 {
				return 0
			}
			return time.Duration(min(secs, int64(math.MaxInt64/time.Second))) * time.Second
		}
		if t, err := http.ParseTime(v); err == nil && t.After(now) {
			return t.Sub(now)
		}
		return 0
	}
	return 0
}
