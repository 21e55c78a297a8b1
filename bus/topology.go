package bus

import (
	"context"
	"fmt"
	"slices"

	"github.com/frontiercrawl/frontier/partition"
)

// The stream topology: which streams exist, what their messages are keyed by, which partitioner maps a key to a
// partition, who writes, and which consumer groups read which partitions. It is declared once, here, as data
// (Topology), and everything else is derived from it: roles open their producers by stream name
// (OpenProducer), the DB worker computes feed partitions with Partition, lag reports and idle checks read
// LagGroups, the in-process buses keep the backlog of RetainedGroups, and docs/architecture.md's stream table
// is checked against it by a test in this package. A role that picked its own partitioner could send a host's
// events to a strategy worker that does not own the host, and nothing would notice: so no package outside bus/
// and partition/ imports a partitioner (internal/archtest enforces it).

// Reads says which partitions of a stream the processes of a consumer group read.
type Reads string

const (
	// ReadsOwn: process p of the role reads partition p only (its --partition-id). A second process started for
	// the same partition waits as a standby (see Owner).
	ReadsOwn Reads = "partition p"
	// ReadsShared: the role's processes share every partition among themselves (see Owner): one process alone
	// reads them all.
	ReadsShared Reads = "every partition, shared"
	// ReadsReplay: every process reads the whole stream from the start in a group of its own and never
	// commits, so it always replays everything.
	ReadsReplay Reads = "every partition, replayed"
)

// Group is one consumer group of a stream.
type Group struct {
	// Name is the consumer group, where committed offsets live. Empty for ReadsReplay: each process names its
	// own group.
	Name string
	// Reader is the role whose processes read in the group.
	Reader string
	Reads  Reads
}

// Spec declares one stream.
type Spec struct {
	Stream Stream
	// Writers are the roles that produce to the stream.
	Writers string
	// Key is what a message's key is.
	Key string
	// Partitioner maps a key to a partition, and PartitionerName is its name in package partition. A stream of
	// one partition has none.
	Partitioner     Partitioner
	PartitionerName string
	// Routed streams are written to the partition each message carries (Message.Partition), which the writer
	// computed with Partition earlier: the DB worker stores it in the queue row, so a batch goes to the
	// partition whose queue it came from.
	Routed bool
	// Partitions says how many partitions the stream has (the count itself is configuration).
	Partitions string
	// Groups are the consumer groups that read the stream.
	Groups []Group
	// Optional streams may be absent from a bus: without a control stream there is no run-time control.
	Optional bool
}

// The consumer groups Frontera uses (the SPIDER_LOG_SW_GROUP, SPIDER_LOG_DBW_GROUP, SCORING_LOG_DBW_GROUP and
// SPIDER_FEED_GROUP defaults of Frontera 0.8's settings); Frontier keeps the names so that offsets committed by
// one implementation are understood by the other. They are not configurable.
const (
	GroupStrategyWorkerSpiderLog = "sw-spider-log"        // strategy worker p on spider-log partition p
	GroupDBWorkerSpiderLog       = "dbw-spider-log"       // DB worker on every spider-log partition
	GroupDBWorkerScoringLog      = "dbw-scoring-log"      // DB worker on every scoring-log partition
	GroupSpiderFeed              = "fetchers-spider-feed" // spider p on spider-feed partition p
)

