package hbase

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

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
}

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

// Schedule stores the items, one row per fingerprint: it reads the fingerprint index, writes the index rows,
// then the queue rows, then deletes the rows the index pointed to before (a re-schedule with another score or
// partition). Writing the index first means a queue row the index does not point to is always stale, which
// lets Next drop rows a crash left behind.
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
	buckets := q.c.cfg.ScoreBuckets
	gets := make([]*thrift2.TGet, len(keep))
	keys := make([][]byte, len(keep))
	for n, i := range keep {
		it := &items[i]
		gets[n] = &thrift2.TGet{Row: indexKey(it.Fingerprint), Columns: []*thrift2.TColumn{{Family: famQueue, Qualifier: qualIndex}}}
		keys[n] = queueKey(it.Partition, scoreBucket(it.Score, buckets), it.Host, it.Fingerprint)
	}
	old, err := q.c.getMultiple(ctx, q.name, q.table, gets)
	if err != nil {
		return err
	}
	idx := make([]*thrift2.TPut, 0, len(keep))
	rows := make([]*thrift2.TPut, len(keep))
	var dels []*thrift2.TDelete
	for n, i := range keep {
		it := &items[i]
		rows[n] = &thrift2.TPut{Row: keys[n], ColumnValues: []*thrift2.TColumnValue{{Family: famQueue, Qualifier: qualQueue, Value: queueValue(it.Score, it.NotBefore, it.Request)}}}
		ok := cellValue(old[n], famQueue, qualIndex)
		if bytes.Equal(ok, keys[n]) {
			continue // same row as before (a replay, or a new request or due time): the index stands
		}
		idx = append(idx, &thrift2.TPut{Row: gets[n].Row, ColumnValues: []*thrift2.TColumnValue{{Family: famQueue, Qualifier: qualIndex, Value: keys[n]}}})
		if ok != nil {
			dels = append(dels, &thrift2.TDelete{Row: ok})
		}
	}
	for _, step := range [][]*thrift2.TPut{idx, rows} {
		if err := q.c.chunks(ctx, len(step), q.c.cfg.PutBatch, func(ctx context.Context, lo, hi int) error {
			return q.c.putMultiple(ctx, q.name, q.table, step[lo:hi])
		}); err != nil {
			return err
		}
	}
	return q.deleteRows(ctx, dels)
}

func (q *Queue) deleteRows(ctx context.Context, dels []*thrift2.TDelete) error {
	return q.c.chunks(ctx, len(dels), q.c.cfg.PutBatch, func(ctx context.Context, lo, hi int) error {
		return q.c.deleteMultiple(ctx, q.name, q.table, dels[lo:hi])
	})
}

// Next scans the partition's key range from its best bucket with range scans of Config.ScanBatch rows and
// offers the due rows, best first, to a queue.Picker (which applies the limits). After a scan whose last row
// belongs to a host the Picker no longer wants, the next scan starts past that host's rows in the bucket instead
// of reading them. It stops once the Picker is done, the partition is exhausted, or Config.ScanMaxRows rows
// were read. It then checks the batch against the fingerprint index (one multi-get): rows the index no longer
// points to are stale (superseded by a re-schedule) and are deleted, and the batch is built again. Nothing else
// is removed.
func (q *Queue) Next(ctx context.Context, partition int, now int64, lim queue.Limits) ([]queue.Item, error) {
	if partition < 0 || partition > maxPartition {
		return nil, fmt.Errorf("hbase: next: %w: %d", ErrPartitionRange, partition)
	}
	if lim.Max <= 0 {
		return nil, nil
	}
	for attempt := 0; ; attempt++ {
		items, keys, err := q.pick(ctx, partition, now, lim)
		if err != nil {
			return nil, err
		}
		stale, err := q.stale(ctx, items, keys)
		if err != nil {
			return nil, err
		}
		if len(stale) == 0 || attempt == 2 {
			items = slices.DeleteFunc(items, func(it queue.Item) bool { return stale[string(it.Fingerprint)] })
			slices.SortStableFunc(items, func(a, b queue.Item) int { return cmp.Compare(b.Score, a.Score) })
			return items, nil
		}
	}
}

