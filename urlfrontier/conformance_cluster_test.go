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
)

// gateway is one run of the cluster gateway in this test process, as cmd/urlfrontier runs it: the Gateway
// over the cluster's bus, served on a loopback port.
type gateway struct {
	cancel context.CancelFunc
	done   chan error
}

func startGateway(t testing.TB, c *cluster.Cluster, dir, addr string, parts []int) *gateway {
	t.Helper()
	cfg := urlfrontier.DefaultGatewayConfig()
	cfg.Store.Dir = filepath.Join(dir, "urlfrontier")
	cfg.Partitions = parts
	log := slog.New(frontiertest.NewLogHandler(t, slog.LevelInfo)).With("component", "urlfrontier")
	g, err := urlfrontier.OpenGateway(t.Context(), cfg, urlfrontier.GatewayDeps{Bus: c.Bus, Codec: c.Codec, Identity: c.Identity, Logger: log})
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
func TestConformanceCluster(t *testing.T) {
	env := cluster.New(t, "uf", cluster.Partitions{SpiderLog: 2, ScoringLog: 1, SpiderFeed: 2})
	roles := cluster.FastRoles()
	roles.NoSpiders = true
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
