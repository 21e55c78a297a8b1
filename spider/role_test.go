package spider

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/membus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
)

// TestRole runs a spider built from a bus alone: the seeds it injects before running and the outcomes of its
// feed partition go to the spider-log partitions the topology's partitioner picks, it reads only its own feed
// partition and commits it, and what the injection counted stays counted once it runs.
func TestRole(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Plain = true
	wcfg.Hosts, wcfg.PagesPerHost = 3, 4
	site := web.Start(t, wcfg)
	mcfg := membus.DefaultConfig()
	mcfg.Partitions = map[bus.Stream]int{bus.SpiderLog: 3, bus.ScoringLog: 1, bus.SpiderFeed: 2}
	mb, err := membus.New(mcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	ctx := t.Context()
	enc := codec.Msgpack{}
	id := newRootIdentity(t)

	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	if err := os.WriteFile(seeds, []byte(strings.Join(site.Seeds(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	r, err := NewRole(testConfig(t), RoleDeps{Bus: mb, Deps: Deps{Codec: enc, Identity: id, Partition: 1,
		DialContext: site.DialContext, Logger: frontiertest.Logger(t), Registerer: reg}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.InjectSeeds(ctx, seeds); err != nil {
		t.Fatal(err)
	}

	// Feed partition 1 gets the pages; partition 0 gets one request the role must not read.
	feed, err := bus.OpenProducer(ctx, mb, bus.SpiderFeed)
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	var msgs []bus.Message
	for _, p := range site.Pages() {
		v, err := enc.EncodeRequest(&frontier.Request{URL: p.URL, Method: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, bus.Message{Key: []byte("h"), Value: v, Partition: 1})
	}
	v, _ := enc.EncodeRequest(&frontier.Request{URL: site.Pages()[0].URL, Method: "GET"})
	msgs = append(msgs, bus.Message{Key: []byte("h"), Value: v, Partition: 0})
	if err := feed.Send(ctx, msgs...); err != nil {
		t.Fatal(err)
	}

	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	guard := time.After(time.Minute)
	for {
		lag, err := mb.Lag(ctx, bus.SpiderFeed, bus.GroupSpiderFeed)
		if err != nil {
			t.Fatal(err)
		}
		if lag[1] == 0 {
			if lag[0] != 1 {
				t.Errorf("feed partition 0 lag %d, want 1: the role read a partition it does not own", lag[0])
			}
			break
		}
		select {
		case <-guard:
			t.Fatalf("feed partition 1 still has lag %d", lag[1])
		case <-tick.C:
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Every spider-log message sits on the partition the declared partitioner gives its key.
	in, err := mb.Consumer(ctx, bus.SpiderLog, "check", []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var crawled, added int
	for {
		fctx, fcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		got, err := in.Fetch(fctx, 1000)
		fcancel()
		if err != nil {
			break
		}
		for _, m := range got {
			if want := bus.Partition(bus.SpiderLog, m.Key, 3); m.Partition != want {
				t.Errorf("spider-log message keyed %q on partition %d, want %d", m.Key, m.Partition, want)
			}
			msg, err := enc.DecodeMessage(m.Value)
			if err != nil {
				t.Fatal(err)
			}
			switch msg.(type) {
			case *frontier.PageCrawled:
				crawled++
			case *frontier.AddSeeds:
				added++
			}
		}
	}
	if crawled != len(site.Pages()) || added == 0 {
		t.Errorf("spider log: %d page_crawled (want %d), %d add_seeds (want > 0)", crawled, len(site.Pages()), added)
	}
	if n := frontiertest.Counter(t, reg, "frontier_spider_seeds_total"); n != float64(len(site.Seeds())) {
		t.Errorf("frontier_spider_seeds_total = %v after the run, want %d", n, len(site.Seeds()))
	}
}

func TestNewRoleRejects(t *testing.T) {
	mb, err := membus.New(membus.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	for _, tc := range []struct {
		name string
		deps RoleDeps
		want string
	}{
		{"no bus", RoleDeps{Deps: Deps{Codec: codec.Msgpack{}}}, "Bus is nil"},
		{"feed given", RoleDeps{Bus: mb, Deps: Deps{Codec: codec.Msgpack{}, Feed: noFeed{}}}, "opened from the bus"},
		{"no codec", RoleDeps{Bus: mb}, "Codec is nil"},
		{"partition", RoleDeps{Bus: mb, Deps: Deps{Codec: codec.Msgpack{}, Partition: 1}}, "partition 1 is outside [0, 1)"},
	} {
		if _, err := NewRole(DefaultConfig(), tc.deps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewRole error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
