//go:build integration

package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/frontiertest"
)

// TestTopicsDeletedAtCleanup: the topics of a run, its own and those CreateTopics added, are gone once the test
// that made them has ended, so repeated runs do not gather topics on a long-lived broker.
func TestTopicsDeletedAtCleanup(t *testing.T) {
	frontiertest.Server(t, "FRONTIER_TEST_KAFKA")
	var kcfg kafkabus.Config
	extra := ""
	t.Run("run", func(t *testing.T) {
		e := Topics(t, "cleanup", Partitions{SpiderLog: 1, ScoringLog: 1, SpiderFeed: 2})
		extra = e.Name + "-extra"
		e.CreateTopics(t, kafkabus.TopicSpec{Name: extra, Partitions: 1})
		kcfg = e.Kafka
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cfg := kcfg
	cfg.SpiderLog.Topic = extra // the extra topic, looked up as a stream of one partition
	cfg.SpiderLog.Partitions = 1
	for _, c := range []kafkabus.Config{kcfg, cfg} {
		b, err := kafkabus.New(c, frontiertest.Logger(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		for _, s := range []bus.Stream{bus.SpiderLog, bus.ScoringLog, bus.SpiderFeed, bus.Control} {
			WaitFor(t, ctx, "the deletion of the run's "+string(s)+" topic", func() bool {
				p, err := bus.OpenProducer(ctx, b, s)
				if err == nil {
					p.Close()
					return false
				}
				return strings.Contains(err.Error(), "does not exist")
			})
		}
	}
}
