package hbase

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/queue/queuetest"
	"github.com/frontiercrawl/frontier/state"
)

// fencedCtx returns a context whose fence (bus.WithFence) passes until lost is set.
func fencedCtx(ctx context.Context, lost *atomic.Bool) context.Context {
	return bus.WithFence(ctx, func(context.Context) error {
		if lost.Load() {
			return bus.ErrFenced
		}
		return nil
	})
}

// The fence is asked right before each write request, not only by the caller before the batch: a process that
// lost its partitions between the caller's check and the request (here, between Schedule's index read and its
// puts, and between two attempts of a put that met a broken connection) writes nothing. Queue.Ack is not
// fenced (dbworker/fence.go says why).
func TestWritesAskTheFence(t *testing.T) {
	t.Run("schedule after its index read", func(t *testing.T) {
		f := newFakeHBase()
		q := newFakeClient(f, quickConfig()).Queue()
		var lost atomic.Bool
		f.fail = func(op string) error {
			if op == "getMultiple" {
				lost.Store(true) // the partitions move while the index read runs
			}
			return nil
		}
		err := q.Schedule(fencedCtx(t.Context(), &lost), []queue.Item{queuetest.Item(0, "a.example", 1, 0.5)})
		var he *Error
		if !errors.Is(err, bus.ErrFenced) || !errors.As(err, &he) || IsRetryable(err) {
			t.Fatalf("Schedule = %v, want a non-retryable *Error matching bus.ErrFenced", err)
		}
		if f.calls["putMultiple"] != 0 {
			t.Fatalf("putMultiple called %d times after the fence was lost", f.calls["putMultiple"])
		}
		if n, _ := q.Count(t.Context(), 0); n != 0 {
			t.Fatalf("%d queue rows written by a fenced Schedule", n)
		}
	})
	t.Run("a retried put", func(t *testing.T) {
		f := newFakeHBase()
		st := newFakeClient(f, quickConfig()).States()
		var lost atomic.Bool
		f.fail = func(op string) error {
			if op == "putMultiple" && !lost.Load() {
				lost.Store(true) // lost while the client backs off after a broken connection
				return thrift.NewTTransportException(thrift.END_OF_FILE, "connection reset")
			}
			return nil
		}
		err := st.Put(fencedCtx(t.Context(), &lost), []frontier.Fingerprint{{1}}, []state.Entry{{State: frontier.Crawled}})
		if !errors.Is(err, bus.ErrFenced) {
			t.Fatalf("Put = %v, want bus.ErrFenced", err)
		}
		if f.calls["putMultiple"] != 1 {
			t.Fatalf("putMultiple called %d times, want only the attempt made while owned", f.calls["putMultiple"])
		}
	})
	t.Run("ack is not fenced", func(t *testing.T) {
		f := newFakeHBase()
		q := newFakeClient(f, quickConfig()).Queue()
		it := queuetest.Item(0, "a.example", 1, 0.5)
		if err := q.Schedule(t.Context(), []queue.Item{it}); err != nil {
			t.Fatal(err)
		}
		var lost atomic.Bool
		lost.Store(true)
		if err := q.Ack(fencedCtx(t.Context(), &lost), []queue.Item{it}); err != nil {
			t.Fatalf("Ack with the fence lost: %v", err)
		}
		if n, _ := q.Count(t.Context(), 0); n != 0 {
			t.Fatalf("%d rows left after Ack", n)
		}
	})
	t.Run("no fence", func(t *testing.T) {
		q := newFakeClient(newFakeHBase(), quickConfig()).Queue()
		if err := q.Schedule(t.Context(), []queue.Item{queuetest.Item(0, "a.example", 1, 0.5)}); err != nil {
			t.Fatalf("Schedule without a fence: %v", err)
		}
	})
}
