package dbworker

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/membus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/queue"
)

// A role whose fence says the partitions are gone writes nothing to HBase for them: the scoring role schedules
// no row, the links role records no page, and neither commits; with the fence passing, both write.
func TestFencedRolesWriteNothing(t *testing.T) {
	host := "h.test"
	for _, tc := range []struct {
		role   string
		stream bus.Stream
		msg    frontier.Message
		group  string
	}{
		{RoleScoring, bus.ScoringLog, &frontier.UpdateScore{Request: req("http://h.test/a", host), Score: 0.5, Schedule: true}, bus.GroupDBWorkerScoringLog},
		{RoleLinks, bus.SpiderLog, &frontier.LinksExtracted{Request: req("http://h.test/", host), Links: []*frontier.Request{req("http://h.test/b", host)}}, bus.GroupDBWorkerSpiderLog},
	} {
		for _, lost := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/lost=%v", tc.role, lost), func(t *testing.T) {
				b, err := membus.New(membus.DefaultConfig(), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				c := codec.Msgpack{}
				q, pages := queue.NewMemory(), metadata.NewMemory()
				cfg := DefaultConfig()
				cfg.Roles = []string{tc.role}
				w, err := New(cfg, Deps{Bus: b, Codec: c, Queue: q, Pages: pages})
				if err != nil {
					t.Fatal(err)
				}
				v, err := c.EncodeMessage(tc.msg)
				if err != nil {
					t.Fatal(err)
				}
				p, _ := b.Producer(t.Context(), tc.stream, nil)
				if err := p.Send(t.Context(), bus.Message{Value: v}); err != nil {
					t.Fatal(err)
				}
				p.Close()
				var checks atomic.Int64
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				ctx = bus.WithFence(ctx, func(context.Context) error {
					checks.Add(1)
					if lost {
						return fmt.Errorf("test: partitions given away: %w", bus.ErrFenced)
					}
					return nil
				})
				done := make(chan error, 1)
				go func() { done <- w.Run(ctx) }()
				var runErr error
				if lost {
					runErr = <-done
					if !errors.Is(runErr, bus.ErrFenced) {
						t.Fatalf("Run = %v, want an error matching bus.ErrFenced", runErr)
					}
				} else {
					waitFor(t, "the write", func() bool {
						n, _ := q.Count(t.Context(), 0)
						_, ok, _ := pages.Get(t.Context(), fpOf("http://h.test/b"))
						return n > 0 || ok
					})
					cancel()
					if err := <-done; err != nil {
						t.Fatal(err)
					}
				}
				if checks.Load() == 0 {
					t.Error("the fence was never asked")
				}
				n := int64(0)
				for part := range b.Partitions(bus.SpiderFeed) {
					c, _ := q.Count(t.Context(), part)
					n += c
				}
				_, recorded, _ := pages.Get(t.Context(), fpOf("http://h.test/b"))
				wrote := n > 0 || recorded
				if wrote == lost {
					t.Errorf("queue rows %d, page recorded %v: want a write only while the partitions are owned", n, recorded)
				}
				lag, _ := b.Lag(t.Context(), tc.stream, tc.group)
				if lost && lag[0] != 1 {
					t.Errorf("lag of %s = %d after a fenced batch, want 1 (not committed: the next owner replays it)", tc.stream, lag[0])
				}
			})
		}
	}
}

func fpOf(u string) frontier.Fingerprint { s := sha1.Sum([]byte(u)); return s[:] }

// A stale counter write (a DB worker that lost its spider-log partition and resumed) is harmless: offsets the
// new owner counted are not counted again, and offsets it had not counted yet are counted once, whichever of
// the two writes them first.
func TestStaleCounterWriteHarmless(t *testing.T) {
	now := time.Unix(6000, 0)
	crawled := func(u string) frontier.Message {
		return &frontier.PageCrawled{Response: &frontier.Response{Request: req(u, "a.com"), Status: 200}}
	}
	events := []frontier.Message{crawled("http://a.com/1"), crawled("http://a.com/2"), crawled("http://a.com/3"), crawled("http://a.com/4")}
	at := []position{{0, 10}, {0, 11}, {0, 12}, {0, 13}}
	for _, tc := range []struct {
		name  string
		order []string // who writes, in order: "stale" writes events[:3] (its uncommitted batch), "owner" all four
	}{
		{"stale after the owner", []string{"owner", "stale"}},
		{"stale before the owner", []string{"stale", "owner"}},
		{"stale between two owner batches", []string{"owner2", "stale", "owner"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := metadata.NewMemoryDomains()
			stale := &Worker{deps: Deps{Counters: d, Now: func() time.Time { return now }}}
			owner := &Worker{deps: Deps{Counters: d, Now: func() time.Time { return now }}}
			for _, who := range tc.order {
				var err error
				switch who {
				case "stale":
					err = stale.count(t.Context(), events[:3], at[:3])
				case "owner":
					err = owner.count(t.Context(), events, at)
				case "owner2":
					err = owner.count(t.Context(), events[:2], at[:2])
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			got, err := d.Get(t.Context(), CounterCrawled, []string{CounterRow})
			if err != nil || got[0] != 4 {
				t.Errorf("crawled = %v, %v, want 4", got, err)
			}
		})
	}
}
