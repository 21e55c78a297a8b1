package launch

import (
	"context"
	"time"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/dbworker"
	"github.com/frontiercrawl/frontier/internal/cli"
)

// runDBWorker is the dbworker role (see the package doc of cmd/dbworker).
func runDBWorker(ctx context.Context, env cli.Env) error {
	cn, closeConns, err := connect(ctx, env, "frontier-dbw", true)
	if err != nil {
		return err
	}
	defer closeConns()
	dcfg := env.Config.DBWorker // stats_interval and shutdown_timeout filled in by configs (FillGlobals)
	deps := dbworker.Deps{Bus: cn.bus, Codec: cn.codec, Queue: cn.hbase.Queue(), Pages: cn.hbase.Pages(),
		Counters: cn.hbase.Domains(), Logger: env.Logger, Registerer: env.Registry}
	ctl, err := cli.FollowControl(ctx, cn.bus, env, "dbworker")
	if err != nil {
		return err
	}
	defer ctl.Stop()
	deps.Control = ctl.State
	// The lags of every log this crawl consumes, for dashboards and alerts (frontier_bus_lag_messages).
	stopLags := cli.ReportLags(ctx, cn.bus, 15*time.Second, bus.LagGroups())
	defer stopLags()
	w, err := dbworker.New(dcfg, deps)
	if err != nil {
		return err
	}
	env.Health.Set("startup", nil)
	return w.Run(ctx)
}
