package launch

import (
	"context"
	"errors"
	"time"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/dbworker"
	"github.com/frontiercrawl/frontier/hbase"
	"github.com/frontiercrawl/frontier/internal/cli"
)

// runDBWorker is the dbworker role (see the package doc of cmd/dbworker).
func runDBWorker(ctx context.Context, env cli.Env) error {
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
