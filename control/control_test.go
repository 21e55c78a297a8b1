package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/membus"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		in, err string
	}{
		{in: `{"op":"block","target":"example.com","id":"x"}`},
		{in: `{"op":"pause"}`},
		{in: `{"op":"resume","at":"2026-01-01T00:00:00Z"}`},
		{in: `{"op":"block"}`, err: "needs a host"},
		{in: `{"op":"block","target":"http://example.com/"}`, err: "lower-case host name"},
		{in: `{"op":"block","target":"Example.com"}`, err: "lower-case host name"},
		{in: `{"op":"pause","target":"a"}`, err: "takes no target"},
		{in: `{"op":"drop"}`, err: "unknown op"},
		{in: `{"op":"pause","extra":1}`, err: "not a command"},
		{in: `{"op":"pause"} {"op":"resume"}`, err: "more than one"},
		{in: `garbage`, err: "not a command"},
	} {
		_, err := Decode([]byte(tc.in))
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Decode(%s) = %v, want error containing %q", tc.in, err, tc.err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"op":"block","target":"example.com","id":"x"}`))
	f.Add([]byte(`{"op":"pause"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Encode(c)
		if err != nil {
			t.Fatalf("decoded command %+v does not encode: %v", c, err)
		}
		if c2, err := Decode(again); err != nil || c2 != c {
			t.Fatalf("round trip %+v → %s → %+v, %v", c, again, c2, err)
		}
	})
}

func TestState(t *testing.T) {
	var s State
	s.Apply(Command{Op: OpBlock, Target: "example.com"})
	s.Apply(Command{Op: OpBlock, Target: "b.org"})
	s.Apply(Command{Op: OpPause})
	for host, want := range map[string]bool{"example.com": true, "www.example.com": true, "badexample.com": false, "org": false, "a.b.org": true} {
		if s.Blocked(host) != want {
			t.Errorf("Blocked(%s) = %v, want %v", host, !want, want)
		}
	}
	if !s.Paused() {
		t.Error("not paused")
	}
	s.Apply(Command{Op: OpUnblock, Target: "example.com"})
	s.Apply(Command{Op: OpResume})
	if s.Blocked("www.example.com") || s.Paused() || strings.Join(s.BlockedList(), ",") != "b.org" {
		t.Errorf("after unblock and resume: paused %v, blocked %v", s.Paused(), s.BlockedList())
	}
}

// TestFollow: a follower started late replays what was sent before, then applies what comes after.
func TestFollow(t *testing.T) {
	cfg := membus.DefaultConfig()
	cfg.Partitions[bus.Control] = 1
	b, err := membus.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := t.Context()
	if err := Send(ctx, b, Command{Op: OpBlock, Target: "a.com"}, Command{Op: OpPause}, Command{Op: OpBlock, Target: "b.com"}, Command{Op: OpUnblock, Target: "a.com"}); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	f, err := Follow(ctx, b, "test", time.Second, nil, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	if !f.State.Paused() || f.State.Blocked("a.com") || !f.State.Blocked("b.com") {
		t.Fatalf("replayed state: paused %v, blocked %v", f.State.Paused(), f.State.BlockedList())
	}
	if err := Send(ctx, b, Command{Op: OpResume}); err != nil {
		t.Fatal(err)
	}
	for f.State.Paused() {
		select {
		case <-ctx.Done():
			t.Fatal("resume not applied")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := Send(ctx, b, Command{Op: "nope"}); err == nil {
		t.Fatal("Send accepted an invalid command")
	}
}

// stallingBus is a membus whose control consumers wait out the deadline of their first stalls fetches (a slow
// or restarting broker), and whose control stream cannot be read for its first unavailable calls (a topic not
// created yet, Kafka down).
type stallingBus struct {
	*membus.Bus
	stalls      atomic.Int64
	unavailable atomic.Int64
	failed      atomic.Int64
	onFail      func(n int64) // called with the number of failed calls so far
}

func (b *stallingBus) Lag(ctx context.Context, s bus.Stream, group string) (map[int]int64, error) {
	if s == bus.Control && b.unavailable.Add(-1) >= 0 {
		if n := b.failed.Add(1); b.onFail != nil {
			b.onFail(n)
		}
		return nil, errors.New("topic frontier-control does not exist")
	}
	return b.Bus.Lag(ctx, s, group)
}

func (b *stallingBus) Consumer(ctx context.Context, s bus.Stream, group string, parts []int) (bus.Consumer, error) {
	c, err := b.Bus.Consumer(ctx, s, group, parts)
	if err != nil || s != bus.Control {
		return c, err
	}
	return &stallingConsumer{Consumer: c, b: b}, nil
}

type stallingConsumer struct {
	bus.Consumer
	b *stallingBus
}

func (c *stallingConsumer) Fetch(ctx context.Context, max int) ([]bus.Message, error) {
	if c.b.stalls.Add(-1) >= 0 {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return c.Consumer.Fetch(ctx, max)
}

func newStallingBus(t *testing.T) *stallingBus {
	cfg := membus.DefaultConfig()
	cfg.Partitions[bus.Control] = 1
	b, err := membus.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return &stallingBus{Bus: b}
}

// TestFollowReplaysPastStalls: a replay whose reads stall many times longer than the reminder interval still
// reads to the end offset before Follow returns, so a block sent before the start is never missed (the replay
// used to end after one stall, and the worker dispatched the blocked host).
func TestFollowReplaysPastStalls(t *testing.T) {
	b := newStallingBus(t)
	ctx := t.Context()
	var cmds []Command
	for i := range 3000 { // more than one fetch's worth
		cmds = append(cmds, Command{Op: OpBlock, Target: fmt.Sprintf("h%d.example", i)})
	}
	cmds = append(cmds, Command{Op: OpPause})
	if err := Send(ctx, b, cmds...); err != nil {
		t.Fatal(err)
	}
	b.stalls.Store(5)
	var logs strings.Builder
	f, err := Follow(ctx, b, "test", time.Millisecond, slog.New(slog.NewTextHandler(&logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	if !f.State.Paused() || len(f.State.BlockedList()) != 3000 || !f.State.Blocked("h2999.example") {
		t.Fatalf("after the replay: paused %v, %d blocked; want paused and 3000 blocked", f.State.Paused(), len(f.State.BlockedList()))
	}
	if n := strings.Count(logs.String(), "replay still waiting"); n != 5 {
		t.Errorf("%d reminders logged for 5 stalls:\n%s", n, logs.String())
	}
}

// TestFollowWaitsForTheStream: a control stream that cannot be read at start is waited for (one Warn when the
// wait starts, one Info when it ends), not skipped; the follower starts with every command sent meanwhile.
func TestFollowWaitsForTheStream(t *testing.T) {
	b := newStallingBus(t)
	ctx := t.Context()
	if err := Send(ctx, b, Command{Op: OpBlock, Target: "blocked.example"}); err != nil {
		t.Fatal(err)
	}
	b.unavailable.Store(4)
	var logs strings.Builder
	reg := prometheus.NewRegistry()
	f, err := FollowWait(ctx, b, "test", time.Hour, slog.New(slog.NewTextHandler(&logs, nil)), reg)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	if b.failed.Load() != 4 {
		t.Errorf("%d failed tries, want 4", b.failed.Load())
	}
	if !f.State.Blocked("blocked.example") {
		t.Fatal("the follower started without the block sent before it")
	}
	out := logs.String()
	if strings.Count(out, "level=WARN msg=\"waiting for the control stream\"") != 1 || !strings.Contains(out, "the control stream reachable again") {
		t.Errorf("logs do not show one outage of the control stream:\n%s", out)
	}

	// Given up only when its context ends.
	b.unavailable.Store(1 << 40)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.onFail = func(n int64) {
		if n == 6 {
			cancel()
		}
	}
	if _, err := FollowWait(cctx, b, "test2", time.Hour, nil, reg); !errors.Is(err, context.Canceled) {
		t.Fatalf("FollowWait on a stream that never opens = %v, want context.Canceled when ctx ends", err)
	}
}
