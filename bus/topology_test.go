package bus_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/bus/membus"
	"github.com/frontiercrawl/frontier/partition"
)

var update = flag.Bool("update", false, "rewrite the stream table of docs/architecture.md from the topology")

// TestTopologyDeclaresEveryStream checks the declaration itself: every stream once, a partitioner on every
// stream of more than one partition that agrees with the one package partition names, and named, distinct
// committing groups with Frontera's names.
func TestTopologyDeclaresEveryStream(t *testing.T) {
	var streams []bus.Stream
	for _, sp := range bus.Topology() {
		if slices.Contains(streams, sp.Stream) {
			t.Errorf("%s declared twice", sp.Stream)
		}
		streams = append(streams, sp.Stream)
		if sp.Key == "" || sp.Writers == "" || sp.Partitions == "" || len(sp.Groups) == 0 {
			t.Errorf("%s: key, writers, partitions or groups missing: %+v", sp.Stream, sp)
		}
		if (sp.Partitioner == nil) != (sp.PartitionerName == "") {
			t.Errorf("%s: partitioner %v but name %q", sp.Stream, sp.Partitioner != nil, sp.PartitionerName)
		}
		if sp.Partitioner == nil && !sp.Routed {
			t.Errorf("%s: neither keyed nor routed", sp.Stream)
		}
		if sp.Partitioner != nil {
			want, err := partition.ByName(sp.PartitionerName)
			if err != nil {
				t.Fatalf("%s: %v", sp.Stream, err)
			}
			for _, key := range []string{"example.com", "a", "", "0123456789abcdef0123456789abcdef01234567"} {
				for _, n := range []int{1, 3, 7, 64} {
					if got, w := bus.Partition(sp.Stream, []byte(key), n), want([]byte(key), n); got != w {
						t.Errorf("Partition(%s, %q, %d) = %d, want %s's %d", sp.Stream, key, n, got, sp.PartitionerName, w)
					}
				}
			}
		}
		seen := map[string]bool{}
		for _, g := range sp.Groups {
			if (g.Name == "") != (g.Reads == bus.ReadsReplay) {
				t.Errorf("%s: group %+v: only a replaying group has no name", sp.Stream, g)
			}
			if g.Reader == "" || seen[g.Name] {
				t.Errorf("%s: group %+v has no reader or is listed twice", sp.Stream, g)
			}
			seen[g.Name] = true
		}
	}
	for _, s := range append(slices.Clone(bus.Streams), bus.Control) {
		if !slices.Contains(streams, s) {
			t.Errorf("%s is not declared", s)
		}
	}
	if sp, ok := bus.SpecOf(bus.Control); !ok || !sp.Optional {
		t.Errorf("SpecOf(control) = %+v, %v, want an optional stream", sp, ok)
	}
	if _, ok := bus.SpecOf("nope"); ok {
		t.Error(`SpecOf("nope") found a stream`)
	}
}

// TestFronteraGroupsAndPartitioners pins what Frontera interoperability needs: Frontera's group names (offsets
// committed by either are understood by the other) and Frontera's partitioners on each stream.
func TestFronteraGroupsAndPartitioners(t *testing.T) {
	for _, tc := range []struct {
		s           bus.Stream
		reader      string
		group       string
		partitioner string
	}{
		{bus.SpiderLog, "strategy worker", "sw-spider-log", "fingerprint"},
		{bus.SpiderLog, "DB worker (links role)", "dbw-spider-log", "fingerprint"},
		{bus.ScoringLog, "DB worker (scoring role)", "dbw-scoring-log", "crc32_name"},
		{bus.SpiderFeed, "spider", "fetchers-spider-feed", "crc32_name"},
	} {
		if g, ok := bus.GroupOf(tc.s, tc.reader); !ok || g != tc.group {
			t.Errorf("GroupOf(%s, %s) = %q, %v, want %q", tc.s, tc.reader, g, ok, tc.group)
		}
		if sp, _ := bus.SpecOf(tc.s); sp.PartitionerName != tc.partitioner {
			t.Errorf("%s: partitioner %q, want %q", tc.s, sp.PartitionerName, tc.partitioner)
		}
	}
	if _, ok := bus.GroupOf(bus.SpiderFeed, "nobody"); ok {
		t.Error("GroupOf found a group for a reader the declaration lacks")
	}
	want := []bus.StreamGroup{
		{Stream: bus.SpiderFeed, Group: bus.GroupSpiderFeed},
		{Stream: bus.SpiderLog, Group: bus.GroupStrategyWorkerSpiderLog},
		{Stream: bus.SpiderLog, Group: bus.GroupDBWorkerSpiderLog},
		{Stream: bus.ScoringLog, Group: bus.GroupDBWorkerScoringLog},
	}
	if got := bus.LagGroups(); !slices.Equal(got, want) {
		t.Errorf("LagGroups() = %v, want %v", got, want)
	}
	rg := bus.RetainedGroups()
	if len(rg) != 3 || !slices.Equal(rg[bus.SpiderLog], []string{bus.GroupStrategyWorkerSpiderLog, bus.GroupDBWorkerSpiderLog}) {
		t.Errorf("RetainedGroups() = %v", rg)
	}
}

