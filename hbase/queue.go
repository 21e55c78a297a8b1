package hbase

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/hbase/internal/thrift2"
	"github.com/frontiercrawl/frontier/queue"
)

// Queue is the queue.Queue on the queue table (layout in the package doc). Safe for concurrent use; it borrows
// the Client, which its creator closes.
type Queue struct {
	c     *Client
	table []byte
	name  string
	// stripes serialise Schedule and Ack calls of this Queue that touch the same fingerprints, so concurrent
	// writers in one process never leave two rows for one URL (read index, write index and row, delete the old
	// row is not atomic in HBase). Writers in different processes may race; Next removes what they leave.
	stripes [256]sync.Mutex
	stats   queueStats
}

// queueStats counts what Next read, for benchmarks.
type queueStats struct{ scans, rows atomic.Int64 }

var _ queue.Queue = (*Queue)(nil)

// Queue returns the queue store.
func (c *Client) Queue() *Queue {
	n := c.cfg.table(queueTable)
	return &Queue{c: c, table: []byte(n), name: n}
}

// ErrPartitionRange is the error of an item whose partition the row key cannot hold.
var ErrPartitionRange = fmt.Errorf("hbase: partition outside [0, %d]", maxPartition)

func validItem(it *queue.Item) error {
	if err := queue.Check(it); err != nil {
		return err
	}
	if it.Partition > maxPartition {
		return fmt.Errorf("%w: %d", ErrPartitionRange, it.Partition)
	}
	return nil
}

// Schedule stores the items, one row per fingerprint, in three calls whatever the batch size (each split into
// chunks of Config.GetBatch/PutBatch run in parallel): a multi-get of the fingerprint index, one putMultiple of
// the queue rows and the index rows that change, and a deleteMultiple of the rows the index pointed to before
// (a re-schedule with another score, host or partition). An index row remembers the key it replaced (q:p), so
// replaying a batch that a crash interrupted after its puts still deletes the old row.
func (q *Queue) Schedule(ctx context.Context, items []queue.Item) error {
	var bad []queue.ItemError
	last := make(map[string]int, len(items)) // fingerprint -> index of its last valid item
	for i := range items {
		if err := validItem(&items[i]); err != nil {
			bad = append(bad, queue.ItemError{Index: i, Err: err})
			continue
		}
		last[string(items[i].Fingerprint)] = i
	}
	keep := make([]int, 0, len(last))
	for i := range items {
		if j, ok := last[string(items[i].Fingerprint)]; ok && j == i {
			keep = append(keep, i)
		}
	}
	if err := q.schedule(ctx, items, keep); err != nil {
		return err
	}
	if len(bad) > 0 {
		return &queue.ScheduleError{Items: bad}
	}
	return nil
}

func (q *Queue) schedule(ctx context.Context, items []queue.Item, keep []int) error {
	if len(keep) == 0 {
		return nil
	}
	fps := make([]frontier.Fingerprint, len(keep))
	for n, i := range keep {
		fps[n] = items[i].Fingerprint
	}
	defer q.lock(fps)()
	old, err := q.readIndex(ctx, fps)
	if err != nil {
		return err
	}
	puts := make([]*thrift2.TPut, 0, 2*len(keep))
	var dels []*thrift2.TDelete
	for n, i := range keep {
		it := &items[i]
		key := queueKey(it.Partition, scoreBucket(it.Score, q.c.cfg.ScoreBuckets), it.Host, it.Fingerprint)
		puts = append(puts, &thrift2.TPut{Row: key, ColumnValues: []*thrift2.TColumnValue{{Family: famQueue, Qualifier: qualQueue, Value: queueValue(it.Score, it.NotBefore, it.Request)}}})
		cur, prev := old[n].cur, old[n].prev
		if prev != nil && !bytes.Equal(prev, key) {
			dels = append(dels, &thrift2.TDelete{Row: prev}) // left by an interrupted schedule; usually gone already
		}
		if bytes.Equal(cur, key) {
			continue // same row as before (a replay, a new request or due time): the index stands
		}
		cv := []*thrift2.TColumnValue{{Family: famQueue, Qualifier: qualIndex, Value: key}}
		if cur != nil {
			cv = append(cv, &thrift2.TColumnValue{Family: famQueue, Qualifier: qualPrev, Value: cur})
			dels = append(dels, &thrift2.TDelete{Row: cur})
		}
		puts = append(puts, &thrift2.TPut{Row: indexKey(it.Fingerprint), ColumnValues: cv})
	}
	if err := q.c.chunks(ctx, len(puts), q.c.cfg.PutBatch, func(ctx context.Context, lo, hi int) error {
		return q.c.putMultiple(ctx, q.name, q.table, puts[lo:hi])
	}); err != nil {
		return err
	}
	return q.deleteRows(ctx, dels, true)
}

