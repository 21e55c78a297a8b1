package dbworker

import (
	"context"
	"fmt"

	"github.com/frontiercrawl/frontier/bus"
)

// Fencing the DB worker's HBase writes (docs/reliability.md, "Ownership is fenced").
//
// bus.Own gives each role's work a context whose fence (bus.WithFence) the bus calls before every Kafka write
// and commit. The HBase writes a role makes for its partitions go through no such call, so a DB worker stopped
// past its session (SIGSTOP, a long pause) and resumed mid-batch would still write them before its commit was
// refused. Which of them harm:
//
//   - scoring, Queue.Schedule: harmful. The new owner replays the batch, the batch generator dispatches its
//     rows and acknowledges (deletes) them; a stale Schedule then writes the rows again and their URLs are
//     fetched a second time. Fenced: checked right before the write.
//   - links, Pages.Put: the stale record is that of the same events the new owner records, but its times are
//     this process's clock and a status it writes late may cover a newer fetch's. Fenced the same way.
//   - links, the counters: harmless. Each event is a metadata.Tally keyed by its spider-log partition and
//     offset, and the store applies an offset once per source whoever writes it (hbase/doc.go), so a stale
//     write of offsets the new owner counted changes nothing, and one of offsets it has not counted yet is the
//     count it would make. Not fenced (TestStaleCounterWriteHarmless).
//   - batches, Queue.Ack: not fenced on purpose. It records that the batch it follows was delivered (Send is
//     fenced, so an Ack follows only a send this process made while it owned the partition) and deletes a row
//     only while the row still holds the request delivered (hbase Queue.Ack). Refusing it would leave the rows
//     for the new owner to send a second time.
//
// The check is a call to the fence the context carries: with kafkabus, a passing answer of the ownership
// group's coordinator stands for 200 ms of the monotonic clock, so a busy worker adds no request per batch
// (its Kafka writes asked already) and a resumed one always asks again. The check here saves a refused
// batch its reads; the hbase stores ask the same fence again right before each write request and each retry
// of one (hbase Client.doFenced), so the time a stop can fall into is the instant between that answer and the
// request, not Schedule's index read, its locks or an outage's retries. What it cannot close: the check and
// the write are two requests (HBase's only atomic check, checkAndMutate, covers one row, and a scoring batch
// writes thousands, bus/kafkabus/fence.go says the same of Kafka), so a process stopped between them writes
// once when resumed. hbase BenchmarkIntegrationFencedPut measures what a per-row fence would cost instead.

// fenced returns nil while this process still owns the partitions ctx's work was given, and an error
// matching bus.ErrFenced, naming what was refused, once it does not.
func fenced(ctx context.Context, what string) error {
	if err := bus.CheckFence(ctx); err != nil {
		return fmt.Errorf("dbworker: %s refused: %w", what, err)
	}
	return nil
}
