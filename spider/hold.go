package spider

import (
	"context"
	"time"

	frontier "github.com/frontiercrawl/frontier"
)

// Holder keeps the requests of blocked hosts from being fetched (run-time control: frontierctl block; see
// package control). The spider asks Blocked right before it starts a request, after the politeness wait, so
// no request of a host starts once the block is applied; a held request goes to Return, which puts it back in
// the frontier's queue (cmd/spider sends it as an update_score to the scoring log), and it counts as reported
// once Return succeeded. Nothing is dropped: the URL is dispatched again after the host is unblocked.
type Holder interface {
	Blocked(host string) bool
	Return(ctx context.Context, r *frontier.Request) error
}

// hold reports whether it was held back (and handed to Deps.Hold.Return). A Return that fails is retried
// until ctx ends; the request then stays unreported, so it is fetched again after a restart.
func (s *Spider) hold(ctx context.Context, it *item) bool {
	if s.deps.Hold == nil || !s.deps.Hold.Blocked(it.u.Hostname()) {
		return false
	}
	backoff := 100 * time.Millisecond
	for {
		err := s.deps.Hold.Return(ctx, it.req)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return true
		}
		s.log.Warn("return a held request; retrying", "url", it.req.URL, "err", err, "retry_in", backoff)
		if !sleepCtx(ctx, backoff) {
			return true
		}
		backoff = min(2*backoff, 10*time.Second)
	}
	s.m.held.Inc()
	s.log.Debug("request of a blocked host returned to the queue", "url", it.req.URL)
	s.tracker.done(it.entry)
	return true
}
