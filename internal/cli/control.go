package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/control"
)

// controlRemind is how often a process that waits for the control stream says so again.
const controlRemind = 30 * time.Second

// FollowControl starts following the control stream (package control) for a role's process and returns the
// follower, whose State the role's workers obey, once it replayed every command the stream held when it started.
// The follower's consumer group is the process's own and never commits, so it always replays from the start.
//
// A control stream that cannot be read yet (Kafka down, the control topic not created yet) is waited out like
// any outage (control.FollowWait): the process does not start its work without its control state, because a
// spider or DB worker that ignored an earlier block or pause would fetch what the operator stopped (and a
// strategy worker would score against a control state older than the stream). It returns
// an error only when ctx ends. Stop the follower before closing the bus.
func FollowControl(ctx context.Context, b bus.Bus, env Env, role string) (*control.Follower, error) {
	host, _ := os.Hostname()
	group := fmt.Sprintf("frontier-control-%s-%s-%d-%d", role, host, os.Getpid(), time.Now().UnixNano())
	f, err := control.FollowWait(ctx, b, group, controlRemind, env.Logger.With("component", "control"), env.Registry)
	if err != nil {
		return nil, fmt.Errorf("control stream: %w", err)
	}
	return f, nil
}
