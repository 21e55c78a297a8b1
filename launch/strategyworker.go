package launch

import (
	"context"
	"fmt"

	"github.com/frontiercrawl/frontier/internal/cli"
	"github.com/frontiercrawl/frontier/strategyworker"
)

// runStrategyWorker is the strategyworker role (see the package doc of cmd/strategyworker).
func runStrategyWorker(ctx context.Context, env cli.Env) error {
	cfg := env.Config
	if err := checkStrategy(cfg); err != nil {
		return err
	}
	cn, closeConns, err := connect(ctx, env, fmt.Sprintf("frontier-sw-%d", env.PartitionID), true)
	if err != nil {
		return err
	}
	defer closeConns()
	scfg := cfg.StrategyWorker // stats_interval, shutdown_timeout and scope filled in by configs (FillGlobals)
	// The control state, read to the control stream's end before the first batch is scored (a stream that cannot
	// be read yet is waited out; see package strategyworker, "Control").
	ctl, err := cli.FollowControl(ctx, cn.bus, env, "strategyworker")
	if err != nil {
		return err
	}
	defer ctl.Stop()
	w, err := strategyworker.New(scfg, strategyworker.Deps{Bus: cn.bus, Codec: cn.codec, States: cn.hbase.States(),
		Domains: cn.hbase.Domains(), Fingerprint: cn.id.Fingerprint, Partition: env.PartitionID, Control: ctl.State,
		Logger: env.Logger, Registerer: env.Registry})
	if err != nil {
		return err
	}
	env.Health.Set("startup", nil)
	return w.Run(ctx)
}
