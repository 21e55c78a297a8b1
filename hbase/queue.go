package hbase

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/frontiercrawl/frontier/hbase/internal/thrift2"
	"github.com/frontiercrawl/frontier/queue"
)

// Queue is the queue.Queue on the queue table (layout in the package doc). Safe for concurrent use; it borrows
// the Client, which its creator closes.
type Queue struct {
	c     *Client
	table []byte
	name  string
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
	switch {
	case !(it.Score >= 0 && it.Score <= 1):
		return fmt.Errorf("%w: %v", queue.ErrScoreRange, it.Score)
	case it.Partition < 0 || it.Partition > maxPartition:
		return fmt.Errorf("%w: %d", ErrPartitionRange, it.Partition)
	case len(it.Fingerprint) == 0:
		return errors.New("hbase: item has no fingerprint")
	case strings.IndexByte(it.Host, 0) >= 0:
		return fmt.Errorf("hbase: host %q holds a NUL byte", it.Host)
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
	idx := make([]*thrift2.TPut, len(keep))
	rows := make([]*thrift2.TPut, len(keep))
	var dels []*thrift2.TDelete
	for n, i := range keep {
		it := &items[i]
		idx[n] = &thrift2.TPut{Row: gets[n].Row, ColumnValues: []*thrift2.TColumnValue{{Family: famQueue, Qualifier: qualIndex, Value: keys[n]}}}
		rows[n] = &thrift2.TPut{Row: keys[n], ColumnValues: []*thrift2.TColumnValue{{Family: famQueue, Qualifier: qualQueue, Value: queueValue(it.Score, it.NotBefore, it.Request)}}}
		if ok := cellValue(old[n], famQueue, qualIndex); ok != nil && !bytes.Equal(ok, keys[n]) {
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

// candidate is an item Next read, with its row key.
type candidate struct {
	queue.Item
	key []byte
}

// Next scans the partition's key range from its best bucket with range scans of Config.ScanBatch rows. It skips
// rows not yet due and rows of hosts at their cap (seeking past a capped host's rows in the bucket instead of
// reading them), and stops once lim.Max items of at least lim.MinHosts hosts are taken, the partition is
// exhausted, or Config.ScanMaxRows rows were read. Nothing is removed, except queue rows the fingerprint index
// shows to be stale (superseded by a re-schedule).
func (q *Queue) Next(ctx context.Context, partition int, now int64, lim queue.Limits) ([]queue.Item, error) {
	if partition < 0 || partition > maxPartition {
		return nil, fmt.Errorf("hbase: next: %w: %d", ErrPartitionRange, partition)
	}
	if lim.Max <= 0 {
		return nil, nil
	}
	var (
		taken   []candidate
		perHost = map[string]int{}
		start   = partitionPrefix(partition)
		stop    = partitionEnd(partition)
		read    = 0
		batch   = q.c.cfg.ScanBatch
		stuck   bool // full, short of MinHosts, and no host has an item to give up
	)
	full := func() bool { return len(taken) >= lim.Max }
	done := func() bool { return full() && (lim.MinHosts <= 0 || len(perHost) >= lim.MinHosts) }
	for !done() && !stuck && read < q.c.cfg.ScanMaxRows {
		n := min(batch, q.c.cfg.ScanMaxRows-read)
		rows, err := q.scan(ctx, start, stop, n)
		if err != nil {
			return nil, err
		}
		read += len(rows)
		var fresh []candidate
		for _, r := range rows {
			if done() {
				break
			}
			c, ok := q.decodeRow(r)
			if !ok || c.NotBefore > now {
				continue
			}
			c.Partition = partition
			if !full() {
				if lim.PerHost > 0 && perHost[c.Host] >= lim.PerHost {
					continue
				}
			} else {
				// Full but short of MinHosts: a row of a new host replaces the last item of the host with most.
				if perHost[c.Host] > 0 {
					continue
				}
				v := victim(taken, perHost)
				if v < 0 {
					stuck = true
					break
				}
				perHost[taken[v].Host]--
				taken = slices.Delete(taken, v, v+1)
			}
			perHost[c.Host]++
			taken = append(taken, c)
			fresh = append(fresh, c)
		}
		stale, err := q.stale(ctx, fresh)
		if err != nil {
			return nil, err
		}
		if len(stale) > 0 {
			taken = slices.DeleteFunc(taken, func(c candidate) bool {
				if _, s := stale[string(c.key)]; s {
					if perHost[c.Host]--; perHost[c.Host] == 0 {
						delete(perHost, c.Host)
					}
					return true
				}
				return false
			})
		}
		if len(rows) < n {
			break // the partition is exhausted
		}
		lastKey := rows[len(rows)-1].Row
		_, _, host, _, err := decodeQueueKey(lastKey)
		if err == nil && ((lim.PerHost > 0 && perHost[host] >= lim.PerHost) || (full() && perHost[host] > 0)) {
			start = hostEnd(lastKey) // the rest of this host's rows in this bucket would all be skipped
		} else {
			start = append(bytes.Clone(lastKey), 0)
		}
	}
	slices.SortStableFunc(taken, func(a, b candidate) int { return cmp.Compare(b.Score, a.Score) })
	out := make([]queue.Item, len(taken))
	for i := range taken {
		out[i] = taken[i].Item
	}
	return out, nil
}

// victim returns the index of the last taken item of the host with the most items, if that host has more than
// one; else -1.
func victim(taken []candidate, perHost map[string]int) int {
	best, at := 1, -1
	for i := len(taken) - 1; i >= 0; i-- {
		if n := perHost[taken[i].Host]; n > best {
			best, at = n, i
		}
	}
	return at
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

// decodeRow turns a scanned row into a candidate; a row that does not decode is logged and skipped, so one
// corrupt row cannot block a partition.
func (q *Queue) decodeRow(r *thrift2.TResult_) (candidate, bool) {
	_, _, host, fp, err := decodeQueueKey(r.Row)
	if err == nil {
		var score float64
		var nb int64
		var req []byte
		score, nb, req, err = decodeQueueValue(cellValue(r, famQueue, qualQueue))
		if err == nil {
			return candidate{Item: queue.Item{Host: host, Fingerprint: fp, Score: score, NotBefore: nb, Request: req}, key: r.Row}, true
		}
	}
	q.c.log.Warn("skipping undecodable queue row", "table", q.name, "row", fmt.Sprintf("%x", r.Row), "err", err)
	return candidate{}, false
}

// stale reads the index rows of cs and returns the keys of rows the index no longer points to, after deleting
// them. A missing index row leaves the row valid (it is served; Ack removes it by its key).
func (q *Queue) stale(ctx context.Context, cs []candidate) (map[string]struct{}, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	gets := make([]*thrift2.TGet, len(cs))
	for i, c := range cs {
		gets[i] = &thrift2.TGet{Row: indexKey(c.Fingerprint), Columns: []*thrift2.TColumn{{Family: famQueue, Qualifier: qualIndex}}}
	}
	res, err := q.c.getMultiple(ctx, q.name, q.table, gets)
	if err != nil {
		return nil, err
	}
	var out map[string]struct{}
	var dels []*thrift2.TDelete
	for i, r := range res {
		if k := cellValue(r, famQueue, qualIndex); k != nil && !bytes.Equal(k, cs[i].key) {
			if out == nil {
				out = map[string]struct{}{}
			}
			out[string(cs[i].key)] = struct{}{}
			dels = append(dels, &thrift2.TDelete{Row: cs[i].key})
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
	res, err := q.c.getMultiple(ctx, q.name, q.table, gets)
	if err != nil {
		return err
	}
	var rows, idx []*thrift2.TDelete
	for i, it := range its {
		if !math.IsNaN(it.Score) && it.Score >= 0 && it.Score <= 1 && strings.IndexByte(it.Host, 0) < 0 {
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
