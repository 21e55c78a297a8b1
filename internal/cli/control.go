package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/control"
)

// FollowControl starts following the control stream (package control) for a role's process and returns the
// follower, whose State the role's workers obey, after it replayed every command so far. The follower's
// consumer group is the process's own and never commits, so it always replays from the start.
//
// When the control stream cannot be opened (typically: the control topic was never created), it logs a
// warning and returns nil: the process runs without run-time control rather than not at all. Stop a non-nil
// follower before closing the bus.
func FollowControl(ctx context.Context, b bus.Bus, env Env, role string) *control.Follower {
	host, _ := os.Hostname()
	group := fmt.Sprintf("frontier-control-%s-%s-%d-%d", role, host, os.Getpid(), time.Now().UnixNano())
	f, err := control.Follow(ctx, b, group, 2*time.Second, env.Logger.With("component", "control"), env.Registry)
	if err != nil {
		if ctx.Err() == nil {
			env.Logger.Warn("run-time control disabled: the control stream cannot be read (create its topic with frontierctl topics)", "err", err)
		}
		return nil
	}
	return f
}
