// Command urlfrontier runs the URLFrontier gateway of a cluster: a spider whose fetchers are URLFrontier
// clients (StormCrawler, any gRPC fetcher). It owns spider-feed partition N in place of spider N, serves the
// URLFrontier v2 gRPC API on --addr, leases the partition's requests to GetURLs, and publishes what clients
// report on the spider log (PutURLs known → page_crawled, discovered → links_extracted), so the strategy
// workers and the DB workers run exactly as for spiders (package urlfrontier, Gateway; docs/urlfrontier.md).
//
// Usage: urlfrontier --addr HOST:PORT --config configs/spider.yaml --partition-id N [--set key=value]…
//
// It reads the spider's configuration (the Kafka brokers, topics, codec and identity, spider.state_dir,
// stats_interval, shutdown_timeout): it stands where a spider stands. The leases, delays, blocks and limits
// are kept in spider.state_dir/urlfrontier-N (a Pebble database, synced writes), so a restart of the process
// keeps them. A spider or a second gateway started for the same partition waits as a standby.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sync/errgroup"

	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/internal/cli"
	"github.com/frontiercrawl/frontier/urlfrontier"
)

// defaultAddr is the port URLFrontier clients assume, on loopback.
const defaultAddr = "127.0.0.1:7071"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	addr, args, err := splitAddr(os.Args[1:])
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprintf(os.Stderr, "urlfrontier: the URLFrontier gateway of spider-feed partition --partition-id\n"+
				"  -addr host:port\n    \tserve the URLFrontier gRPC API there (default %s)\nand the spider role's flags:\n", defaultAddr)
		}
	}
	if err == nil {
		err = cli.Main(ctx, "spider", args, func(ctx context.Context, env cli.Env) error { return run(ctx, env, addr) })
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "urlfrontier:", err)
		os.Exit(1)
	}
}

// splitAddr takes --addr (or -addr, with = or a separate value) out of args: the rest are the spider role's
// flags.
func splitAddr(args []string) (string, []string, error) {
	addr := defaultAddr
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "addr" {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return "", nil, errors.New("--addr needs a value (host:port)")
			}
			i++
			val = args[i]
		}
		addr = val
	}
	return addr, rest, nil
}

// Run is the gateway with env's configuration (the spider role's), serving on addr until ctx ends.
func run(ctx context.Context, env cli.Env, addr string) error {
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
	b, err := kafkabus.New(cfg.KafkaBus(fmt.Sprintf("frontier-urlfrontier-%d", env.PartitionID)), env.Logger, env.Registry)
	if err != nil {
		return err
	}
	defer b.Close()
	env.Health.Add("kafka", b.Unreachable)

	gcfg := urlfrontier.DefaultGatewayConfig()
	gcfg.Partitions = []int{env.PartitionID}
	gcfg.Store.Dir = filepath.Join(cfg.Spider.StateDir, fmt.Sprintf("urlfrontier-%d", env.PartitionID))
	log := env.Logger.With("component", "urlfrontier")
	g, err := urlfrontier.OpenGateway(ctx, gcfg, urlfrontier.GatewayDeps{Bus: b, Codec: c, Identity: id, Logger: log, Registerer: env.Registry})
	if err != nil {
		return err
	}
	defer g.Close()
	env.Health.Set("startup", nil)
	eg, gctx := errgroup.WithContext(ctx)
	eg.Go(func() error { return g.Run(gctx) })
	eg.Go(func() error {
		return urlfrontier.ServeBackend(gctx, g, urlfrontier.ServeConfig{Addr: addr, Registerer: env.Registry}, log, nil)
	})
	return eg.Wait()
}