// pick builds one batch; keys maps each taken fingerprint to its row key.
func (q *Queue) pick(ctx context.Context, partition int, now int64, lim queue.Limits) ([]queue.Item, map[string][]byte, error) {
	var (
		pk    = queue.NewPicker(lim)
		keys  = map[string][]byte{}
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
			return nil, nil, err
		}
		read += len(rows)
		for _, r := range rows {
			if pk.Done() {
				break
			}
			it, ok := q.decodeRow(r)
			if !ok || it.NotBefore > now {
				continue
			}
			it.Partition = partition
			if _, dup := keys[string(it.Fingerprint)]; dup {
				continue // a second row of one URL: one of them is stale, and the index check finds which
			}
			if pk.Offer(it) {
				keys[string(it.Fingerprint)] = r.Row
			}
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
	return pk.Items(), keys, nil
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

// stale reads the index rows of items and returns the fingerprints whose row (keys) the index no longer points
// to, after deleting those rows. A missing index row leaves the row valid (it is served; Ack removes it by key).
func (q *Queue) stale(ctx context.Context, items []queue.Item, keys map[string][]byte) (map[string]bool, error) {
	if len(items) == 0 {
		return nil, nil
	}
	gets := make([]*thrift2.TGet, len(items))
	for i, it := range items {
		gets[i] = &thrift2.TGet{Row: indexKey(it.Fingerprint), Columns: []*thrift2.TColumn{{Family: famQueue, Qualifier: qualIndex}}}
	}
	res, err := q.c.getMultiple(ctx, q.name, q.table, gets)
	if err != nil {
		return nil, err
	}
	var out map[string]bool
	var dels []*thrift2.TDelete
	for i, r := range res {
		fp := string(items[i].Fingerprint)
		if k := cellValue(r, famQueue, qualIndex); k != nil && !bytes.Equal(k, keys[fp]) {
			if out == nil {
				out = map[string]bool{}
			}
			out[fp] = true
			dels = append(dels, &thrift2.TDelete{Row: keys[fp]})
		}
	}
	return out, q.deleteRows(ctx, dels)
}

// Ack deletes the rows of the items: the row the fingerprint index points to (if it is in the item's partition),
// the row the item's own fields name, and then the index rows.
func (q *Queue) Ack(ctx context.Context, items []queue.Item) error {
	var gets []*thrift2.TGet
	var its []*queue.Item
	for i := range items {
		it := &items[i]
		if len(it.Fingerprint) == 0 || it.Partition < 0 || it.Partition > maxPartition {
			return fmt.Errorf("hbase: ack item %d: no fingerprint or partition %d out of range", i, it.Partition)
		}
		gets = append(gets, &thrift2.TGet{Row: indexKey(it.Fingerprint), Columns: []*thrift2.TColumn{{Family: famQueue, Qualifier: qualIndex}}})
		its = append(its, it)
	}
	if len(gets) == 0 {
		return nil
	}
	fps := make([]frontier.Fingerprint, len(its))
	for i, it := range its {
		fps[i] = it.Fingerprint
	}
	defer q.lock(fps)()
	res, err := q.c.getMultiple(ctx, q.name, q.table, gets)
	if err != nil {
		return err
	}
	var rows, idx []*thrift2.TDelete
	for i, it := range its {
		if queue.Check(it) == nil {
			rows = append(rows, &thrift2.TDelete{Row: queueKey(it.Partition, scoreBucket(it.Score, q.c.cfg.ScoreBuckets), it.Host, it.Fingerprint)})
		}
		k := cellValue(res[i], famQueue, qualIndex)
		if k == nil {
			continue
		}
		if p, _, _, _, err := decodeQueueKey(k); err == nil && p == it.Partition {
			if len(rows) == 0 || !bytes.Equal(rows[len(rows)-1].Row, k) {
				rows = append(rows, &thrift2.TDelete{Row: k})
			}
			idx = append(idx, &thrift2.TDelete{Row: gets[i].Row})
		}
	}
	if err := q.deleteRows(ctx, rows); err != nil {
		return err
	}
	return q.deleteRows(ctx, idx)
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
