package control

import (
	"strings"
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
