package strategyworker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/scope"
	"github.com/frontiercrawl/frontier/state"
)

// A worker whose fence says its partition is gone writes no state for it (and commits nothing): the states
// are HBase writes no bus call guards, so the worker asks the fence itself right before them.
func TestFencedWorkerWritesNoState(t *testing.T) {
	r := newRig(t)
	seed := req("http://a.com/", 0)
	r.publish(t, &frontier.AddSeeds{Seeds: []*frontier.Request{seed}})
	cfg := DefaultConfig()
	cfg.Scope.Follow = scope.FollowAny
	w, err := New(cfg, Deps{Bus: r.bus, Codec: r.codec, States: r.states,
		Fingerprint: func(u string) (frontier.Fingerprint, error) { return sha(u), nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	ctx = bus.WithFence(ctx, func(context.Context) error {
		return fmt.Errorf("test: partition given away: %w", bus.ErrFenced)
	})
	if err := w.Run(ctx); !errors.Is(err, bus.ErrFenced) {
		t.Fatalf("Run = %v, want an error matching bus.ErrFenced", err)
	}
	out, found := make([]state.Entry, 1), make([]bool, 1)
	if err := r.states.Get(t.Context(), []frontier.Fingerprint{sha(seed.URL)}, out, found); err != nil {
		t.Fatal(err)
	}
	if found[0] {
		t.Errorf("state of the seed = %+v after a fenced batch, want it unwritten", out[0])
	}
	if lag, _ := r.bus.Lag(t.Context(), bus.SpiderLog, bus.GroupStrategyWorkerSpiderLog); lag[0] != 1 {
		t.Errorf("spider-log lag = %d, want 1 (not committed: the next owner replays the batch)", lag[0])
	}
}

type blockedHosts map[string]bool

func (b blockedHosts) Blocked(host string) bool { return b[host] }

// A link to a blocked host is scored and queued like any other (the DB workers hold it until unblock: dropping
// it would lose it), and counted as held back by the block.
func TestBlockedHostLinksQueuedAndCounted(t *testing.T) {
	r := newRig(t)
	page := req("http://a.com/", 0)
	r.publish(t, &frontier.AddSeeds{Seeds: []*frontier.Request{page}},
		&frontier.LinksExtracted{Request: page, Links: []*frontier.Request{req("http://blocked.com/x", 1), req("http://a.com/y", 1)}})
	cfg := DefaultConfig()
	cfg.Scope.Follow = scope.FollowAny
	w, err := New(cfg, Deps{Bus: r.bus, Codec: r.codec, States: r.states, Control: blockedHosts{"blocked.com": true},
		Fingerprint: func(u string) (frontier.Fingerprint, error) { return sha(u), nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var urls []string
	for len(urls) < 3 {
		for _, us := range r.scores(t) {
			urls = append(urls, us.Request.URL)
		}
		if len(urls) < 3 {
			urls = nil
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(urls, "http://blocked.com/x") {
		t.Errorf("scored %v: the blocked host's link must be queued (held by the DB workers), not dropped", urls)
	}
	if n := w.nBlocked.Load(); n != 1 {
		t.Errorf("blocked_scheduled = %d, want 1", n)
	}
}
