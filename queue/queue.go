// Package queue is the frontier's priority queue (docs/architecture.md, "Stores": queue): the Queue interface that HBase and
// Pebble implement, and an in-memory implementation for unit tests.
//
// Contract, the cure for Frontera's queue bugs (#87, #393, #227, delete-before-send):
//   - One row per URL: scheduling the same fingerprint twice keeps one item (the later score and request win).
//   - Next never removes anything. It returns the best-scored due items of one spider partition, at most
//     Limits.PerHost per host, and leaves the rest (including items a cap skipped) queued.
//   - Ack removes exactly the items given, after the caller has delivered them (Kafka acknowledged). An item
//     with a Request removes its row only while the row still holds that request: a row scheduled again since
//     the item was taken (a retry of the URL, scheduled while the batch was on its way) is another item and
//     stays, or the retry would be lost.
//   - Items whose NotBefore is in the future are not returned before they are due.
//   - A score outside [0, 1] is an error for that item only; the others in the batch are stored.
//   - Re-scheduling a fingerprint replaces its row wherever it is (another score, partition or due time).
//
// Implementations should validate items with Check and shape batches with a Picker (memory and Pebble do), so
// they agree on what is rejected and what a batch holds; queue/queuetest is the conformance suite that holds
// every implementation to this contract.
// Memory is the in-memory implementation (for unit tests: Next sorts the partition each call).
//
// It imports only the frontier package and the standard library.
package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/frontiercrawl/frontier"
)

// Item is one queued URL.
type Item struct {
	Partition   int                  // spider-feed partition (crc32 hostname partitioner)
	Host        string               // hostname, for per-host caps
	Fingerprint frontier.Fingerprint // identity; one row per fingerprint
	Score       float64              // in [0, 1]; higher is fetched first
	NotBefore   int64                // Unix seconds; 0 = due now
	Request     []byte               // the encoded feed request (codec bytes), opaque to the queue
}

// Limits shapes one batch from Next.
type Limits struct {
	Max      int // at most this many items
	PerHost  int // at most this many items of one host; 0 = no cap
	MinHosts int // keep scanning past the best rows until this many hosts are represented, if the queue has them
	// HostCap, when set, is the cap of each host in this batch instead of PerHost: the DB worker's flow control
	// gives each host what its queue at the spider lacks (dbworker/flow.go). 0 leaves the host out of the
	// batch; its rows stay queued. It is called at most once per host and Next call.
	HostCap func(host string) int
}

// Queue is safe for concurrent use.
type Queue interface {
	// Schedule stores the items. Invalid items (score outside [0, 1], negative partition, no fingerprint) are
	// skipped and reported in a *ScheduleError; the valid ones are stored either way.
	Schedule(ctx context.Context, items []Item) error
	// Next returns up to lim.Max due items of one partition, best score first, without removing them.
	Next(ctx context.Context, partition int, now int64, lim Limits) ([]Item, error)
	// Ack removes the given items (matched by partition and fingerprint, and by request bytes when the item
	// has a Request).
	Ack(ctx context.Context, items []Item) error
	// Count returns the number of items queued for a partition.
	Count(ctx context.Context, partition int) (int64, error)
}

// ItemError is one rejected item of a Schedule call.
type ItemError struct {
	Index int // position in the Schedule batch
	Err   error
}

// ScheduleError lists the items a Schedule call rejected; the other items were stored.
type ScheduleError struct{ Items []ItemError }

func (e *ScheduleError) Error() string {
	if len(e.Items) == 1 {
		return fmt.Sprintf("queue: item %d rejected: %v", e.Items[0].Index, e.Items[0].Err)
	}
	return fmt.Sprintf("queue: %d items rejected; first, item %d: %v", len(e.Items), e.Items[0].Index, e.Items[0].Err)
}

// ErrScoreRange is the error of an item whose score lies outside [0, 1].
var ErrScoreRange = errors.New("queue: score outside [0, 1]")