// indexEntry is a fingerprint's index row: its current queue row key and the key that one replaced.
type indexEntry struct{ cur, prev []byte }

func (q *Queue) readIndex(ctx context.Context, fps []frontier.Fingerprint) ([]indexEntry, error) {
	gets := make([]*thrift2.TGet, len(fps))
	for i, fp := range fps {
		gets[i] = &thrift2.TGet{Row: indexKey(fp), Columns: []*thrift2.TColumn{{Family: famQueue}}}
	}
	res, err := q.c.getMultiple(ctx, q.name, q.table, gets)
	if err != nil {
		return nil, err
	}
	out := make([]indexEntry, len(fps))
	for i, r := range res {
		out[i] = indexEntry{cur: cellValue(r, famQueue, qualIndex), prev: cellValue(r, famQueue, qualPrev)}
	}
	return out, nil
}

// deleteRows deletes dels in chunks; fenced as for Client.deleteMultiple.
func (q *Queue) deleteRows(ctx context.Context, dels []*thrift2.TDelete, fenced bool) error {
	return q.c.chunks(ctx, len(dels), q.c.cfg.PutBatch, func(ctx context.Context, lo, hi int) error {
		return q.c.deleteMultiple(ctx, q.name, q.table, dels[lo:hi], fenced)
	})
}

// Next scans the partition's key range from its best bucket with range scans and offers the due rows, best
// first, to a queue.Picker (which applies the limits). The first scan asks for a little more than lim.Max rows;
// after a scan whose last row belongs to a host the Picker no longer wants, the next scan starts past that
// host's rows in the bucket instead of reading them. It stops once the Picker is done, the partition is
// exhausted, or Config.ScanMaxRows rows were read. Nothing is removed.
func (q *Queue) Next(ctx context.Context, partition int, now int64, lim queue.Limits) ([]queue.Item, error) {
	if partition < 0 || partition > maxPartition {
		return nil, fmt.Errorf("hbase: next: %w: %d", ErrPartitionRange, partition)
	}
	if lim.Max <= 0 {
		return nil, nil
	}
	items, err := q.pick(ctx, partition, now, lim)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(items, func(a, b queue.Item) int { return cmp.Compare(b.Score, a.Score) })
	return items, nil
}

// pick builds one batch.
func (q *Queue) pick(ctx context.Context, partition int, now int64, lim queue.Limits) ([]queue.Item, error) {
	var (
		pk    = queue.NewPicker(lim)
		seen  = map[string]bool{} // fingerprints offered
		start = partitionPrefix(partition)
		stop  = partitionEnd(partition)
		read  = 0
	)
	// The first scan asks for a little more than the batch (most rows are usually wanted); later scans, needed
	// when caps or not-yet-due rows skip many rows, double up to Config.ScanBatch.
	size := min(q.c.cfg.ScanBatch, lim.Max+lim.Max/4+8)
	for !pk.Done() && read < q.c.cfg.ScanMaxRows {
		n := min(size, q.c.cfg.ScanMaxRows-read)
		size = min(2*size, q.c.cfg.ScanBatch)
		rows, err := q.scan(ctx, start, stop, n)
		if err != nil {
			return nil, err
		}
		read += len(rows)
		q.stats.scans.Add(1)
		q.stats.rows.Add(int64(len(rows)))
		for _, r := range rows {
			if pk.Done() {
				break
			}
			it, ok := q.decodeRow(r)
			if !ok || it.NotBefore > now {
				continue
			}
			it.Partition = partition
			if seen[string(it.Fingerprint)] {
				continue // a second row of one URL (concurrent writers in two processes): serve one
			}
			seen[string(it.Fingerprint)] = true
			pk.Offer(it)
		}
		if len(rows) < n {
			break // the partition is exhausted
		}
		last := rows[len(rows)-1].Row
		if _, _, host, _, err := decodeQueueKey(last); err == nil && !pk.Wants(host) {
			start = hostEnd(last) // the rest of this host's rows in this bucket would all be skipped
		} else {
			start = append(bytes.Clone(last), 0)
		}
	}
	return pk.Items(), nil
}

