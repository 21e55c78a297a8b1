// Command dbworker runs the DB worker (docs/architecture.md): it schedules the scoring log's update_score
// messages into the HBase queue, puts each spider's next batch on its spider-feed partition when the
// partition has room (its lag is below its last batch, or below db_worker.max_lag when set), and records page
// metadata from the spider log. The roles can run in one process or apart (db_worker.roles: scoring, batches,
// links). It follows the control stream (pause,
// resume, block, unblock: package control) and keeps the crawl-wide counters frontierctl status reads.
//
// Usage: dbworker --config configs/dbworker.yaml [--set db_worker.roles=batches]…
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/dbworker"
	"github.com/frontiercrawl/frontier/hbase"
	"github.com/frontiercrawl/frontier/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cli.Main(ctx, "dbworker", os.Args[1:], run); err != nil {
		fmt.Fprintln(os.Stderr, "dbworker:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, env cli.Env) error {
	cfg := env.Config
	env.Health.Set("startup", errors.New("connecting to the dependencies"))
	c, err := codec.New(cfg.Codec)
	if err != nil {
		return err
	}
	b, err := kafkabus.New(cfg.KafkaBus("frontier-dbw"), env.Logger, env.Registry)
	if err != nil {
		return err
	}
	defer b.Close()
	env.Health.Add("kafka", b.Unreachable)
	hb, err := hbase.New(ctx, cfg.HBase, env.Logger, env.Registry)
	if err != nil {
		return err
	}
	defer hb.Close()
	env.Health.Add("hbase", hb.Unreachable)
	dcfg := cfg.DBWorker // stats_interval and shutdown_timeout filled in by configs (FillGlobals)
	deps := dbworker.Deps{Bus: b, Codec: c, Queue: hb.Queue(), Pages: hb.Pages(), Counters: hb.Domains(),
		Logger: env.Logger, Registerer: env.Registry}
	ctl, err := cli.FollowControl(ctx, b, env, "dbworker")
	if err != nil {
		return err
	}
	defer ctl.Stop()
	deps.Control = ctl.State
	// The lags of every log this crawl consumes, for dashboards and alerts (frontier_bus_lag_messages).
	stopLags := cli.ReportLags(ctx, b, 15*time.Second, bus.LagGroups())
	defer stopLags()
	w, err := dbworker.New(dcfg, deps)
	if err != nil {
		return err
	}
	env.Health.Set("startup", nil)
	return w.Run(ctx)
}
