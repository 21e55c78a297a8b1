//go:build integration

package launch

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/control"
	"github.com/frontiercrawl/frontier/frontiertest/cluster"
	"github.com/frontiercrawl/frontier/urlfrontier/urlfrontierpb"
)

// testGateway is the urlfrontier role (cmd/urlfrontier) run by a test, and a client of its URLFrontier API.
type testGateway struct {
	t      *testing.T
	client urlfrontierpb.URLFrontierClient
	done   chan error // Run's error, once it returned
	cancel context.CancelFunc
}

// startGateway runs the urlfrontier role on env's topics (configs/spider.yaml, partition 0), serving on a free
// loopback port, until ctx ends or stop.
func startGateway(t *testing.T, ctx context.Context, env *cluster.Env) *testGateway {
	t.Helper()
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
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	rctx, cancel := context.WithCancel(ctx)
	g := &testGateway{t: t, client: urlfrontierpb.NewURLFrontierClient(conn), done: make(chan error, 1), cancel: cancel}
	go func() { g.done <- Run(rctx, "urlfrontier", args) }()
	return g
}

// alive fails the test if the gateway stopped.
func (g *testGateway) alive() {
	select {
	case err := <-g.done:
		g.done <- err
		g.t.Fatalf("the gateway stopped: %v", err)
	default:
	}
}

// stop ends the gateway's context and returns what Run returned.
func (g *testGateway) stop() error {
	g.cancel()
	return <-g.done
}

// TestGatewayOverKafka runs the urlfrontier role (cmd/urlfrontier) on a run's own topics and tables of the real
// servers (it reads the crawl's HBase tables for GetURLStatus): it
// serves the URLFrontier API on --addr until its context ends, then stops cleanly.
func TestGatewayOverKafka(t *testing.T) {
	env := cluster.New(t, "gw", cluster.Partitions{SpiderLog: 1, ScoringLog: 1, SpiderFeed: 1})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	g := startGateway(t, ctx, env)
	cluster.WaitFor(t, ctx, "the gateway to answer GetStats", func() bool {
		g.alive()
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		defer ccancel()
		_, err := g.client.GetStats(cctx, &urlfrontierpb.QueueWithinCrawlParams{})
		return err == nil
	})
	if err := g.stop(); err != nil {
		t.Fatalf("the gateway after its context ended: %v", err)
	}
}

// TestGatewayFollowsControl runs the urlfrontier role on a run's own topics and tables with a block already on the control
// stream: the gateway replays it before it takes anything, so the blocked host's URL, taken from the feed into
// its store, is not handed out while another host's is; an unblock sent while it runs is followed, and the URL
// goes out.
func TestGatewayFollowsControl(t *testing.T) {
	env := cluster.New(t, "gwctl", cluster.Partitions{SpiderLog: 1, ScoringLog: 1, SpiderFeed: 1})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	b := env.Bus(t, "test", nil, nil)
	send := func(c control.Command) {
		t.Helper()
		// A new topic can look missing to a new client for a few seconds (kafka-go's metadata cache).
		cluster.WaitFor(t, ctx, "the control command "+c.Op+" to be sent", func() bool {
			err := control.Send(ctx, b, c)
			if err != nil {
				t.Logf("control send: %v (retrying)", err)
			}
			return err == nil
		})
	}
	send(control.Command{Op: control.OpBlock, Target: "blocked.test", ID: "gw-1"})

	g := startGateway(t, ctx, env)
	defer func() {
		if err := g.stop(); err != nil {
			t.Errorf("the gateway after its context ended: %v", err)
		}
	}()

	feed, err := b.Producer(ctx, bus.SpiderFeed, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	enc := codec.Msgpack{}
	for _, u := range []string{"http://ok.test/1", "http://www.blocked.test/1"} {
		v, err := enc.EncodeRequest(&frontier.Request{URL: u, Method: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		if err := feed.Send(ctx, bus.Message{Key: []byte(u), Value: v, Partition: 0}); err != nil {
			t.Fatal(err)
		}
	}

	client := g.client
	cluster.WaitFor(t, ctx, "the gateway to hold both feed requests", func() bool {
		g.alive()
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		defer ccancel()
		st, err := client.GetStats(cctx, &urlfrontierpb.QueueWithinCrawlParams{})
		return err == nil && st.GetSize() == 2
	})
	get := func() []string {
		t.Helper()
		s, err := client.GetURLs(ctx, &urlfrontierpb.GetParams{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for {
			u, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, u.GetUrl())
		}
	}
	if got := get(); len(got) != 1 || got[0] != "http://ok.test/1" {
		t.Fatalf("with blocked.test blocked (replayed at start) GetURLs handed out %v, want [http://ok.test/1]", got)
	}

	send(control.Command{Op: control.OpUnblock, Target: "blocked.test", ID: "gw-2"})
	var got []string
	cluster.WaitFor(t, ctx, "the unblocked host's URL to be handed out", func() bool {
		g.alive()
		got = get()
		return len(got) > 0
	})
	if len(got) != 1 || got[0] != "http://www.blocked.test/1" {
		t.Fatalf("after the unblock GetURLs handed out %v, want [http://www.blocked.test/1]", got)
	}
}
