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
// handle and the commit run under a context that outlives ctx by grace: a batch begun when SIGTERM arrives is
// finished and committed rather than replayed. Consume returns nil when ctx ends (or handle returns ErrStop),
// and otherwise the first error of Fetch, handle or Commit.
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
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
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