func (q *Queue) scan(ctx context.Context, start, stop []byte, n int) ([]*thrift2.TResult_, error) {
	// MaxVersions must be set: a literal's zero is sent as "0 versions" (only the IDL default 1 is left unsent).
	scan := &thrift2.TScan{
		StartRow: start, StopRow: stop,
		Columns: []*thrift2.TColumn{{Family: famQueue, Qualifier: qualQueue}},
		Caching: thrift.Int32Ptr(int32(n)), MaxVersions: 1, Limit: thrift.Int32Ptr(int32(n)),
	}
	var rows []*thrift2.TResult_
	err := q.c.do(ctx, "getScannerResults "+q.name, true, func(ctx context.Context, svc thrift2.THBaseService) (err error) {
		rows, err = svc.GetScannerResults(ctx, q.table, scan, int32(n))
		return err
	})
	return rows, err
}

// decodeRow turns a scanned row into an item; a row that does not decode is logged and skipped, so one
// corrupt row cannot block a partition.
func (q *Queue) decodeRow(r *thrift2.TResult_) (queue.Item, bool) {
	_, _, host, fp, err := decodeQueueKey(r.Row)
	if err == nil {
		var score float64
		var nb int64
		var req []byte
		score, nb, req, err = decodeQueueValue(cellValue(r, famQueue, qualQueue))
		if err == nil {
			return queue.Item{Host: host, Fingerprint: fp, Score: score, NotBefore: nb, Request: req}, true
		}
	}
	q.c.log.Warn("skipping undecodable queue row", "table", q.name, "row", fmt.Sprintf("%x", r.Row), "err", err)
	return queue.Item{}, false
}

// Ack deletes the rows of the items, as Next returned them (the row key is rebuilt from partition, score, host
// and fingerprint), in one deleteMultiple. An item with a Request deletes its row only while the row still
// holds that request: the rows are read first (one getMultiple), so a row scheduled again since the item was
// taken (a retry, whose request carries another retry_times) stays; the read and the delete hold the same
// fingerprint locks as Schedule, so a Schedule in this process cannot slip between them. The index rows stay:
// a later Schedule of the same URL finds its old key there (the row is gone; deleting it again is harmless),
// so the index costs one small row per URL ever queued, like the states table. An item acknowledged with
// another partition, score or host than its row has deletes nothing.
func (q *Queue) Ack(ctx context.Context, items []queue.Item) error {
	fps := make([]frontier.Fingerprint, len(items))
	rows := make([]*thrift2.TDelete, 0, len(items))
	var gets []*thrift2.TGet
	var reqs [][]byte // the request each get must find, parallel to gets
	for i := range items {
		it := &items[i]
		if err := validItem(it); err != nil {
			return fmt.Errorf("hbase: ack item %d: %w", i, err)
		}
		fps[i] = it.Fingerprint
		key := queueKey(it.Partition, scoreBucket(it.Score, q.c.cfg.ScoreBuckets), it.Host, it.Fingerprint)
		if len(it.Request) > 0 {
			gets = append(gets, &thrift2.TGet{Row: key, Columns: []*thrift2.TColumn{{Family: famQueue, Qualifier: qualQueue}}})
			reqs = append(reqs, it.Request)
			continue
		}
		rows = append(rows, &thrift2.TDelete{Row: key})
	}
	if len(rows) == 0 && len(gets) == 0 {
		return nil
	}
	defer q.lock(fps)()
	if len(gets) > 0 {
		res, err := q.c.getMultiple(ctx, q.name, q.table, gets)
		if err != nil {
			return err
		}
		for j, r := range res {
			v := cellValue(r, famQueue, qualQueue)
			if v == nil {
				continue // gone already (a replayed ack)
			}
			if _, _, req, err := decodeQueueValue(v); err == nil && !bytes.Equal(req, reqs[j]) {
				continue // scheduled again since it was taken: not the item delivered
			}
			rows = append(rows, ackDelete(gets[j].Row, r))
		}
	}
	return q.deleteRows(ctx, rows, false) // not fenced: dbworker/fence.go says why
}

