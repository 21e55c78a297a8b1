package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/frontiercrawl/frontier/internal/cli"
	"github.com/frontiercrawl/frontier/urlfrontier"
)

// defaultGatewayAddr is the port URLFrontier clients assume, on loopback.
const defaultGatewayAddr = "127.0.0.1:7071"

// runGatewayMain is the urlfrontier role (see the package doc of cmd/urlfrontier): the spider role's flags and
// configuration, with --addr taken out of args first.
func runGatewayMain(ctx context.Context, args []string) error {
	addr, args, err := splitAddr(args)
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprintf(os.Stderr, "urlfrontier: the URLFrontier gateway of spider-feed partition --partition-id\n"+
				"  -addr host:port\n    \tserve the URLFrontier gRPC API there (default %s)\nand the spider role's flags:\n", defaultGatewayAddr)
		}
	}
	if err != nil {
		return err
	}
	return cli.Main(ctx, "spider", args, func(ctx context.Context, env cli.Env) error { return runGateway(ctx, env, addr) })
}

// splitAddr takes --addr (or -addr, with = or a separate value) out of args: the rest are the spider role's
// flags.
func splitAddr(args []string) (string, []string, error) {
	addr := defaultGatewayAddr
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

// runGateway is the gateway with env's configuration (the spider role's), serving on addr until ctx ends.
func runGateway(ctx context.Context, env cli.Env, addr string) error {
	cfg := env.Config
	cn, closeConns, err := connect(ctx, env, fmt.Sprintf("frontier-urlfrontier-%d", env.PartitionID), true)
	if err != nil {
		return err
	}
	defer closeConns()

	// The control state, read to the control stream's end before the first URL is taken or handed out (a
	// stream that cannot be read yet is waited out), as a spider does: a gateway that ignored an earlier block
	// or pause would hand out what the operator stopped (urlfrontier.Control).
	ctl, err := cli.FollowControl(ctx, cn.bus, env, "urlfrontier")
	if err != nil {
		return err
	}
	defer ctl.Stop()

	gcfg := urlfrontier.DefaultGatewayConfig()
	gcfg.Partitions = []int{env.PartitionID}
	gcfg.Store.Dir = filepath.Join(cfg.Spider.StateDir, fmt.Sprintf("urlfrontier-%d", env.PartitionID))
	log := env.Logger.With("component", "urlfrontier")
	g, err := urlfrontier.OpenGateway(ctx, gcfg, urlfrontier.GatewayDeps{Bus: cn.bus, Codec: cn.codec, Identity: cn.id, Logger: log, Registerer: env.Registry,
		Control: ctl.State,
		// GetURLStatus answers for the crawl's URLs from its HBase tables (urlfrontier.Gateway.URLStatus).
		Crawl: &urlfrontier.CrawlStores{States: cn.hbase.States(), Pages: cn.hbase.Pages()}})
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
