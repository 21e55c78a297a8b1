package pebblestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/state"
)

// Queue is the queue.Queue on the q, w, i and c keys (layout in the package doc). Safe for concurrent use; it
// lives as long as its DB.
type Queue struct {
	d       *DB
	buckets int
	mu      sync.Mutex    // serialises Schedule, Ack and the w→q move of Next
	count   map[int]int64 // guarded by mu; mirrors the c keys
	// indexed holds every fingerprint the i keys may hold (added on Schedule, never removed, rebuilt at
	// Open), so scheduling a new URL, the common case, skips the index read.
	indexed *state.Bloom
	// start is, per partition, a key at or before the partition's first live q row, so that Next does not
	// wade through the deletion tombstones that acknowledged batches leave at the head of the partition until
	// compaction removes them. Writes lower it; Next raises it to the first live row it saw, lowered by any
	// row written since its iterator's snapshot (written, recorded while a Next runs). Guarded by mu.
	start   map[int][]byte
	written map[int]*[]byte
	// skips is, per partition, where the last Next's seeks past a host's group landed (skipMemo). Guarded by
	// mu.
	skips map[int]*skipMemo
	// dirs is, per partition, the list of its q rows' host groups (groupDir). Guarded by mu.
	dirs   map[int]*groupDir
	nextMu map[int]*sync.Mutex // one Next per partition at a time
	// taken and watches let Ack delete the rows Next returned without reading them (see takenRows). Guarded
	// by mu.
	taken   map[string]uint64
	watches map[int]map[string]struct{}
	seed    maphash.Seed
	// afterSnapshot, if set, runs in Next right after its iterator's snapshot (tests: a write racing a Next).
	afterSnapshot func()
}

// takenRows: Ack without reads (issue 21: the index and row seeks of Ack were 0.7-1.1 s of the fast web's CPU): taken
// maps the fingerprint of every item a Next returned to a hash of its row key and request, as long as nothing
// wrote that fingerprint since the Next's snapshot (Schedule, promote, Ack and AckDelivered call touch, which
// drops it from taken and notes it in the watch of every Next running, so that a Next whose snapshot predates
// the write does not add it back). While a fingerprint is in taken its row is the one Next read: the row key
// is the item's ready key and the index entry points to it (every write keeps one row per fingerprint, and its
// index entry, together). So an acknowledged item whose fingerprint is in taken with the hash of its own ready
// key and request is deleted, row and index entry, without a read; any other item goes the reading way. A
// hash is 64 bits: an item acknowledged with another request than the row holds, or another score bucket or
// host, matches a taken hash only by a collision of its (key, request) with the row's (odds 2^-64).
//
// maxTaken bounds taken: past it (items taken and never acknowledged, as those of a blocked host are) it is
// emptied, and Ack reads again for the items taken before.
const maxTaken = 1 << 16

// touch notes a write of fingerprint fp (a row set or deleted). Locked.
func (q *Queue) touch(fp []byte) {
	if len(q.taken) > 0 {
		delete(q.taken, string(fp))
	}
	for _, w := range q.watches {
		w[string(fp)] = struct{}{}
	}
}

// takenHash is the hash taken holds for a row at key holding the request req.
func (q *Queue) takenHash(key, req []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(q.seed)
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(key)))
	h.Write(n[:])
	h.Write(key)
	h.Write(req)
	return h.Sum64()
}

// skipMemo lets Next seek past a host's group straight to the next live row instead of wading again through the
// deletion tombstones at the head of the next group (the rows taken from that host in earlier batches, until
// compaction drops them): jump maps the key a seek past a group asked for (hostSkip) to the first key the seek
// found in that Next's snapshot (nil: none before the partition's end), and writes lists the q keys written
// since that snapshot. A jump stays exact as long as no row was written between its two keys: deletions only
// remove rows, so the first live row at or after the asked key is still the first at or after the found one.
type skipMemo struct {
	jump   map[string][]byte
	writes [][]byte
	full   bool // more writes than maxSkipWrites: the jumps are not used
}

