// Command strategyworker runs one strategy worker (DESIGN.md §1, §5): it owns spider-log partition
// --partition-id, runs the URL-seen test through a bounded cache over the HBase states table, scores new links
// with the configured strategy (strategy_worker.strategy) and publishes update_score to the scoring log.
//
// Usage: strategyworker --config configs/strategyworker.yaml --partition-id N [--set key=value]…
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/hbase"
	"github.com/frontiercrawl/frontier/internal/cli"
	_ "github.com/frontiercrawl/frontier/strategy/all"
	"github.com/frontiercrawl/frontier/strategyworker"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cli.Main(ctx, "strategyworker", os.Args[1:], run); err != nil {
		fmt.Fprintln(os.Stderr, "strategyworker:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, env cli.Env) error {
	cfg := env.Config
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
	scfg := cfg.StrategyWorker
	scfg.StatsInterval = cfg.StatsInterval
	w, err := strategyworker.New(scfg, strategyworker.Deps{Bus: b, Codec: c, States: hb.States(), Domains: hb.Domains(),
		Fingerprint: id.Fingerprint, Partition: env.PartitionID, Logger: env.Logger, Registerer: env.Registry})
	if err != nil {
		return err
	}
	env.Health.Set("startup", nil)
	return w.Run(ctx)
}