// TestTopologyIsACopy checks that callers cannot change the declaration through what they are given.
func TestTopologyIsACopy(t *testing.T) {
	top := bus.Topology()
	top[0].Groups[0].Name = "changed"
	top[0].Stream = "changed"
	sp, _ := bus.SpecOf(bus.SpiderFeed)
	sp.Groups[0].Name = "changed"
	bus.RetainedGroups()[bus.SpiderFeed][0] = "changed"
	if again := bus.Topology(); again[0].Stream != bus.SpiderFeed || again[0].Groups[0].Name != bus.GroupSpiderFeed {
		t.Errorf("the declaration changed: %+v", again[0])
	}
	if g := bus.RetainedGroups()[bus.SpiderFeed]; g[0] != bus.GroupSpiderFeed {
		t.Errorf("RetainedGroups changed: %v", g)
	}
}

// TestOpenProducer sends through producers opened by stream name and checks where the messages land: keyed
// streams by their declared partitioner, routed ones at the message's own partition.
func TestOpenProducer(t *testing.T) {
	ctx := t.Context()
	cfg := membus.DefaultConfig()
	cfg.Partitions = map[bus.Stream]int{bus.SpiderLog: 5, bus.ScoringLog: 3, bus.SpiderFeed: 4}
	b, err := membus.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, tc := range []struct {
		s    bus.Stream
		key  string
		part int // the message's own partition
		want int
	}{
		{bus.SpiderLog, "3b6bb5b0a8ae8a1bd4c9f4d3ac0f8a26b9b2a3d4", 0, partition.Fingerprint([]byte("3b6bb5b0a8ae8a1bd4c9f4d3ac0f8a26b9b2a3d4"), 5)},
		{bus.ScoringLog, "example.com", 0, partition.Crc32Name([]byte("example.com"), 3)},
		{bus.SpiderFeed, "example.com", 2, 2},
	} {
		p, err := bus.OpenProducer(ctx, b, tc.s)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Send(ctx, bus.Message{Key: []byte(tc.key), Value: []byte("v"), Partition: tc.part}); err != nil {
			t.Fatal(err)
		}
		p.Close()
		lags, err := b.Lag(ctx, tc.s, "probe")
		if err != nil {
			t.Fatal(err)
		}
		for part, l := range lags {
			if (l > 0) != (part == tc.want) {
				t.Errorf("%s: key %q landed on partitions %v, want %d", tc.s, tc.key, lags, tc.want)
				break
			}
		}
	}
	if _, err := bus.OpenProducer(ctx, b, "nope"); err == nil {
		t.Error("OpenProducer opened an unknown stream")
	}
}

// TestArchitectureDocTable checks that the stream table of docs/architecture.md is the one the declaration
// renders; run with -update to rewrite it.
func TestArchitectureDocTable(t *testing.T) {
	const begin, end = "<!-- topology: generated from bus/topology.go by `go test ./bus -run TestArchitectureDocTable -update` -->\n", "<!-- end of topology -->\n"
	path := filepath.Join("..", "docs", "architecture.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(doc), begin)
	if !ok {
		t.Fatalf("%s has no line %q", path, begin)
	}
	_, after, ok := strings.Cut(rest, end)
	if !ok {
		t.Fatalf("%s has no line %q after the table", path, end)
	}
	want := before + begin + streamTable() + end + after
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(doc) != want {
		t.Errorf("the stream table of %s is not the declaration's; run go test ./bus -run TestArchitectureDocTable -update\nwant:\n%s", path, streamTable())
	}
}

// streamTable renders the declaration as the Markdown table of docs/architecture.md.
func streamTable() string {
	var sb strings.Builder
	sb.WriteString("| stream | default topic | key | partitioner | partitions | written by | read by (consumer group: partitions read) |\n")
	sb.WriteString("|---|---|---|---|---|---|---|\n")
	kcfg := kafkabus.DefaultConfig()
	for _, sp := range bus.Topology() {
		sc, _ := kcfg.Stream(sp.Stream)
		part := "none (one partition)"
		if sp.Partitioner != nil {
			part = fmt.Sprintf("`%s`", sp.PartitionerName)
			if sp.Routed {
				part += ", computed by the writer ahead of the send (each message carries its partition)"
			}
		}
		var readers []string
		for _, g := range sp.Groups {
			name := "a group of its own, never committed"
			if g.Name != "" {
				name = fmt.Sprintf("`%s`", g.Name)
			}
			readers = append(readers, fmt.Sprintf("%s (%s): %s", g.Reader, name, g.Reads))
		}
		fmt.Fprintf(&sb, "| %s | `%s` | %s | %s | %s | %s | %s |\n", strings.ReplaceAll(string(sp.Stream), "-", " "),
			sc.Topic, sp.Key, part, sp.Partitions, sp.Writers, strings.Join(readers, "; "))
	}
	return sb.String()
}
