package launch

import (
	"context"
	"path/filepath"

	"golang.org/x/sync/errgroup"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/internal/cli"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/spider/archive"
	"github.com/frontiercrawl/frontier/standalone"
	"github.com/frontiercrawl/frontier/state"
	"github.com/frontiercrawl/frontier/urlfrontier"
	"github.com/frontiercrawl/frontier/warc"
)

// serveURLFrontier is standalone with --urlfrontier ADDR: the URLFrontier gRPC API (package urlfrontier) until
// ctx ends, served by the gateway over the standalone's own crawl (urlfrontier.Gateway; its lease state in
// standalone.data_dir/urlfrontier). What clients report goes on the standalone's spider log, where its
// strategy workers score it and its DB worker queues it.
//
// Without seeds the gateway owns every spider-feed partition and no spider runs. With seeds the standalone's
// own spiders crawl them and the gateway owns a spider-feed partition of its own beside theirs (recorded in
// the crawl's manifest, so a resume keeps it): one crawl, one URL-seen test, the hosts split between the
// spiders and the API's clients, which are then remote spiders of the same crawl. --demo crawls its synthetic site to the end and checks it, so it keeps
// the API beside its crawl on a store of its own (serveBeside).
func serveURLFrontier(ctx context.Context, env cli.Env, crawl cli.RunFunc) error {
	if env.Demo {
		return serveBeside(ctx, env, crawl)
	}
	cfg := env.Config
	if err := checkStrategy(cfg); err != nil {
		return err
	}
	scfg := standaloneConfig(cfg)
	scfg.StopWhenDone = false // a URLFrontier service runs until it is stopped
	var gwParts []int         // nil: every partition
	// How many spider-feed partitions of its own the gateway of a resumed crawl was started with (0 for a new
	// crawl; a manifest that cannot be read is standalone.Run's to refuse).
	m, _, _ := standalone.ReadManifest(scfg.DataDir)
	if n := m.GatewayPartitions; env.Seeds != "" || n > 0 {
		// The gateway's own spider-feed partitions, beside the spiders' (one for a new crawl; a resumed crawl
		// keeps what it was started with).
		for p := range max(n, 1) {
			gwParts = append(gwParts, scfg.Spiders+p)
		}
	}
	mem := scfg.MemoryWithGateway()
	if err := mem.Check(); err != nil {
		return err
	}
	setRuntime(mem, env)
	id, err := cfg.Identity.New()
	if err != nil {
		return err
	}
	c, err := codec.New(scfg.Codec)
	if err != nil {
		return err
	}
	log := env.Logger.With("component", "urlfrontier")
	gateway := func(ctx context.Context, b bus.Bus, states state.Store, pages metadata.Store) error {
		gcfg := urlfrontier.DefaultGatewayConfig()
		gcfg.Store.Dir = filepath.Join(scfg.DataDir, "urlfrontier")
		gcfg.Store.Sync = scfg.Pebble.Sync
		if mem.GatewayCache > 0 { // inside standalone.memory_limit (MemoryWithGateway)
			gcfg.Store.CacheBytes, gcfg.Store.SeenFilterBytes = mem.GatewayCache, mem.SeenFilter
		}
		gcfg.Partitions = gwParts
		if gcfg.Partitions == nil {
			for p := range b.Partitions(bus.SpiderFeed) {
				gcfg.Partitions = append(gcfg.Partitions, p)
			}
		}
		gw, err := urlfrontier.OpenGateway(ctx, gcfg, urlfrontier.GatewayDeps{Bus: b, Codec: c, Identity: id, Logger: log, Registerer: env.Registry,
			Crawl: &urlfrontier.CrawlStores{States: states, Pages: pages}})
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
	deps := standalone.Deps{Seeds: env.Seeds, Identity: id, Logger: env.Logger, Registerer: env.Registry,
		Gateway: gateway, GatewayPartitions: gwParts}
	var wr *warc.Writer
	if cfg.WARC.Dir != "" && env.Seeds != "" {
		if wr, err = warc.New(cfg.WARC, env.Logger.With("component", "warc")); err != nil {
			return err
		}
		deps.Handler = &archive.Handler{W: wr}
	}
	_, err = standalone.Run(ctx, scfg, deps)
	if wr != nil {
		if cerr := wr.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// serveBeside serves the API over a Store of its own while the standalone's own crawl (crawl) runs: --demo,
// whose crawl must reach its end to be checked against the synthetic site.
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
