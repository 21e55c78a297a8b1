package launch

import (
	"context"
	"errors"
	"fmt"

	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/hbase"
	"github.com/frontiercrawl/frontier/internal/cli"
	"github.com/frontiercrawl/frontier/strategyworker"
)

// runStrategyWorker is the strategyworker role (see the package doc of cmd/strategyworker).
func runStrategyWorker(ctx context.Context, env cli.Env) error {
	cfg := env.Config
	if err := checkStrategy(cfg); err != nil {
		return err
	}
	env.Health.Set("startup", errors.New("connecting to the dependencies"))
	id, err := cfg.Identity.New()
	if err != nil {
		return err
	}
	c, err := codec.New(cfg.Codec)
	if err != nil {
		return err
	}
	b, err := kafkabus.New(cfg.KafkaBus(fmt.Sprintf("frontier-sw-%d", env.PartitionID)), env.Logger, env.Registry)
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
	scfg := cfg.StrategyWorker // stats_interval, shutdown_timeout and scope filled in by configs (FillGlobals)
	w, err := strategyworker.New(scfg, strategyworker.Deps{Bus: b, Codec: c, States: hb.States(), Domains: hb.Domains(),
		Fingerprint: id.Fingerprint, Partition: env.PartitionID, Logger: env.Logger, Registerer: env.Registry})
	if err != nil {
		return err
	}
	env.Health.Set("startup", nil)
	return w.Run(ctx)
}
