package launch

import (
	"context"
	"fmt"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/control"
	"github.com/frontiercrawl/frontier/internal/cli"
	"github.com/frontiercrawl/frontier/spider"
	"github.com/frontiercrawl/frontier/spider/archive"
	"github.com/frontiercrawl/frontier/warc"
)

// runSpider is the spider role (see the package doc of cmd/spider).
func runSpider(ctx context.Context, env cli.Env) error {
	cfg := env.Config
	if env.Seeds != "" {
		// A seed file without a valid URL stops the start at once, before any connection is made.
		if _, err := spider.CheckSeeds(env.Seeds); err != nil {
			return err
		}
	}
	cn, closeConns, err := connect(ctx, env, fmt.Sprintf("frontier-spider-%d", env.PartitionID), false)
	if err != nil {
		return err
	}
	defer closeConns()
	b, c, id := cn.bus, cn.codec, cn.id
	var hold spider.Holder
	ctl, err := cli.FollowControl(ctx, b, env, "spider")
	if err != nil {
		return err
	}
	defer ctl.Stop()
	scores, err := bus.OpenProducer(ctx, b, bus.ScoringLog)
	if err != nil {
		return err
	}
	defer scores.Close()
	hold = &control.Holder{State: ctl.State, Out: scores, Codec: c}

	scfg := cfg.Spider // stats_interval, shutdown_timeout and seeds.sitemaps filled in by configs (FillGlobals)
	deps := spider.RoleDeps{Bus: b, Deps: spider.Deps{
		Codec: c, Identity: id,
		Partition: env.PartitionID, Seeds: env.Seeds, Hold: hold,
		Logger: env.Logger, Registerer: env.Registry,
	}}
	var wr *warc.Writer
	if cfg.WARC.Dir != "" {
		wcfg := cfg.WARC
		if wcfg.UserAgent == "" {
			wcfg.UserAgent = scfg.UserAgent
		}
		if wr, err = warc.New(wcfg, env.Logger.With("component", "warc")); err != nil {
			return err
		}
		deps.Handler = &archive.Handler{W: wr}
	}
	// One spider per feed partition: a second spider given the same --partition-id waits as a standby and
	// takes over when the first dies (see spider.Role).
	r, err := spider.NewRole(scfg, deps)
	if err == nil {
		env.Health.Set("startup", nil)
		err = r.Run(ctx)
	}
	if wr != nil {
		if cerr := wr.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
