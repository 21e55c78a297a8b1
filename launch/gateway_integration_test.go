//go:build integration

package launch

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/frontiercrawl/frontier/frontiertest/cluster"
	"github.com/frontiercrawl/frontier/urlfrontier/urlfrontierpb"
)

// TestGatewayOverKafka runs the urlfrontier role (cmd/urlfrontier) on a run's own topics of a real broker: it
// serves the URLFrontier API on --addr until its context ends, then stops cleanly.
func TestGatewayOverKafka(t *testing.T) {
	env := cluster.Topics(t, "gw", cluster.Partitions{SpiderLog: 1, ScoringLog: 1, SpiderFeed: 1})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	args := []string{"--config", "../configs/spider.yaml", "--partition-id", "0", "--addr", addr,
		"--set", "metrics.addr=127.0.0.1:0", "--set", "spider.state_dir=" + t.TempDir()}
	for _, kv := range env.Sets() {
		args = append(args, "--set", kv)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- Run(rctx, "urlfrontier", args) }()

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := urlfrontierpb.NewURLFrontierClient(conn)
	cluster.WaitFor(t, ctx, "the gateway to answer GetStats", func() bool {
		select {
		case err := <-done:
			t.Fatalf("the gateway stopped: %v", err)
		default:
		}
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		defer ccancel()
		_, err := client.GetStats(cctx, &urlfrontierpb.QueueWithinCrawlParams{})
		return err == nil
	})
	stop()
	if err := <-done; err != nil {
		t.Fatalf("the gateway after its context ended: %v", err)
	}
}
