package launch

import (
	"context"
	"path/filepath"

	"golang.org/x/sync/errgroup"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/internal/cli"
	"github.com/frontiercrawl/frontier/standalone"
	"github.com/frontiercrawl/frontier/urlfrontier"
)

// serveURLFrontier is standalone with --urlfrontier ADDR: the URLFrontier gRPC API (package urlfrontier) until
// ctx ends.
//
// Without seeds (or --demo) the API is served by the gateway over the standalone's own crawl: no spider runs,
// the gateway owns every spider-feed partition of the standalone's streams and leases their requests to
// clients, and what clients report goes on the standalone's spider log, where its strategy workers score it
// and its DB worker queues it (urlfrontier.Gateway; the lease state in standalone.data_dir/urlfrontier).
//
// With seeds the standalone's spiders own the feed, so the API is served beside the crawl by a Store of its
// own in standalone.data_dir/urlfrontier, which the spiders never see; the service outlives a crawl that
// finishes.
func serveURLFrontier(ctx context.Context, env cli.Env, crawl cli.RunFunc) error {
	if env.Seeds != "" || env.Demo {
		return serveBeside(ctx, env, crawl)
	}
	cfg := env.Config
	if err := checkStrategy(cfg); err != nil {
		return err
	}
	scfg := standaloneConfig(cfg)
	scfg.StopWhenDone = false // a URLFrontier service runs until it is stopped
	setMemoryLimit(scfg.MemoryLimit, env)
	id, err := cfg.Identity.New()
	if err != nil {
		return err
	}
	c, err := codec.New(scfg.Codec)
	if err != nil {
		return err
	}
	log := env.Logger.With("component", "urlfrontier")
	gateway := func(ctx context.Context, b bus.Bus) error {
		gcfg := urlfrontier.DefaultGatewayConfig()
		gcfg.Store.Dir = filepath.Join(scfg.DataDir, "urlfrontier")
		gcfg.Store.Sync = scfg.Pebble.Sync
		for p := range b.Partitions(bus.SpiderFeed) {
			gcfg.Partitions = append(gcfg.Partitions, p)
		}
		gw, err := urlfrontier.OpenGateway(ctx, gcfg, urlfrontier.GatewayDeps{Bus: b, Codec: c, Identity: id, Logger: log, Registerer: env.Registry})
		if err != nil {
			return err
		}
		defer gw.Close()
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() error { return gw.Run(gctx) })
		g.Go(func() error {
			return urlfrontier.ServeBackend(gctx, gw, urlfrontier.ServeConfig{Addr: env.URLFrontier, Registerer: env.Registry}, log, nil)
		})
		return g.Wait()
	}
	_, err = standalone.Run(ctx, scfg, standalone.Deps{Identity: id, Logger: env.Logger, Registerer: env.Registry, Gateway: gateway})
	return err
}

// serveBeside serves the API over a Store of its own while the standalone's own crawl (crawl) runs.
func serveBeside(ctx context.Context, env cli.Env, crawl cli.RunFunc) error {
	scfg := urlfrontier.DefaultStoreConfig()
	scfg.Dir = filepath.Join(env.Config.Standalone.DataDir, "urlfrontier")
	scfg.Sync = env.Config.Standalone.Pebble.Sync
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return urlfrontier.Serve(gctx, urlfrontier.ServeConfig{Addr: env.URLFrontier, Store: scfg, Registerer: env.Registry},
			env.Logger.With("component", "urlfrontier"), nil)
	})
	env.URLFrontier = ""
	g.Go(func() error { return crawl(gctx, env) })
	return g.Wait()
}
