package urlfrontier

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/frontiercrawl/frontier/urlfrontier/urlfrontierpb"
)

// TestMetricsCountPutsLeasesAndErrors: every put is counted by kind and status, every URL handed out, and every
// failed call by RPC.
func TestMetricsCountPutsLeasesAndErrors(t *testing.T) {
	cfg := DefaultStoreConfig()
	cfg.Dir, cfg.FS = "db", vfs.NewMem()
	st, err := OpenStore(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	reg := prometheus.NewRegistry()
	srv := NewServer(ServerDeps{Backend: st, Registerer: reg})
	g := grpc.NewServer(srv.Interceptors()...)
	srv.Register(g)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(ln)
	defer g.Stop()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := pb.NewURLFrontierClient(conn)
	ctx := context.Background()

	ps, err := c.PutURLs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://a.test/", "http://a.test/", "no host"} {
		ps.Send(&pb.URLItem{Item: &pb.URLItem_Discovered{Discovered: &pb.DiscoveredURLItem{Info: &pb.URLInfo{Url: u}}}})
	}
	ps.CloseSend()
	for {
		if _, err := ps.Recv(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	gs, err := c.GetURLs(ctx, &pb.GetParams{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := gs.Recv(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.SetDelay(ctx, &pb.QueueDelayParams{Key: "bad\x00key", DelayRequestable: 1}); err == nil {
		t.Fatal("a queue key with a NUL byte was accepted")
	}
	want := `
# HELP frontier_urlfrontier_leased_total URLs handed out (leased) by GetURLs.
# TYPE frontier_urlfrontier_leased_total counter
frontier_urlfrontier_leased_total 1
# HELP frontier_urlfrontier_puts_total URLs put through PutURLs and PutDiscovered, by kind and acknowledgement status.
# TYPE frontier_urlfrontier_puts_total counter
frontier_urlfrontier_puts_total{kind="discovered",status="OK"} 1
frontier_urlfrontier_puts_total{kind="discovered",status="SKIPPED"} 2
# HELP frontier_urlfrontier_rpc_errors_total URLFrontier calls that failed (invalid arguments, store errors), by RPC.
# TYPE frontier_urlfrontier_rpc_errors_total counter
frontier_urlfrontier_rpc_errors_total{rpc="SetDelay"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
