package bus

import (
	"context"
	"errors"
)

// ErrFenced is matched (errors.Is) by the error of a write refused because the process no longer owns the
// partitions it works for: the group gave them to another process (this one was paused or cut off past its
// session, or a rebalance is moving them). The write did not happen; the work must stop, and its partitions'
// next owner replays what was not committed.
var ErrFenced = errors.New("bus: fenced: this process no longer owns the partitions it writes for")

type fenceKey struct{}

// WithFence returns a context carrying check, a test of ownership that writers call right before every write
// made under it (kafkabus's Producer.Send and Consumer.Commit do): an Owner puts one on the context it gives
// its work, so a process that lost its partitions cannot write for them, even one that was stopped (SIGSTOP,
// a long GC, a frozen VM) and resumes mid-batch without having noticed. check returns an error matching
// ErrFenced once ownership is lost.
func WithFence(ctx context.Context, check func(context.Context) error) context.Context {
	return context.WithValue(ctx, fenceKey{}, check)
}

// CheckFence calls the fence ctx carries (see WithFence); nil without one.
func CheckFence(ctx context.Context) error {
	if check, ok := ctx.Value(fenceKey{}).(func(context.Context) error); ok {
		return check(ctx)
	}
	return nil
}

// HasFence reports whether ctx carries a fence (see WithFence): a writer that retries by itself gives each
// try its own check (kafkabus's Producer makes one attempt per check under a fence).
func HasFence(ctx context.Context) bool {
	_, ok := ctx.Value(fenceKey{}).(func(context.Context) error)
	return ok
}
