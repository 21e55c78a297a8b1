package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/configs"
)

// acceptLossCmd is `frontierctl accept-loss`: it moves a group's committed offsets that fell out of retention
// to the log start, after listing them, or only lists them with --dry-run.
func acceptLossCmd(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := newFlags("accept-loss", stderr)
	config := fs.String("config", "", "config file (streams.*, kafka.brokers)")
	stream := fs.String("stream", "", "spider-log, scoring-log or spider-feed")
	group := fs.String("group", "", "the consumer group whose loss to accept (the stopped consumer's error names it)")
	dry := fs.Bool("dry-run", false, "list the lost ranges, change nothing")
	timeout := fs.Duration("timeout", 60*time.Second, "bound on the whole operation")
	var sets setFlags
	fs.Var(&sets, "set", "key=value override, as for every role (repeatable)")
	if err := parse(fs, args); err != nil {
		return err
	}
	s := bus.Stream(*stream)
	switch s {
	case bus.SpiderLog, bus.ScoringLog, bus.SpiderFeed:
	default:
		return fmt.Errorf("%w: accept-loss: --stream %q, want spider-log, scoring-log or spider-feed", errUsage, *stream)
	}
	if *group == "" {
		return fmt.Errorf("%w: accept-loss: --group is required", errUsage)
	}
	cfg, err := configs.Load(loadOptions(*config, environ, sets))
	if err != nil {
		return err
	}
	b, err := kafkabus.New(cfg.KafkaBus("frontierctl"), nil, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var losses []kafkabus.Loss
	if *dry {
		losses, err = b.Losses(ctx, s, *group)
	} else {
		losses, err = b.AcceptLoss(ctx, s, *group)
	}
	if err != nil {
		return err
	}
	if len(losses) == 0 {
		fmt.Fprintf(stdout, "%s, group %s: no committed offset below the log start; nothing to accept\n", s, *group)
		return nil
	}
	verb := "accepted"
	if *dry {
		verb = "would accept"
	}
	for _, l := range losses {
		fmt.Fprintf(stdout, "%s partition %d, group %s: %s the loss of offsets %d to %d (%d messages); the group resumes at %d\n",
			s, l.Partition, *group, verb, l.Committed, l.LogStart-1, l.LogStart-l.Committed, l.LogStart)
	}
	return nil
}
