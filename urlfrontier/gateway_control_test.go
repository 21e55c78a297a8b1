package urlfrontier

import (
	"slices"
	"testing"
	"time"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/control"
)

func TestHostIs(t *testing.T) {
	for _, c := range []struct {
		u, key string
		want   bool
	}{
		{"http://a.test/1", "a.test", true},
		{"https://A.test", "a.test", true},
		{"http://a.test:8080/x", "a.test", true},
		{"http://a.test?q", "a.test", true},
		{"http://a.test.evil/1", "a.test", false},
		{"http://sub.a.test/1", "a.test", false},
		{"http://user@a.test/1", "a.test", false}, // not decided here: parsed
		{"a.test/1", "a.test", false},
		{"http://b.test/", "mine", false},
	} {
		if got := hostIs(c.u, c.key); got != c.want {
			t.Errorf("hostIs(%q, %q) = %v, want %v", c.u, c.key, got, c.want)
		}
	}
}

// TestGatewayFollowsControl: with the crawl's control state, the gateway hands out no URL of a blocked host or
// domain (whether its queue is keyed by the host or by the client), holds them in its store, hands out
// nothing at all while paused, and hands the held URLs out once unblocked and resumed.
func TestGatewayFollowsControl(t *testing.T) {
	ctl := &control.State{}
	ctl.Apply(control.Command{Op: control.OpBlock, Target: "b.test"})
	w := newGWTestWith(t, ctl)
	mine := &frontier.Request{URL: "http://x.b.test/2", Meta: frontier.Map{{Key: MetaKeyQueue, Value: "mine"}}}
	for _, r := range []*frontier.Request{{URL: "http://a.test/1"}, {URL: "http://x.b.test/1"}, mine} {
		w.toFeed(r)
	}
	waitHeld(t, w, 3)
	got := urlsOf(w.getEventually(GetParams{}))
	if want := []string{"http://a.test/1"}; !slices.Equal(got, want) {
		t.Fatalf("with b.test blocked: GetURLs handed out %v, want %v", got, want)
	}

	ctl.Apply(control.Command{Op: control.OpPause})
	ctl.Apply(control.Command{Op: control.OpUnblock, Target: "b.test"})
	if got, err := w.g.Get(t.Context(), GetParams{}); err != nil || len(got) > 0 {
		t.Fatalf("paused: GetURLs handed out %v (%v), want nothing", urlsOf(got), err)
	}
	// Paused, the gateway still takes puts.
	if st := w.put(Put{Info: URLInfo{URL: "http://a.test/1"}, Known: true}); st[0] != OK {
		t.Fatalf("paused: known put answered %v, want OK", st[0])
	}

	ctl.Apply(control.Command{Op: control.OpResume})
	got = urlsOf(w.getEventually(GetParams{}))
	slices.Sort(got)
	if want := []string{"http://x.b.test/1", "http://x.b.test/2"}; !slices.Equal(got, want) {
		t.Fatalf("unblocked and resumed: GetURLs handed out %v, want %v", got, want)
	}
}

// newGWTestWith is newGWTest with the gateway obeying ctl.
func newGWTestWith(t *testing.T, ctl Control) *gwTest {
	t.Helper()
	w := newGWTest(t)
	w.ctl = ctl
	w.restart()
	return w
}

// waitHeld waits until the gateway's store holds n URLs not done (the feed is read asynchronously).
func waitHeld(t *testing.T, w *gwTest, n uint64) {
	t.Helper()
	for {
		st, err := w.g.Stats(t.Context(), DefaultCrawl, "")
		if err != nil {
			t.Fatal(err)
		}
		if size := st.Size; size >= n {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("the store holds %d URLs, want %d", st.Size, n)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func urlsOf(infos []URLInfo) []string {
	out := make([]string, len(infos))
	for i, u := range infos {
		out[i] = u.URL
	}
	return out
}
