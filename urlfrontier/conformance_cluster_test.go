//go:build integration

package urlfrontier_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/cluster"
	"github.com/frontiercrawl/frontier/urlfrontier"
	pb "github.com/frontiercrawl/frontier/urlfrontier/urlfrontierpb"
)

// gateway is one run of the cluster gateway in this test process, as cmd/urlfrontier runs it: the Gateway
// over the cluster's bus, reading the crawl's HBase tables for GetURLStatus, served on a loopback port.
type gateway struct {
	cancel context.CancelFunc
	done   chan error
}

func startGateway(t testing.TB, c *cluster.Cluster, dir, addr string, parts []int, opts ...func(*urlfrontier.GatewayConfig)) *gateway {
	t.Helper()
	cfg := urlfrontier.DefaultGatewayConfig()
	cfg.Store.Dir = filepath.Join(dir, "urlfrontier")
	cfg.Partitions = parts
	for _, o := range opts {
		o(&cfg)
	}
	log := slog.New(frontiertest.NewLogHandler(t, slog.LevelInfo)).With("component", "urlfrontier")
	g, err := urlfrontier.OpenGateway(t.Context(), cfg, urlfrontier.GatewayDeps{Bus: c.Bus, Codec: c.Codec, Identity: c.Identity, Logger: log,
		Crawl: &urlfrontier.CrawlStores{States: c.HBase.States(), Pages: c.HBase.Pages()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	gw := &gateway{cancel: cancel, done: make(chan error, 2)}
	ran := make(chan error, 2)
	go func() { ran <- g.Run(ctx) }()
	go func() { ran <- urlfrontier.ServeBackend(ctx, g, urlfrontier.ServeConfig{Addr: addr}, log, nil) }()
	go func() {
		err := <-ran
		if err != nil && ctx.Err() == nil {
			frontiertest.ErrorNow(t, "gateway on %s stopped while the test runs: %v", addr, err)
		}
		cancel()
		if err2 := <-ran; err == nil {
			err = err2
		}
		g.Close()
		gw.done <- err
	}()
	return gw
}

func (g *gateway) stop(t testing.TB) {
	t.Helper()
	g.cancel()
	if err := <-g.done; err != nil {
		t.Fatalf("gateway: %v", err)
	}
}

// TestConformanceCluster runs the conformance suite against the cluster gateway on the real servers: a
// strategy worker per spider-log partition and a DB worker on the run's topics and tables, and in place of the
// spiders one gateway that owns both spider-feed partitions. Every URL a client discovers goes round the loop
// before GetURLs hands it out (the suite waits for it); the restart subtest restarts the gateway on its data.
// The DB worker is configured for a cluster of gateways (gatewayPerHost, gatewayFeedBatch), as the benchmark's.
func TestConformanceCluster(t *testing.T) {
	env := cluster.New(t, "uf", cluster.Partitions{SpiderLog: 2, ScoringLog: 1, SpiderFeed: 2})
	roles := cluster.FastRoles()
	roles.NoSpiders = true
	roles.DBWorker.PerHost, roles.DBWorker.FeedBatch = gatewayPerHost, gatewayFeedBatch
	roles.Logger = slog.New(frontiertest.NewLogHandler(t, slog.LevelInfo))
	c := cluster.Start(t, t.Context(), env, roles)
	dir, addr := t.TempDir(), freePort(t)
	gw := startGateway(t, c, dir, addr, []int{0, 1})
	defer func() { gw.stop(t) }()
	conformance(t, target{addr: addr, loop: true, restart: func(t *testing.T) {
		gw.stop(t)
		gw = startGateway(t, c, dir, addr, []int{0, 1})
	}})
}

// TestGatewayBinary runs cmd/urlfrontier as an operator does (the spider's configuration, --partition-id,
// --addr) beside the cluster's strategy workers and DB worker: a discovered URL comes round the loop to it, a
// lease it handed out survives a SIGKILL and restart of the process, and the known put is acknowledged.
func TestGatewayBinary(t *testing.T) {
	env := cluster.New(t, "ufbin", cluster.Partitions{SpiderLog: 1, ScoringLog: 1, SpiderFeed: 1})
	roles := cluster.FastRoles()
	roles.NoSpiders = true
	cluster.Start(t, t.Context(), env, roles)
	dir := t.TempDir()
	bin := cluster.Build(t, t.Context(), "./cmd/urlfrontier")
	cfg := env.WriteConfig(t, filepath.Join(dir, "configs"), "spider.yaml", "log: {level: info, format: text}\nmetrics: {addr: \"127.0.0.1:0\"}\nspider: {state_dir: "+filepath.Join(dir, "state")+"}\n")
	procs := cluster.NewProcs(t, filepath.Join(dir, "logs"))
	addr := freePort(t)
	cmd := cluster.Cmd{Path: filepath.Join(bin, "urlfrontier"), Args: []string{"--addr", addr, "--config", cfg, "--partition-id", "0"}, CleanEnv: true}
	p := procs.Start("urlfrontier", cmd)
	c := dial(t, addr)
	ctx := t.Context()
	must[*pb.Empty](t)(c.SetDelay(ctx, &pb.QueueDelayParams{DelayRequestable: 0}))
	if acks := putURLs(t, c, discovered(info("", "", "http://bin.test/1"))); acks[0].Status != pb.AckMessage_OK {
		t.Fatalf("put: %v", acks[0])
	}
	arrived(t, c, "", 1)
	if got := urls(getURLs(t, c, &pb.GetParams{DelayRequestable: 3600})); len(got) != 1 || got[0] != "http://bin.test/1" {
		t.Fatalf("GetURLs = %v", got)
	}
	p.Kill()
	<-p.Done()
	procs.Start("urlfrontier", cmd)
	c = dial(t, addr)
	if got := getURLs(t, c, &pb.GetParams{}); len(got) != 0 {
		t.Fatalf("after kill -9 and a restart, a leased URL was handed out again: %v", urls(got))
	}
	if acks := putURLs(t, c, known(info("", "", "http://bin.test/1"), 0)); acks[0].Status != pb.AckMessage_OK {
		t.Fatalf("known put: %v", acks[0])
	}
	if st := must[*pb.Stats](t)(c.GetStats(ctx, &pb.QueueWithinCrawlParams{})); st.Counts["completed"] != 1 || st.Size != 0 {
		t.Errorf("GetStats = %v", st)
	}
}