// maxSkipWrites bounds the writes a skipMemo records; past it the next Next seeks as if it had no memo.
const maxSkipWrites = 1 << 14

var _ queue.Queue = (*Queue)(nil)

// ErrPartitionRange is the error of an item whose partition a key cannot hold.
var ErrPartitionRange = fmt.Errorf("pebblestore: partition outside [0, %d]", uint64(maxPartition))

func openQueue(d *DB) (*Queue, error) {
	q := &Queue{d: d, buckets: d.cfg.ScoreBuckets, count: make(map[int]int64),
		start: make(map[int][]byte), written: make(map[int]*[]byte), skips: make(map[int]*skipMemo),
		dirs:   make(map[int]*groupDir),
		nextMu: make(map[int]*sync.Mutex), taken: make(map[string]uint64), watches: make(map[int]map[string]struct{}),
		seed: maphash.MakeSeed()}
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pfxCount}, UpperBound: []byte{pfxCount + 1}})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: load queue counts: %w", err)
	}
	for it.First(); it.Valid(); it.Next() {
		k, v := it.Key(), it.Value()
		if len(k) != 5 || len(v) != 8 {
			err = fmt.Errorf("pebblestore: queue count key %x value %x malformed", k, v)
			break
		}
		q.count[int(binary.BigEndian.Uint32(k[1:]))] = int64(binary.BigEndian.Uint64(v))
	}
	if err := errors.Join(err, it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("pebblestore: load queue counts: %w", err)
	}
	var rows int64
	for _, n := range q.count {
		rows += n
	}
	q.indexed, err = state.NewBloom(state.BloomConfig{Expected: uint64(max(4_000_000, 4*rows)), FPRate: 0.01},
		d.log.With("filter", "queue index"))
	if err != nil {
		return nil, fmt.Errorf("pebblestore: queue index filter: %w", err)
	}
	it, err = d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pfxIndex}, UpperBound: []byte{pfxIndex + 1}})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: load queue index: %w", err)
	}
	for it.First(); it.Valid(); it.Next() {
		q.indexed.Add(it.Key()[1:])
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("pebblestore: load queue index: %w", err)
	}
	if err := q.loadGroups(); err != nil {
		return nil, err
	}
	return q, nil
}

// rowKey is where an item lives: a q row when it has no due time, a w row otherwise (Next moves it to q once
// due).
func (q *Queue) rowKey(it *queue.Item) []byte {
	if it.NotBefore > 0 {
		return delayedKey(it.Partition, it.NotBefore, it.Fingerprint)
	}
	return readyKey(it.Partition, bucket(it.Score, q.buckets), it.Host, it.Fingerprint)
}

// maxRowKeyLen bounds the length of a row key of host and fp, ready (readyKey) or delayed (delayedKey).
func maxRowKeyLen(host string, fp []byte) int { return 1 + 4 + 8 + len(host) + 1 + len(fp) }

// lookup returns the row key the index holds for fp, or nil.
func (q *Queue) lookup(fp []byte) ([]byte, error) {
	if !q.indexed.Test(fp) {
		return nil, nil
	}
	v, closer, err := q.d.db.Get(prefixed(pfxIndex, fp))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pebblestore: queue index %x: %w", fp, err)
	}
	defer closer.Close()
	return bytes.Clone(v), nil
}

// Schedule implements queue.Queue: per item, one index read, then one batch for all valid items.
func (q *Queue) Schedule(ctx context.Context, items []queue.Item) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var bad []queue.ItemError
	last := make(map[string]int, len(items))
	for i := range items {
		err := queue.Check(&items[i])
		if err == nil && uint64(items[i].Partition) > maxPartition {
			err = fmt.Errorf("%w: %d", ErrPartitionRange, items[i].Partition)
		}
		if err != nil {
			bad = append(bad, queue.ItemError{Index: i, Err: err})
			continue
		}
		last[string(items[i].Fingerprint)] = i
	}
	if len(last) > 0 {
		if err := q.schedule(items, last); err != nil {
			return err
		}
	}
	if len(bad) > 0 {
		return &queue.ScheduleError{Items: bad}
	}
	return nil
}

