//go:build integration

package kafkabus

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/bus"
)

// ownTracker records which process runs work on which partition, and fails the test if two ever overlap.
type ownTracker struct {
	t     *testing.T
	mu    sync.Mutex
	owner map[int]string
}

func (o *ownTracker) work(name string) func(ctx context.Context, parts []int) error {
	return func(ctx context.Context, parts []int) error {
		o.mu.Lock()
		for _, p := range parts {
			if other, ok := o.owner[p]; ok {
				o.t.Errorf("partition %d run by %s while %s runs it", p, name, other)
			}
			o.owner[p] = name
		}
		o.mu.Unlock()
		<-ctx.Done()
		o.mu.Lock()
		for _, p := range parts {
			delete(o.owner, p)
		}
		o.mu.Unlock()
		return nil
	}
}

func (o *ownTracker) snapshot() map[string][]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string][]int{}
	for p, n := range o.owner {
		out[n] = append(out[n], p)
	}
	for _, ps := range out {
		slices.Sort(ps)
	}
	return out
}

// TestOwnShares: two processes sharing a stream's 4 partitions get disjoint shares, and when one leaves the
// other takes all; two processes asking for the same partition never run it at once, and the standby takes
// over when the owner leaves.
func TestOwnShares(t *testing.T) {
	brokers := kafkaBrokers(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	b := realBus(t, brokers, map[bus.Stream]int{bus.SpiderFeed: 4})
	b.cfg.Ownership.SessionTimeout, b.cfg.Ownership.HeartbeatInterval = 6*time.Second, 500*time.Millisecond
	group := fmt.Sprintf("own-%d", time.Now().UnixNano())
	tr := &ownTracker{t: t, owner: map[int]string{}}

	run := func(name string, want []int, group string) (context.CancelFunc, chan error) {
		wctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- b.Own(wctx, bus.SpiderFeed, group, want, tr.work(name)) }()
		return stop, done
	}
	stopA, doneA := run("a", nil, group)
	stopB, doneB := run("b", nil, group)
	waitFor(t, ctx, "both sharers to own 2 partitions each", func() bool {
		s := tr.snapshot()
		return len(s["a"]) == 2 && len(s["b"]) == 2
	})
	t.Logf("shares: %v", tr.snapshot())
	stopA()
	if err := <-doneA; err != nil {
		t.Fatalf("Own of a: %v", err)
	}
	waitFor(t, ctx, "b to take all 4 partitions", func() bool { return len(tr.snapshot()["b"]) == 4 })
	stopB()
	if err := <-doneB; err != nil {
		t.Fatalf("Own of b: %v", err)
	}

	// Two processes given the same partition: one owns, the other stands by, then takes over.
	g1 := group + "-p1"
	stopC, doneC := run("c", []int{1}, g1)
	waitFor(t, ctx, "c to own partition 1", func() bool { return slices.Equal(tr.snapshot()["c"], []int{1}) })
	stopD, doneD := run("d", []int{1}, g1)
	time.Sleep(3 * time.Second) // d joins and stands by; the tracker fails the test on any overlap
	if s := tr.snapshot(); !slices.Equal(s["c"], []int{1}) || len(s["d"]) != 0 {
		t.Fatalf("after d joined: %v, want c still owning partition 1 and d standing by", s)
	}
	stopC()
	<-doneC
	waitFor(t, ctx, "d to take partition 1 over", func() bool { return slices.Equal(tr.snapshot()["d"], []int{1}) })
	stopD()
	<-doneD
}
