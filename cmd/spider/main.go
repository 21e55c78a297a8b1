// Command spider runs one spider: it fetches the requests of its spider-feed partition politely and reports
// every outcome on the spider log (DESIGN.md §6; package spider has the details).
//
// Usage: spider --config configs/spider.yaml --partition-id N [--seeds FILE] [--set key=value]…
//
// With --seeds, the seed URLs of FILE (one a line, # comments) are published as add_seeds first, once per
// crawl (see spider.Spider.InjectSeeds). The spider reads the Kafka brokers, topics, codec and identity from the
// configuration; the spider's own settings (politeness, timeouts, sizes) are spider.DefaultConfig() until the
// configuration gains a spider section, except stats_interval and shutdown_timeout, which come from it.
package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/internal/cli"
	"github.com/frontiercrawl/frontier/partition"
	"github.com/frontiercrawl/frontier/spider"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cli.Main(ctx, "spider", os.Args[1:], run); err != nil {
		fmt.Fprintln(os.Stderr, "spider:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, env cli.Env) error {
	cfg := env.Config
	id, err := newIdentity(cfg.Identity.Canonicalization, cfg.Identity.Fingerprint)
	if err != nil {
		return err
	}
	c, err := codec.New(cfg.Codec)
	if err != nil {
		return err
	}
	kcfg := kafkabus.DefaultConfig()
	kcfg.Brokers = cfg.Kafka.Brokers
	kcfg.ClientID = fmt.Sprintf("frontier-spider-%d", env.PartitionID)
	kcfg.SpiderLog = kafkabus.StreamConfig{Topic: cfg.Streams.SpiderLog.Topic, Partitions: cfg.Streams.SpiderLog.Partitions}
	kcfg.ScoringLog = kafkabus.StreamConfig{Topic: cfg.Streams.ScoringLog.Topic, Partitions: cfg.Streams.ScoringLog.Partitions}
	kcfg.SpiderFeed = kafkabus.StreamConfig{Topic: cfg.Streams.SpiderFeed.Topic, Partitions: cfg.Streams.SpiderFeed.Partitions}
	b, err := kafkabus.New(kcfg, env.Logger, env.Registry)
	if err != nil {
		return err
	}
	defer b.Close()
	feed, err := b.Consumer(ctx, bus.SpiderFeed, kcfg.Groups.SpiderFeed, []int{env.PartitionID})
	if err != nil {
		return err
	}
	defer feed.Close()
	log, err := b.Producer(ctx, bus.SpiderLog, bus.Partitioner(partition.Fingerprint))
	if err != nil {
		return err
	}
	defer log.Close()

	scfg := spider.DefaultConfig()
	scfg.StatsInterval = cfg.StatsInterval
	scfg.ShutdownTimeout = cfg.ShutdownTimeout
	return spider.Run(ctx, scfg, spider.Deps{
		Feed: feed, Log: log, Codec: c, Identity: id,
		Partition: env.PartitionID, Seeds: env.Seeds,
		Logger: env.Logger, Registerer: env.Registry,
	})
}

// identity adapts the root package's identity layer to spider.Identity.
type identity struct {
	fp *frontier.Fingerprinter
}

func newIdentity(canon, fingerprint string) (*identity, error) {
	if canon == "w3lib" {
		canon = "" // the default mode: w3lib 2.x
	}
	mode, err := frontier.ParseCanonMode(canon)
	if err != nil {
		return nil, err
	}
	fp, err := frontier.ParseFingerprinter(fingerprint, frontier.CanonOptions{Mode: mode}, frontier.ScrapyOptions{})
	if err != nil {
		return nil, err
	}
	return &identity{fp: fp}, nil
}

func (i *identity) Fingerprint(rawURL string) (frontier.Fingerprint, error) { return i.fp.URL(rawURL) }

func (i *identity) Domain(u *url.URL) frontier.MetaDomain {
	d, err := frontier.DomainInfo(u.String())
	if err != nil {
		d = frontier.MetaDomain{Netloc: u.Host, Name: u.Hostname(), Scheme: u.Scheme}
	}
	d.Fingerprint = frontier.DomainFingerprint(d.Name).Hex()
	return d
}