func (q *Queue) schedule(items []queue.Item, last map[string]int) error {
	// The batch's size up front (each row, its index entry, a count per partition): Pebble grows a batch by
	// doubling and copying it, which for the DB worker's batches of scored links was a tenth of the standalone
	// put's allocations.
	size := batchHeaderLen + 64
	for i := range items {
		if j, ok := last[string(items[i].Fingerprint)]; ok && j == i {
			it := &items[i]
			key := maxRowKeyLen(it.Host, it.Fingerprint)
			size += 2*batchRecordOverhead + 2*key + 1 + len(it.Fingerprint) + queueValueLen(it.Host, it.Request)
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	b := newBatch(q.d.db, size)
	defer b.Close()
	delta := map[int]int64{}
	for i := range items {
		if j, ok := last[string(items[i].Fingerprint)]; !ok || j != i {
			continue
		}
		it := &items[i]
		key := q.rowKey(it)
		old, err := q.lookup(it.Fingerprint)
		if err != nil {
			return err
		}
		if old != nil {
			p, err := keyPartition(old)
			if err != nil {
				return err
			}
			delta[p]--
			if !bytes.Equal(old, key) {
				if err := b.Delete(old, nil); err != nil {
					return fmt.Errorf("pebblestore: schedule: %w", err)
				}
			}
		}
		delta[it.Partition]++
		q.indexed.Add(it.Fingerprint)
		q.touch(it.Fingerprint)
		q.lowerStart(it.Partition, key)
		// Build the row value and the index key in the batch's own memory (no per-item allocations).
		op := b.SetDeferred(len(key), queueValueLen(it.Host, it.Request))
		copy(op.Key, key)
		appendQueueValue(op.Value[:0], it.Score, it.NotBefore, it.Host, it.Request)
		if err := op.Finish(); err != nil {
			return fmt.Errorf("pebblestore: schedule: %w", err)
		}
		op = b.SetDeferred(1+len(it.Fingerprint), len(key))
		op.Key[0] = pfxIndex
		copy(op.Key[1:], it.Fingerprint)
		copy(op.Value, key)
		if err := op.Finish(); err != nil {
			return fmt.Errorf("pebblestore: schedule: %w", err)
		}
	}
	return q.commit(b, delta)
}

// commit writes the changed counts into b and commits it; the in-memory counts change only on success.
func (q *Queue) commit(b *pebble.Batch, delta map[int]int64) error {
	for p, n := range delta {
		if n == 0 {
			continue
		}
		if err := b.Set(countKey(p), binary.BigEndian.AppendUint64(nil, uint64(q.count[p]+n)), nil); err != nil {
			return fmt.Errorf("pebblestore: queue count: %w", err)
		}
	}
	if b.Empty() {
		return nil
	}
	if err := b.Commit(q.d.wo); err != nil {
		return fmt.Errorf("pebblestore: queue commit: %w", err)
	}
	for p, n := range delta {
		q.count[p] += n
		if d := q.dirs[p]; d != nil && d.off && q.count[p] == 0 {
			*d = groupDir{set: make(map[string]struct{})} // no rows left: an empty list is exact
		}
	}
	return nil
}

// promote moves the partition's w rows due at now into q.
func (q *Queue) promote(partition int, now int64) error {
	lo := partitionPrefix(pfxDelayed, partition)
	hi := binary.BigEndian.AppendUint64(partitionPrefix(pfxDelayed, partition), uint64(now)+1)
	if now < 0 {
		return nil
	}
	// A cheap check without the lock: most calls have nothing to move.
	if !q.hasRows(lo, hi) {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	it, err := q.d.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return fmt.Errorf("pebblestore: next: %w", err)
	}
	b := q.d.db.NewBatch()
	defer b.Close()
	for it.First(); it.Valid(); it.Next() {
		_, _, fp, err := decodeDelayedKey(it.Key())
		if err != nil {
			return errors.Join(err, it.Close())
		}
		v, err := decodeQueueValue(it.Value())
		if err != nil {
			return errors.Join(fmt.Errorf("pebblestore: delayed row %x: %w", it.Key(), err), it.Close())
		}
		key := readyKey(partition, bucket(v.score, q.buckets), string(v.host), fp)
		q.touch(fp)
		q.lowerStart(partition, key)
		err = errors.Join(
			b.Delete(it.Key(), nil),
			b.Set(key, it.Value(), nil),
			b.Set(prefixed(pfxIndex, fp), key, nil),
		)
		if err != nil {
			return errors.Join(fmt.Errorf("pebblestore: next: %w", err), it.Close())
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return fmt.Errorf("pebblestore: next: %w", err)
	}
	return q.commit(b, nil)
}

// lowerStart notes a q row written at key. Locked.
func (q *Queue) lowerStart(p int, key []byte) {
	if key[0] != pfxReady {
		return
	}
	q.addGroup(p, key)
	if s, ok := q.start[p]; ok && bytes.Compare(key, s) < 0 {
		q.start[p] = key
	}
	if w := q.written[p]; w != nil && (*w == nil || bytes.Compare(key, *w) < 0) {
		*w = key
	}
	if m := q.skips[p]; m != nil && !m.full {
		if len(m.writes) < maxSkipWrites {
			m.writes = append(m.writes, key)
		} else {
			m.full, m.writes = true, nil
		}
	}
}

// jumpTarget returns where the seek past a group that asks for s may go instead (see skipMemo): the key found
// by the last Next, or nil with end true when that Next found nothing after s. ok is false when the memo holds
// nothing usable for s. writes is sorted.
func jumpTarget(jump map[string][]byte, writes [][]byte, s []byte) (target []byte, end, ok bool) {
	t, found := jump[string(s)]
	if !found {
		return nil, false, false
	}
	i, _ := slices.BinarySearchFunc(writes, s, bytes.Compare)
	if i < len(writes) && (t == nil || bytes.Compare(writes[i], t) < 0) {
		return nil, false, false // a row written since may lie between
	}
	return t, t == nil, true
}

func (q *Queue) hasRows(lo, hi []byte) bool {
	it, err := q.d.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return true // let the locked pass report it
	}
	ok := it.First()
	return errors.Join(it.Error(), it.Close()) != nil || ok
}

// Next implements queue.Queue: it moves due w rows into q, then scans the partition's q rows best bucket first,
// and when the Picker cannot take more of a host it seeks to the next group (groupDir) of a host it can take, past
// any number of groups of hosts it cannot, and stops when no later group is wanted.
func (q *Queue) Next(ctx context.Context, partition int, now int64, lim queue.Limits) ([]queue.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if partition < 0 || uint64(partition) > maxPartition {
		return nil, fmt.Errorf("pebblestore: next: %w: %d", ErrPartitionRange, partition)
	}
	if lim.Max <= 0 {
		return nil, nil
	}
	if err := q.promote(partition, now); err != nil {
		return nil, err
	}
	prefix := partitionPrefix(pfxReady, partition)
	end := prefixEnd(prefix)
	q.mu.Lock()
	nmu := q.nextMu[partition]
	if nmu == nil {
		nmu = new(sync.Mutex)
		q.nextMu[partition] = nmu
	}
	q.mu.Unlock()
	nmu.Lock()
	defer nmu.Unlock()
	q.mu.Lock()
	lo := q.start[partition]
	if lo == nil {
		lo = prefix
	}
	var written []byte
	q.written[partition] = &written
	var jump map[string][]byte
	var writes [][]byte
	if old := q.skips[partition]; old != nil && !old.full {
		jump, writes = old.jump, old.writes
	}
	memo := &skipMemo{}
	q.skips[partition] = memo
	groups := q.dir(partition).take()
	watch := make(map[string]struct{})
	q.watches[partition] = watch
	// The snapshot is taken under mu: every write after it is recorded in written and in memo.writes, and every
	// write before it (since the last Next's snapshot) is in writes.
	it, err := q.d.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lo, UpperBound: end})
	q.mu.Unlock()
	if q.afterSnapshot != nil {
		q.afterSnapshot()
	}
	if err != nil {
		q.mu.Lock()
		delete(q.written, partition)
		delete(q.skips, partition)
		delete(q.watches, partition)
		q.mu.Unlock()
		return nil, fmt.Errorf("pebblestore: next: %w", err)
	}
	slices.SortFunc(writes, bytes.Compare)
	jumped := make(map[string][]byte, len(jump))
	firstLive := end
	var got []queue.Item // the batch, once read without error
	read := false        // the scan ended without error
	// With the partition's groups (groupDir): gi is the first group after the current row's, empty the groups
	// the scan went over without a row, exhausted whether it went to the partition's end.
	gi := 0
	var empty []string
	exhausted := false
	canonical := true // every row offered sits at its item's ready key (see takenRows)
	defer func() {
		var hs []uint64
		if canonical {
			hs = make([]uint64, len(got))
			var key []byte
			for i := range got {
				key = appendReadyKey(key[:0], partition, bucket(got[i].Score, q.buckets), got[i].Host, got[i].Fingerprint)
				hs[i] = q.takenHash(key, got[i].Request)
			}
		}
		q.mu.Lock()
		if written != nil && bytes.Compare(written, firstLive) < 0 {
			firstLive = written
		}
		q.start[partition] = firstLive
		if read && groups != nil && !memo.full {
			if exhausted {
				empty = append(empty, groups[gi:]...)
			}
			slices.SortFunc(memo.writes, bytes.Compare)
			q.dir(partition).drop(empty, memo.writes)
		}
		delete(q.written, partition)
		delete(q.watches, partition)
		memo.jump = jumped
		if len(q.taken)+len(hs) > maxTaken {
			clear(q.taken)
		}
		for i, h := range hs {
			if _, ok := watch[string(got[i].Fingerprint)]; !ok {
				q.taken[string(got[i].Fingerprint)] = h
			}
		}
		q.mu.Unlock()
	}()
	p := queue.NewPicker(lim)
	var hostName string
	ok := it.First()
	if ok {
		firstLive = bytes.Clone(it.Key())
	} else if it.Error() != nil {
		firstLive = lo
	} else {
		exhausted = true
	}
	for ok && !p.Done() {
		k := it.Key()
		_, kb, host, fp, sep, err := decodeReadyKey(k)
		if err != nil {
			return nil, errors.Join(err, it.Close())
		}
		if groups != nil {
			g := k[:sep+1]
			for gi < len(groups) && groups[gi] < string(g) {
				empty = append(empty, groups[gi])
				gi++
			}
			if gi < len(groups) && groups[gi] == string(g) {
				gi++
			}
		}
		if !p.WantsBytes(host) {
			var s []byte
			if groups != nil {
				// The next group of a host the Picker wants; none: the rest of the partition is not wanted.
				j := gi
				for j < len(groups) && !p.Wants(groupHost(groups[j])) {
					j++
				}
				if j == len(groups) {
					ok = false
					break
				}
				s, gi = []byte(groups[j]), j
			} else {
				s = hostSkip(k, sep)
			}
			t, atEnd, found := jumpTarget(jump, writes, s)
			switch {
			case !found:
				ok = it.SeekGE(s)
			case atEnd:
				ok = false
			default:
				ok = it.SeekGE(t)
			}
			if !ok && it.Error() == nil {
				exhausted = true
			}
			if ok {
				jumped[string(s)] = bytes.Clone(it.Key())
			} else if it.Error() == nil {
				jumped[string(s)] = nil
			}
			continue
		}
		raw, err := it.ValueAndErr()
		if err != nil {
			return nil, errors.Join(fmt.Errorf("pebblestore: next: %w", err), it.Close())
		}
		v, err := decodeQueueValue(raw)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("pebblestore: queue row %x: %w", k, err), it.Close())
		}
		if v.notBefore <= now {
			if kb != bucket(v.score, q.buckets) || !bytes.Equal(host, v.host) {
				canonical = false // a row keyed by another bucket count: Ack reads it
			}
			if string(host) != hostName { // a host's rows are adjacent: one string for them all
				hostName = string(host)
			}
			p.Offer(queue.Item{
				Partition:   partition,
				Host:        hostName,
				Fingerprint: frontier.Fingerprint(bytes.Clone(fp)),
				Score:       v.score,
				NotBefore:   v.notBefore,
				Request:     bytes.Clone(v.request),
			})
		}
		if ok = it.Next(); !ok && it.Error() == nil {
			exhausted = true
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("pebblestore: next: %w", err)
	}
	got, read = p.Items(), true
	return got, nil
}

