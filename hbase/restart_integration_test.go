//go:build integration

package hbase

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/queue/queuetest"
	"github.com/frontiercrawl/frontier/state"
)

// TestIntegrationHBaseRestart restarts HBase and its gateway with the deploy scripts (deploy/down hbase;
// deploy/up hbase) while a Client is open, and checks that the same Client reconnects by itself and that
// nothing acknowledged before the restart is lost: state entries, queue rows dispatched but not acknowledged,
// and the absence of acknowledged ones. It disturbs every other user of that HBase, so it runs only with
// FRONTIER_TEST_HBASE_RESTART=1.
func TestIntegrationHBaseRestart(t *testing.T) {
	cfg := testConfig(t)
	if os.Getenv("FRONTIER_TEST_HBASE_RESTART") != "1" {
		t.Skip("set FRONTIER_TEST_HBASE_RESTART=1 to restart the shared HBase with deploy/down and deploy/up")
	}
	dir := os.Getenv("FRONTIER_TEST_DEPLOY_DIR")
	if dir == "" {
		dir = "../deploy"
	}
	cfg.Retries, cfg.MaxRetryBackoff = 60, 2*time.Second // ride out the restart
	c := openTest(t, cfg, statesTable, queueTable)
	ctx := context.Background()

	st, q := c.States(), c.Queue()
	fps := make([]frontier.Fingerprint, 5000)
	es := make([]state.Entry, len(fps))
	for i := range fps {
		fps[i] = benchFP(i)
		es[i] = state.Entry{State: frontier.State(1 + i%3), RevisitAt: int64(i)}
	}
	if err := st.Put(ctx, fps, es); err != nil {
		t.Fatal(err)
	}
	var items []queue.Item
	for i := range 300 {
		items = append(items, queuetest.Item(0, fmt.Sprintf("h%d.example", i%11), i, float64(i%100)/100))
	}
	if err := q.Schedule(ctx, items); err != nil {
		t.Fatal(err)
	}
	batch, err := q.Next(ctx, 0, 0, queue.Limits{Max: 40, PerHost: 5})
	if err != nil || len(batch) != 40 {
		t.Fatalf("next: %d items, %v", len(batch), err)
	}
	if err := q.Ack(ctx, batch[:20]); err != nil {
		t.Fatal(err)
	}

	for _, step := range [][]string{{"down", "hbase"}, {"up", "hbase"}} {
		start := time.Now()
		cmd := exec.Command(filepath.Join(dir, step[0]), step[1:]...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("deploy/%s: %v\n%s", step[0], err, out)
		}
		t.Logf("deploy/%s hbase took %v", step[0], time.Since(start).Round(time.Millisecond))
	}

	// The same client: its pooled connections are dead and must be replaced transparently.
	start := time.Now()
	out, found := make([]state.Entry, len(fps)), make([]bool, len(fps))
	if err := st.Get(ctx, fps, out, found); err != nil {
		t.Fatalf("states after restart: %v", err)
	}
	t.Logf("first call after the restart answered in %v", time.Since(start).Round(time.Millisecond))
	for i := range fps {
		if !found[i] || out[i] != es[i] {
			t.Fatalf("state %d after restart: %+v found=%v, want %+v", i, out[i], found[i], es[i])
		}
	}
	if n, err := q.Count(ctx, 0); err != nil || n != 280 {
		t.Fatalf("queue count after restart = %d, %v; want 280", n, err)
	}
	rest, err := q.Next(ctx, 0, 0, queue.Limits{Max: 1000})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, it := range rest {
		seen[string(it.Fingerprint)] = true
	}
	for _, it := range batch[:20] {
		if seen[string(it.Fingerprint)] {
			t.Fatalf("acknowledged %s came back", it.Request)
		}
	}
	for _, it := range batch[20:] {
		if !seen[string(it.Fingerprint)] {
			t.Fatalf("dispatched, unacknowledged %s lost", it.Request)
		}
	}
}
