package urlfrontier_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/frontiercrawl/frontier/launch"
	pb "github.com/frontiercrawl/frontier/urlfrontier/urlfrontierpb"
)

// TestConformanceWithSeeds runs `standalone --urlfrontier ADDR --seeds FILE` with the default one spider: the
// gateway gets a spider-feed partition of its own beside the spider's, the spider crawls the seeds of its
// partition's hosts, and the API serves the crawl's own URLs of the gateway's partition's hosts (one crawl,
// one store): GetURLs hands out seeds the client never put, only some of them (the spider has the others),
// and a link the client reports from one of them comes back to it through the crawl's loop; GetURLStatus
// knows the spider's seeds from the crawl's states. The crawl's manifest records the gateway's partition: a
// resume without the gateway is refused.
func TestConformanceWithSeeds(t *testing.T) {
	if os.Getenv("FRONTIER_URLFRONTIER_ADDR") != "" {
		t.Skip("starts a standalone of its own")
	}
	dir := t.TempDir()
	var seeds []string
	for i := range 12 {
		seeds = append(seeds, fmt.Sprintf("http://seed%d.test/", i))
	}
	seedFile := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seedFile, []byte(strings.Join(seeds, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- launch.Run(ctx, "standalone", []string{"--config", "../configs/standalone.yaml", "--set", "metrics.addr=127.0.0.1:0",
			"--set", "standalone.data_dir=" + filepath.Join(dir, "data"), "--set", "log.level=warn",
			"--urlfrontier", addr, "--seeds", seedFile})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("standalone: %v", err)
			return
		}
		// Without --urlfrontier nothing would own the gateway's partition: refused, naming it.
		err := launch.Run(context.Background(), "standalone", []string{"--config", "../configs/standalone.yaml", "--set", "metrics.addr=127.0.0.1:0",
			"--set", "standalone.data_dir=" + filepath.Join(dir, "data"), "--set", "log.level=warn"})
		if err == nil || !strings.Contains(err.Error(), "URLFrontier gateway") {
			t.Errorf("a resume without the gateway: %v, want it refused for the gateway's partition", err)
		}
	}()
	c := dial(t, addr)
	must[*pb.Empty](t)(c.SetDelay(t.Context(), &pb.QueueDelayParams{DelayRequestable: 0}))

	// The seeds of the gateway's partition arrive through the crawl's loop; no client put them.
	var got []string
	deadline := time.Now().Add(time.Minute)
	for len(got) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("GetURLs handed out none of the seeds within a minute: the API does not serve the standalone's crawl")
		}
		got = append(got, urls(getURLs(t, c, &pb.GetParams{DelayRequestable: 600}))...)
		wait(t, 50*time.Millisecond)
	}
	// Let the rest of the gateway's seeds arrive, then take them too.
	wait(t, time.Second)
	got = sorted(append(got, urls(getURLs(t, c, &pb.GetParams{DelayRequestable: 600}))...))
	for _, u := range got {
		if !slices.Contains(seeds, u) {
			t.Errorf("GetURLs handed out %s, not a seed", u)
		}
	}
	if len(got) >= len(seeds) {
		t.Errorf("GetURLs handed out all %d seeds: the standalone's spider owns none of their hosts", len(got))
	}
	t.Logf("the gateway's partition holds %d of the %d seeds", len(got), len(seeds))

	// The client is a remote spider of the same crawl: it reports a seed fetched, with a link found on it, and
	// the link comes back to it through the strategy worker, the DB worker's queue and the feed.
	page := got[0]
	link := page + "found"
	src := &pb.URLInfo{Url: link, Metadata: map[string]*pb.StringList{"url.path": {Values: []string{page}}}}
	acks := putURLs(t, c, known(info("", "", page), 0), discovered(src))
	if st := statuses(acks); !slices.Equal(st, []pb.AckMessage_Status{pb.AckMessage_OK, pb.AckMessage_OK}) {
		t.Fatalf("known put of a seed and discovered link: %v, want OK OK", st)
	}
	deadline = time.Now().Add(time.Minute)
	for {
		if us := urls(getURLs(t, c, &pb.GetParams{Key: strings.TrimSuffix(strings.TrimPrefix(page, "http://"), "/")})); slices.Contains(us, link) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the link %s reported from %s never came back through the crawl's loop", link, page)
		}
		wait(t, 50*time.Millisecond)
	}
	// GetURLStatus answers for the crawl: a seed of the spider's hosts, which the gateway never held, is known
	// from the crawl's states (once the strategy worker has written them back).
	var other string
	for _, u := range seeds {
		if !slices.Contains(got, u) {
			other = u
			break
		}
	}
	deadline = time.Now().Add(time.Minute)
	for {
		it, err := c.GetURLStatus(t.Context(), &pb.URLStatusRequest{Url: other})
		if err == nil {
			if s := it.GetKnown().GetInfo().GetMetadata()["frontier.state"].GetValues(); len(s) != 1 {
				t.Errorf("GetURLStatus(%s) of a URL the crawl knows: metadata %v, want frontier.state", other, it.GetKnown().GetInfo().GetMetadata())
			}
			break
		}
		if status.Code(err) != codes.NotFound {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GetURLStatus(%s), a seed the spider crawls: still NOT_FOUND after a minute", other)
		}
		wait(t, 50*time.Millisecond)
	}
	st := must[*pb.URLItem](t)(c.GetURLStatus(t.Context(), &pb.URLStatusRequest{Url: page}))
	if st.GetKnown().GetRefetchableFromDate() != 0 {
		t.Errorf("GetURLStatus(%s) after it was reported fetched: refetchable_from_date %d, want 0 (done)", page, st.GetKnown().GetRefetchableFromDate())
	}
}