// Ack implements queue.Queue: it deletes the row the index holds for each fingerprint, if that row is in the
// item's partition (and, for an item with its request, still holds that request).
//
// An item a Next returned whose row nothing wrote since (takenRows) is deleted without a read. For the others,
// the batch's index entries are read in fingerprint order with one iterator, and then their rows in key order
// with another (Pebble keeps its position between nearby keys, where a Get builds an iterator per key): two
// point reads per URL were 6% of the standalone gateway benchmark's CPU.
func (q *Queue) Ack(ctx context.Context, items []queue.Item) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	// The first item of each fingerprint, in fingerprint order.
	idx := make([]int, 0, len(items))
	for i := range items {
		if len(items[i].Fingerprint) > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return bytes.Compare(items[a].Fingerprint, items[b].Fingerprint) })
	idx = slices.CompactFunc(idx, func(a, b int) bool { return bytes.Equal(items[a].Fingerprint, items[b].Fingerprint) })
	// Hash the ready keys and requests outside the lock, for the taken rows (see takenRows).
	hs := make([]uint64, len(idx))
	var key []byte
	for j, i := range idx {
		if it := &items[i]; len(it.Request) > 0 && it.Partition >= 0 && uint64(it.Partition) <= maxPartition && it.Score >= 0 && it.Score <= 1 {
			key = appendReadyKey(key[:0], it.Partition, bucket(it.Score, q.buckets), it.Host, it.Fingerprint)
			hs[j] = q.takenHash(key, it.Request)
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.d.db.NewBatch()
	defer b.Close()
	delta := map[int]int64{}
	// The taken rows go without a read; the others are read below.
	rest := idx[:0]
	for j, i := range idx {
		it := &items[i]
		if h, ok := q.taken[string(it.Fingerprint)]; !ok || hs[j] == 0 || h != hs[j] {
			rest = append(rest, i)
			continue
		}
		key = appendReadyKey(key[:0], it.Partition, bucket(it.Score, q.buckets), it.Host, it.Fingerprint)
		if err := b.Delete(key, nil); err != nil {
			return fmt.Errorf("pebblestore: ack: %w", err)
		}
		key = append(append(key[:0], pfxIndex), it.Fingerprint...)
		if err := b.Delete(key, nil); err != nil {
			return fmt.Errorf("pebblestore: ack: %w", err)
		}
		q.touch(it.Fingerprint)
		delta[it.Partition]--
	}
	idx = rest
	type row struct {
		item int
		key  []byte
	}
	rows := make([]row, 0, len(idx))
	look, done, err := q.d.seeker(pfxIndex, len(idx), false)
	if err != nil {
		return err
	}
	ikey := make([]byte, 0, 33)
	for _, i := range idx {
		if !q.indexed.Test(items[i].Fingerprint) {
			continue
		}
		ikey = append(append(ikey[:0], pfxIndex), items[i].Fingerprint...)
		v, found, err := look(ikey)
		if err != nil {
			done()
			return fmt.Errorf("pebblestore: ack: queue index: %w", err)
		}
		if !found {
			continue
		}
		key := bytes.Clone(v)
		p, err := keyPartition(key)
		if err != nil {
			done()
			return err
		}
		if p != items[i].Partition {
			continue
		}
		rows = append(rows, row{i, key})
	}
	done()
	// The rows whose item carries its request are read to check they still hold it; the others go.
	slices.SortFunc(rows, func(a, b row) int { return bytes.Compare(a.key, b.key) })
	var look2 func([]byte) ([]byte, bool, error)
	done = func() {}
	for _, r := range rows {
		it := &items[r.item]
		if len(it.Request) > 0 {
			if look2 == nil {
				if look2, done, err = q.d.seekerRange([]byte{pfxReady}, []byte{pfxDelayed + 1}, len(rows), false); err != nil {
					return err
				}
				defer func() { done() }()
			}
			v, found, err := look2(r.key)
			if err != nil {
				return fmt.Errorf("pebblestore: ack: %w", err)
			}
			if !found {
				continue
			}
			qv, err := decodeQueueValue(v)
			if err != nil || !bytes.Equal(qv.request, it.Request) {
				continue // scheduled again since it was taken (a retry): that row is not the item delivered
			}
		}
		if err := errors.Join(b.Delete(r.key, nil), b.Delete(prefixed(pfxIndex, it.Fingerprint), nil)); err != nil {
			return fmt.Errorf("pebblestore: ack: %w", err)
		}
		q.touch(it.Fingerprint)
		delta[it.Partition]--
	}
	return q.commit(b, delta)
}

// Count implements queue.Queue.
func (q *Queue) Count(ctx context.Context, partition int) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.count[partition], nil
}

