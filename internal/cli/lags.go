package cli

import (
	"context"
	"time"

	"github.com/frontiercrawl/frontier/bus"
)

// StreamGroup names a consumer group of a stream (bus.LagGroups lists the declared ones).
type StreamGroup = bus.StreamGroup

// ReportLags reads the lag of every pair every interval until the returned stop is called, so that the bus's
// lag gauge (frontier_bus_lag_messages{stream,group,partition}) stays current for dashboards and alerts even
// for groups the process does not itself poll. Errors are skipped: the next round tries again. stop cancels
// and waits; call it before closing the bus.
func ReportLags(ctx context.Context, lr bus.LagReader, every time.Duration, pairs []StreamGroup) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			for _, p := range pairs {
				rctx, rcancel := context.WithTimeout(ctx, every)
				_, _ = lr.Lag(rctx, p.Stream, p.Group)
				rcancel()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
