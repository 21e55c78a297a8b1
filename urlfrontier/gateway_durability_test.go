package urlfrontier

import (
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
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
		t.Run(fmt.Sprintf("sync=%v", tc.sync), func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			w := newGWTestFS(t, fs, tc.sync)
			v, err := codec.Msgpack{}.EncodeRequest(&frontier.Request{URL: "http://crash.test/1", Method: "GET"})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.feed.Send(t.Context(), bus.Message{Value: v, Partition: 0}); err != nil {
				t.Fatal(err)
			}
			for {
				lags, err := w.b.Lag(t.Context(), bus.SpiderFeed, bus.GroupSpiderFeed)
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
			w.stop()
			w.fs = crashed
			w.start()
			got, err := w.g.Get(t.Context(), GetParams{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want {
				t.Errorf("sync %v: after a crash past the feed commit, GetURLs handed out %v, want %d URL(s)", tc.sync, urlsOf(got), tc.want)
			}
		})
	}
}
