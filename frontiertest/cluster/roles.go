package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/dbworker"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/hbase"
	"github.com/frontiercrawl/frontier/identity"
	"github.com/frontiercrawl/frontier/spider"
	"github.com/frontiercrawl/frontier/strategyworker"
)

// Roles says which roles Start runs and how. The strategy workers and spiders are one per partition of the
// spider log and of the spider feed.
type Roles struct {
	// DBWorkers is the number of DB workers (0 means 1), each with a Kafka client of its own so that they share
	// the partitions as separate processes do.
	DBWorkers      int
	DBWorker       dbworker.Config
	StrategyWorker strategyworker.Config
	// Spider configures every spider; its StateDir is set to a directory of the test's.
	Spider spider.Config
	// NoSpiders leaves the spider-feed partitions to other owners (URLFrontier gateways, which the test runs).
	NoSpiders bool
	// Seeds are given to spider 0 (written to a seed file); none means the test adds them itself.
	Seeds []string
	// DialContext and Transport go to every spider (see spider.Deps).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	Transport   http.RoundTripper
	// Logger goes to every role and client; nil discards.
	Logger *slog.Logger
	// Registerer receives the metrics of the shared bus and HBase client and of instance 0 of each role (two
	// instances cannot register the same names); nil registers nothing.
	Registerer prometheus.Registerer
	// Edit, if set, changes a role's dependencies before it is built: the test adds what the defaults leave
	// out (a control follower, the domain metadata store) from the cluster's clients. i is the role's instance
	// (its partition).
	EditDBWorker       func(c *Cluster, i int, d *dbworker.Deps)
	EditStrategyWorker func(c *Cluster, i int, d *strategyworker.Deps)
	EditSpider         func(c *Cluster, i int, d *spider.Deps)
}

// FastRoles returns roles tuned for a small synthetic web: spiders with a 10 ms delay, 1 s request timeout,
// 256 KiB bodies and a commit every 100 ms, and a DB worker that polls every 50 ms.
func FastRoles() Roles {
	r := Roles{DBWorker: dbworker.DefaultConfig(), StrategyWorker: strategyworker.DefaultConfig(), Spider: spider.DefaultConfig()}
	r.DBWorker.PollInterval = 50 * time.Millisecond
	r.Spider.Delay, r.Spider.RequestTimeout, r.Spider.MaxBodyBytes = 10*time.Millisecond, time.Second, 256<<10
	r.Spider.CommitInterval = 100 * time.Millisecond
	return r
}

// Cluster is the roles Start runs in the test process, and the clients they share.
type Cluster struct {
	Env      *Env
	Bus      *kafkabus.Bus
	HBase    *hbase.Client
	Identity identity.Identifier
	Codec    codec.Msgpack
	stop     context.CancelFunc
	g        *errgroup.Group
	stopped  bool
	err      error
}

// Start runs the roles on e's topics and tables until Stop or the test's end (or until one fails: its error is
// Stop's), each built as its main builds it (dbworker.New, strategyworker.New, spider.NewRole: the spider owns
// its feed partition and opens its streams from the bus). It opens a bus and an HBase client that the roles
// share, and closes them at the test's end.
func Start(tb testing.TB, ctx context.Context, e *Env, r Roles) *Cluster {
	tb.Helper()
	c := &Cluster{Env: e, Identity: Identity(tb)}
	c.Bus = e.Bus(tb, "main", r.Logger, r.Registerer)
	c.HBase = e.HBaseClient(tb, r.Logger, r.Registerer)
	first := func(i int) prometheus.Registerer {
		if i == 0 {
			return r.Registerer
		}
		return nil
	}
	runCtx, stop := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(runCtx)
	c.stop, c.g = stop, g
	tb.Cleanup(func() { _ = c.Stop() }) // before the bus and client close (cleanups run last first)
	fail := func(err error) {
		_ = c.Stop()
		tb.Fatal(err)
	}
	// run runs a role. A role that fails while the cluster should be running ends the others (errgroup) and
	// fails the test; one that ends by itself (a strategy may declare the crawl finished) is logged. Both go
	// to stderr at once too (frontiertest.ErrorNow): the test may then wait for a loop that no longer runs.
	run := func(role string, f func(context.Context) error) {
		g.Go(func() error {
			err := f(gctx)
			if gctx.Err() != nil {
				return err
			}
			if err == nil {
				frontiertest.LogNow(tb, "cluster: %s ended by itself", role)
				return nil
			}
			frontiertest.ErrorNow(tb, "cluster: %s stopped the cluster: %v", role, err)
			return err
		})
	}

	for i := range max(r.DBWorkers, 1) {
		b := c.Bus
		if r.DBWorkers > 1 {
			b = e.Bus(tb, fmt.Sprint("dbw", i), r.Logger, nil)
		}
		d := dbworker.Deps{Bus: b, Codec: c.Codec, Queue: c.HBase.Queue(), Pages: c.HBase.Pages(), Logger: r.Logger, Registerer: first(i)}
		if r.EditDBWorker != nil {
			r.EditDBWorker(c, i, &d)
		}
		w, err := dbworker.New(r.DBWorker, d)
		if err != nil {
			fail(err)
		}
		run(fmt.Sprint("DB worker ", i), w.Run)
	}
	for p := range e.Kafka.SpiderLog.Partitions {
		d := strategyworker.Deps{Bus: c.Bus, Codec: c.Codec, States: c.HBase.States(), Fingerprint: c.Identity.Fingerprint,
			Partition: p, Logger: r.Logger, Registerer: first(p)}
		if r.EditStrategyWorker != nil {
			r.EditStrategyWorker(c, p, &d)
		}
		w, err := strategyworker.New(r.StrategyWorker, d)
		if err != nil {
			fail(err)
		}
		run(fmt.Sprint("strategy worker ", p), w.Run)
	}
	var seeds string
	if len(r.Seeds) > 0 {
		seeds = SeedFile(tb, r.Seeds)
	}
	for p := range e.Kafka.SpiderFeed.Partitions {
		if r.NoSpiders {
			break
		}
		cfg := r.Spider
		cfg.StateDir = filepath.Join(tb.TempDir(), "spider")
		d := spider.RoleDeps{Bus: c.Bus, Deps: spider.Deps{Codec: c.Codec, Identity: c.Identity, Partition: p, Logger: r.Logger,
			DialContext: r.DialContext, Transport: r.Transport, Registerer: first(p)}}
		if p == 0 {
			d.Seeds = seeds
		}
		if r.EditSpider != nil {
			r.EditSpider(c, p, &d.Deps)
		}
		s, err := spider.NewRole(cfg, d)
		if err != nil {
			fail(err)
		}
		run(fmt.Sprint("spider ", p), s.Run)
	}
	return c
}

// Stop stops the roles and waits for them; it returns the first error a role returned. Calling it again
// returns the same.
func (c *Cluster) Stop() error {
	if !c.stopped {
		c.stopped = true
		c.stop()
		c.err = c.g.Wait()
	}
	return c.err
}

// WaitIdle waits, within ctx, until the crawl is over: the cluster was busy, then Idle held for quiet. Then
// it checks the accounting invariant (the package-level WaitIdle).
func (c *Cluster) WaitIdle(tb testing.TB, ctx context.Context, quiet time.Duration) {
	tb.Helper()
	WaitIdle(tb, ctx, c.Bus, c.HBase, Wait{Quiet: quiet, AfterBusy: true})
}