// Partitions returns the partitions that hold rows, in order.
func (q *Queue) Partitions() []int {
	q.mu.Lock()
	defer q.mu.Unlock()
	var ps []int
	for p, n := range q.count {
		if n > 0 {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return ps
}

// holds reports whether the row at key holds the request req.
func (q *Queue) holds(key, req []byte) (bool, error) {
	v, closer, err := q.d.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("pebblestore: ack: %w", err)
	}
	defer closer.Close()
	qv, err := decodeQueueValue(v)
	return err == nil && bytes.Equal(qv.request, req), nil
}

// AckDelivered removes the rows whose stored request is byte for byte the Request of an item (matched by
// partition and fingerprint), and reports how many it removed. Standalone mode calls it at start with the
// requests still on the spider feed: a DB worker killed between putting a batch on the feed and acknowledging
// it left those rows, which would otherwise be sent, and fetched, a second time. A row scheduled again since
// (another score or request) differs and stays.
func (q *Queue) AckDelivered(ctx context.Context, items []queue.Item) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.d.db.NewBatch()
	defer b.Close()
	delta := map[int]int64{}
	done := make(map[string]bool, len(items))
	n := 0
	for i := range items {
		fp := items[i].Fingerprint
		if len(fp) == 0 || done[string(fp)] {
			continue
		}
		key, err := q.lookup(fp)
		if err != nil {
			return 0, err
		}
		if key == nil {
			continue
		}
		if p, err := keyPartition(key); err != nil || p != items[i].Partition {
			continue
		}
		v, closer, err := q.d.db.Get(key)
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("pebblestore: ack delivered: %w", err)
		}
		qv, err := decodeQueueValue(v)
		same := err == nil && bytes.Equal(qv.request, items[i].Request)
		closer.Close()
		if !same {
			continue
		}
		done[string(fp)] = true
		if err := errors.Join(b.Delete(key, nil), b.Delete(prefixed(pfxIndex, fp), nil)); err != nil {
			return 0, fmt.Errorf("pebblestore: ack delivered: %w", err)
		}
		q.touch(fp)
		delta[items[i].Partition]--
		n++
	}
	if n == 0 {
		return 0, nil
	}
	return n, q.commit(b, delta)
}

// appendReadyKey appends readyKey(p, b, host, fp) to k, for the keys Ack derives without allocating.
func appendReadyKey(k []byte, p int, b uint16, host string, fp []byte) []byte {
	k = append(k, pfxReady)
	k = binary.BigEndian.AppendUint32(k, uint32(p))
	k = binary.BigEndian.AppendUint16(k, b)
	k = append(k, host...)
	k = append(k, 0)
	return append(k, fp...)
}
