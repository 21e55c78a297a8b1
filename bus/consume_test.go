package bus_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/membus"
)

func TestConsume(t *testing.T) {
	b, err := membus.New(membus.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, _ := b.Producer(t.Context(), bus.ScoringLog, nil)
	defer p.Close()
	for _, v := range []string{"1", "2", "x", "3"} { // "x" is malformed
		if err := p.Send(t.Context(), bus.Message{Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	atoi := func(m bus.Message) (int, error) { return strconv.Atoi(string(m.Value)) }
	lag := func() int64 { l, _ := b.Lag(t.Context(), bus.ScoringLog, "g"); return l[0] }

	// A failing handler commits nothing.
	c, _ := b.Consumer(t.Context(), bus.ScoringLog, "g", []int{0})
	boom := errors.New("boom")
	if err := bus.Consume(t.Context(), c, 10, time.Second, atoi, func(context.Context, []int) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Consume = %v, want boom", err)
	}
	c.Close()
	if lag() != 4 {
		t.Fatalf("lag after a failed batch = %d, want 4", lag())
	}

	// ErrStop commits the batch (malformed message included) and ends with nil. The malformed message was
	// reported on both deliveries: the failed batch and its replay.
	c, _ = b.Consumer(t.Context(), bus.ScoringLog, "g", []int{0})
	var got []int
	err = bus.Consume(t.Context(), c, 10, time.Second, atoi, func(_ context.Context, vs []int) error {
		got = append(got, vs...)
		return bus.ErrStop
	})
	c.Close()
	if err != nil || len(got) != 3 || lag() != 0 || b.Malformed() != 2 {
		t.Fatalf("ErrStop: err %v, values %v, lag %d, malformed %d", err, got, lag(), b.Malformed())
	}

	// An ended context ends Consume with nil.
	c, _ = b.Consumer(t.Context(), bus.ScoringLog, "g", []int{0})
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := bus.Consume(ctx, c, 10, time.Second, atoi, func(context.Context, []int) error { return nil }); err != nil {
		t.Fatalf("Consume after ctx ended = %v", err)
	}
}

func TestGraceStartsWhenTheParentEnds(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.Background())
	ctx, cancel := bus.Grace(parent, time.Hour)
	defer cancel()
	select {
	case <-ctx.Done():
		t.Fatal("graced context ended before its parent")
	case <-time.After(20 * time.Millisecond):
	}
	if _, ok := ctx.Deadline(); ok {
		t.Fatal("graced context has a deadline while its parent runs")
	}
	cancelParent()
	ctx2, cancel2 := bus.Grace(parent, time.Millisecond)
	defer cancel2()
	<-ctx2.Done() // the parent has ended: the grace runs out
	if ctx.Err() != nil {
		t.Fatal("an hour's grace ended at once")
	}
}