// topology is the declaration. Its order is the order of lag reports (the spider feed first: its lag is the
// work in flight) and of the table in docs/architecture.md.
var topology = []Spec{
	{
		Stream:  SpiderFeed,
		Writers: "DB worker (batches role)",
		Key:     "the request's hostname",
		// Frontera's QUEUE_HOSTNAME_PARTITIONING: one spider fetches all of a host, so one process enforces
		// its politeness.
		Partitioner: partition.Crc32Name, PartitionerName: "crc32_name",
		Routed:     true,
		Partitions: "one per spider",
		Groups:     []Group{{Name: GroupSpiderFeed, Reader: "spider", Reads: ReadsOwn}},
	},
	{
		Stream:  SpiderLog,
		Writers: "spiders; frontierctl seeds add",
		Key:     "the hex domain fingerprint of the host (a page's links are split per link host)",
		// One strategy worker owns each host, so its URL-seen test is exact without coordination.
		Partitioner: partition.Fingerprint, PartitionerName: "fingerprint",
		Partitions: "one per strategy worker",
		Groups: []Group{
			{Name: GroupStrategyWorkerSpiderLog, Reader: "strategy worker", Reads: ReadsOwn},
			{Name: GroupDBWorkerSpiderLog, Reader: "DB worker (links role)", Reads: ReadsShared},
		},
	},
	{
		Stream:      ScoringLog,
		Writers:     "strategy workers; spiders returning held requests",
		Key:         "the target hostname",
		Partitioner: partition.Crc32Name, PartitionerName: "crc32_name",
		Partitions: "any (Frontera: 1)",
		Groups:     []Group{{Name: GroupDBWorkerScoringLog, Reader: "DB worker (scoring role)", Reads: ReadsShared}},
	},
	{
		Stream:     Control,
		Writers:    "frontierctl block, unblock, pause, resume",
		Key:        "the command's op",
		Routed:     true, // everything goes to partition 0
		Partitions: "1 (commands are ordered)",
		Groups:     []Group{{Reader: "every DB worker, strategy worker and spider", Reads: ReadsReplay}},
		Optional:   true,
	},
}

// Topology returns the declaration of every stream, in a fixed order; the caller may modify the copy.
func Topology() []Spec {
	out := slices.Clone(topology)
	for i := range out {
		out[i].Groups = slices.Clone(out[i].Groups)
	}
	return out
}

// SpecOf returns the declaration of stream s, and false for an unknown stream.
func SpecOf(s Stream) (Spec, bool) {
	for _, sp := range topology {
		if sp.Stream == s {
			sp.Groups = slices.Clone(sp.Groups)
			return sp, true
		}
	}
	return Spec{}, false
}

// Partition returns the partition of key in stream s of n partitions, with the stream's declared partitioner
// (0 for a stream without one, or an unknown stream).
func Partition(s Stream, key []byte, n int) int {
	sp, ok := SpecOf(s)
	if !ok || sp.Partitioner == nil {
		return 0
	}
	return sp.Partitioner(key, n)
}

// OpenProducer opens a producer of stream s on b as the declaration says: keyed streams go through the
// stream's partitioner, routed ones to each message's own Partition.
func OpenProducer(ctx context.Context, b Bus, s Stream) (Producer, error) {
	sp, ok := SpecOf(s)
	if !ok {
		return nil, fmt.Errorf("bus: unknown stream %q", s)
	}
	if sp.Routed {
		return b.Producer(ctx, s, nil)
	}
	return b.Producer(ctx, s, sp.Partitioner)
}

// StreamGroup names a consumer group of a stream.
type StreamGroup struct {
	Stream Stream
	Group  string
}

// LagGroups returns every committing consumer group of the declared streams, in the declaration's order: the
// groups whose lag is the crawl's unfinished work (lag reports, status, idle checks). Replaying groups
// (the control stream's) never commit and are left out.
func LagGroups() []StreamGroup {
	var out []StreamGroup
	for _, sp := range topology {
		for _, g := range sp.Groups {
			if g.Reads != ReadsReplay {
				out = append(out, StreamGroup{Stream: sp.Stream, Group: g.Name})
			}
		}
	}
	return out
}

// RetainedGroups returns, per stream, the committing consumer groups whose uncommitted messages an in-process
// bus must keep even before they open a consumer (bus/membus, bus/pebblebus). The caller may modify the map.
func RetainedGroups() map[Stream][]string {
	out := map[Stream][]string{}
	for _, g := range LagGroups() {
		out[g.Stream] = append(out[g.Stream], g.Group)
	}
	return out
}

// GroupOf returns the name of the consumer group in which reader reads stream s, and false if the declaration
// has none.
func GroupOf(s Stream, reader string) (string, bool) {
	sp, _ := SpecOf(s)
	for _, g := range sp.Groups {
		if g.Reader == reader {
			return g.Name, true
		}
	}
	return "", false
}
