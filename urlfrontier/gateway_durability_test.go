package urlfrontier

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/membus"
	"github.com/frontiercrawl/frontier/codec"
)

// TestGatewayFeedCommitSurvivesCrash: the gateway commits a feed message once its request is in the store, not
// once a client reported its outcome. That is safe because the store's write is synced before the commit: a
// crash right after the commit (everything not fsynced lost: vfs.MemFS.CrashClone) keeps the request, and the
// restarted gateway hands it out. Without synced writes (StoreConfig.Sync false; the standalone with
// standalone.pebble.sync false) the same crash loses it while the feed's offset stays committed: the
// commit is exactly as durable as the store.
func TestGatewayFeedCommitSurvivesCrash(t *testing.T) {
	for _, tc := range []struct {
		sync bool
		want int
	}{{true, 1}, {false, 0}} {
		b, err := membus.New(membus.DefaultConfig(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		fs := vfs.NewCrashableMem()
		open := func() (*Gateway, func()) {
			cfg := DefaultGatewayConfig()
			cfg.Store.Dir, cfg.Store.FS, cfg.Store.Sync, cfg.Partitions = "gw", fs, tc.sync, []int{0}
			g, err := OpenGateway(t.Context(), cfg, GatewayDeps{Bus: b, Codec: codec.Msgpack{}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- g.Run(ctx) }()
			return g, func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("gateway Run: %v", err)
				}
			}
		}
		g, stop := open()
		feed, err := b.Producer(t.Context(), bus.SpiderFeed, nil)
		if err != nil {
			t.Fatal(err)
		}
		v, err := codec.Msgpack{}.EncodeRequest(&frontier.Request{URL: "http://crash.test/1", Method: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		if err := feed.Send(t.Context(), bus.Message{Value: v, Partition: 0}); err != nil {
			t.Fatal(err)
		}
		for {
			lags, err := b.Lag(t.Context(), bus.SpiderFeed, bus.GroupSpiderFeed)
			if err != nil {
				t.Fatal(err)
			}
			if lags[0] == 0 {
				break
			}
			select {
			case <-t.Context().Done():
				t.Fatal("the feed message was never committed")
			case <-time.After(5 * time.Millisecond):
			}
		}
		// The crash, right after the commit: the files as they were last synced.
		crashed := fs.CrashClone(vfs.CrashCloneCfg{})
		stop()
		g.Close()
		fs = crashed

		g, stop = open()
		if err := g.SetDelay(t.Context(), "", "", 0); err != nil {
			t.Fatal(err)
		}
		got, err := g.Get(t.Context(), GetParams{})
		stop()
		g.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.want {
			t.Errorf("sync %v: after a crash past the feed commit, GetURLs handed out %v, want %d URL(s)", tc.sync, urlsOf(got), tc.want)
		}
	}
}