// ackDelete deletes the queue cell Ack read in r, and no later one. The fingerprint locks keep out a Schedule
// of this process only: another DB worker's scoring role may schedule the URL again (a retry: its first attempt
// was fetched and reported meanwhile) between the read and the delete, which is no longer a window of
// milliseconds when an HBase outage holds the delete back, as the fault suite's random outages do. So the delete
// is bounded by the timestamp of the cell read: a put made after the read has a later one and stays. A plain row
// delete left such a retry QUEUED with no queue row, never fetched (TestIntegrationAckKeepsARetryScheduledMeanwhile;
// e2e TestFaults ended once with the blackhole host's home page stranded so: each of its attempts times out after
// 10 s, long enough for its retry to be scheduled while an HBase outage held the batch's Ack back).
func ackDelete(row []byte, r *thrift2.TResult_) *thrift2.TDelete {
	for _, cv := range r.ColumnValues {
		if string(cv.Family) == string(famQueue) && string(cv.Qualifier) == string(qualQueue) && cv.Timestamp != nil {
			ts := *cv.Timestamp
			return &thrift2.TDelete{Row: row, DeleteType: thrift2.TDeleteType_DELETE_COLUMNS,
				Columns: []*thrift2.TColumn{{Family: famQueue, Qualifier: qualQueue, Timestamp: &ts}}}
		}
	}
	return &thrift2.TDelete{Row: row}
}

// Count counts the partition's rows with a key-only scan. It reads every row of the partition (keys only), so it
// is meant for stats lines, not for hot paths.
func (q *Queue) Count(ctx context.Context, partition int) (int64, error) {
	if partition < 0 || partition > maxPartition {
		return 0, fmt.Errorf("hbase: count: %w: %d", ErrPartitionRange, partition)
	}
	var total int64
	err := q.c.do(ctx, "count "+q.name, true, func(ctx context.Context, svc thrift2.THBaseService) error {
		total = 0
		id, err := svc.OpenScanner(ctx, q.table, &thrift2.TScan{
			StartRow: partitionPrefix(partition), StopRow: partitionEnd(partition),
			Caching: thrift.Int32Ptr(10000), MaxVersions: 1, FilterString: []byte("FirstKeyOnlyFilter() AND KeyOnlyFilter()"),
		})
		if err != nil {
			return err
		}
		defer svc.CloseScanner(context.WithoutCancel(ctx), id)
		for {
			rows, err := svc.GetScannerRows(ctx, id, 10000)
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				return nil
			}
			total += int64(len(rows))
		}
	})
	return total, err
}

// lock takes the stripes of fps in ascending order and returns the unlock.
func (q *Queue) lock(fps []frontier.Fingerprint) func() {
	var want [len(Queue{}.stripes)]bool
	for _, fp := range fps {
		want[stripe(fp)] = true
	}
	for i := range want {
		if want[i] {
			q.stripes[i].Lock()
		}
	}
	return func() {
		for i := range want {
			if want[i] {
				q.stripes[i].Unlock()
			}
		}
	}
}

func stripe(fp frontier.Fingerprint) int {
	h := uint32(2166136261)
	for _, b := range fp {
		h = (h ^ uint32(b)) * 16777619
	}
	return int(h % 256)
}
