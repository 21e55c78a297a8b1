package launch

import (
	"context"
	"path/filepath"

	"golang.org/x/sync/errgroup"

	"github.com/frontiercrawl/frontier/internal/cli"
	"github.com/frontiercrawl/frontier/urlfrontier"
)

// serveURLFrontier is standalone with --urlfrontier ADDR: the URLFrontier gRPC API (package urlfrontier) over
// its own Pebble database in standalone.data_dir/urlfrontier, until ctx ends. The standalone's own crawl
// (crawl) runs beside it only when seeds (or --demo) are given; the service outlives a crawl that finishes.
func serveURLFrontier(ctx context.Context, env cli.Env, crawl cli.RunFunc) error {
	scfg := urlfrontier.DefaultStoreConfig()
	scfg.Dir = filepath.Join(env.Config.Standalone.DataDir, "urlfrontier")
	scfg.Sync = env.Config.Standalone.Pebble.Sync
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return urlfrontier.Serve(gctx, urlfrontier.ServeConfig{Addr: env.URLFrontier, Store: scfg, Registerer: env.Registry},
			env.Logger.With("component", "urlfrontier"), nil)
	})
	if env.Seeds != "" || env.Demo {
		env := env
		env.URLFrontier = ""
		g.Go(func() error { return crawl(gctx, env) })
	}
	return g.Wait()
}
