package membus

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/bustest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func newTestBus(t *testing.T, partitions map[bus.Stream]int) bus.Bus {
	cfg := DefaultConfig()
	for s, n := range partitions {
		cfg.Partitions[s] = n
	}
	b, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func TestConformance(t *testing.T) {
	bustest.Run(t, newTestBus)
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	cfg := Config{
		Partitions: map[bus.Stream]int{bus.SpiderLog: 0, "bogus": 1},
		Groups:     map[bus.Stream][]string{"other": {""}},
		MaxBacklog: -1,
	}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("Validate of a bad config = nil")
	}
	for _, want := range []string{"partitions of spider-log = 0", "partitions of scoring-log = 0", `unknown stream "bogus"`,
		`groups: unknown stream "other"`, "empty group name", "max_backlog = -1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error %q does not mention %q", err, want)
		}
	}
}

// TestTrimAndBacklog shows the memory bound: committed messages are dropped once every interested group has
// committed them, and Send blocks while a partition is full.
func TestTrimAndBacklog(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxBacklog = 3
	b, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := t.Context()
	p, _ := b.Producer(ctx, bus.SpiderFeed, nil)
	if err := p.Send(ctx, bus.Message{Value: []byte("1")}, bus.Message{Value: []byte("2")}, bus.Message{Value: []byte("3")}); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	err = p.Send(short, bus.Message{Value: []byte("4")})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Send to a full partition = %v, want context.DeadlineExceeded", err)
	}
	c, _ := b.Consumer(ctx, bus.SpiderFeed, bus.GroupSpiderFeed, []int{0})
	msgs, err := c.Fetch(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	st := b.streams[bus.SpiderFeed]
	st.mu.Lock()
	start, held := st.parts[0].start, len(st.parts[0].msgs)
	st.mu.Unlock()
	if start != 2 || held != 1 {
		t.Fatalf("after committing 2 of 3 the partition starts at %d and holds %d, want 2 and 1", start, held)
	}
	done := make(chan error, 1)
	go func() { done <- p.Send(ctx, bus.Message{Value: []byte("4")}, bus.Message{Value: []byte("5")}) }()
	if err := <-done; err != nil {
		t.Fatalf("Send with room = %v", err)
	}
	// The spider-log keeps messages until both of Frontera's spider-log groups have committed them.
	pl, _ := b.Producer(ctx, bus.SpiderLog, nil)
	_ = pl.Send(ctx, bus.Message{Value: []byte("a")})
	sw, _ := b.Consumer(ctx, bus.SpiderLog, bus.GroupStrategyWorkerSpiderLog, []int{0})
	got, _ := sw.Fetch(ctx, 1)
	_ = sw.Commit(ctx, got)
	dbw, _ := b.Consumer(ctx, bus.SpiderLog, bus.GroupDBWorkerSpiderLog, []int{0})
	got, err = dbw.Fetch(ctx, 1)
	if err != nil || len(got) != 1 || string(got[0].Value) != "a" {
		t.Fatalf("DB worker after the strategy worker committed got %v, %v; want a", got, err)
	}
}

func TestMalformedCounted(t *testing.T) {
	b, _ := New(DefaultConfig(), nil)
	defer b.Close()
	ctx := t.Context()
	p, _ := b.Producer(ctx, bus.ScoringLog, nil)
	_ = p.Send(ctx, bus.Message{Value: []byte("x")}, bus.Message{Value: []byte("ok")})
	c, _ := b.Consumer(ctx, bus.ScoringLog, "g", []int{0})
	msgs, _ := c.Fetch(ctx, 10)
	out := bus.Decode(c, msgs, func(m bus.Message) (string, error) {
		if string(m.Value) == "x" {
			return "", errors.New("bad")
		}
		return string(m.Value), nil
	})
	if len(out) != 1 || out[0] != "ok" || b.Malformed() != 1 {
		t.Fatalf("Decode = %v with %d malformed, want [ok] and 1", out, b.Malformed())
	}
}
