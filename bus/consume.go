package bus

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrStop, returned by a Consume handler, commits the batch and then ends Consume with a nil error.
var ErrStop = errors.New("bus: stop after this batch")

// Consume is the at-least-once loop every role runs on a stream: fetch up to max messages, decode them
// (malformed ones are reported and skipped, see Decode), hand the values to handle, and commit the batch only
// once handle returned nil, so a crash replays what was not durable.
//
// handle and the commit run under a context that outlives ctx by grace (see Grace): a batch begun when SIGTERM
// arrives is finished and committed rather than replayed, and a batch that waits out an outage of Kafka or HBase
// is not cut short by any deadline of Consume's own (a per-batch deadline, if the role wants one, is handle's
// business). Consume returns nil when ctx ends (or handle returns ErrStop), and otherwise the first error of
// Fetch, handle or Commit.
func Consume[T any](ctx context.Context, c Consumer, max int, grace time.Duration,
	decode func(Message) (T, error), handle func(context.Context, []T) error) error {
	for {
		msgs, err := c.Fetch(ctx, max)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("bus: fetch: %w", err)
		}
		values := Decode(c, msgs, decode)
		dctx, cancel := Grace(ctx, grace)
		herr := handle(dctx, values)
		stop := errors.Is(herr, ErrStop)
		if herr == nil || stop {
			herr = c.Commit(dctx, msgs)
		}
		cancel()
		if herr != nil {
			return herr
		}
		if stop {
			return nil
		}
	}
}

// Grace returns a context that is not cancelled with ctx but grace after ctx ends: work begun before a shutdown
// gets grace to finish, while work that waits out an outage before any shutdown has no deadline. Call cancel
// when the work is done.
func Grace(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-dctx.Done():
		case <-t.C:
			cancel()
		}
	})
	return dctx, func() {
		stop()
		cancel()
	}
}
