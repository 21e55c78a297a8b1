package pebblestore

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// Host groups (issues 21 and 23): Next used to seek past the rows of every host the Picker did not want (the
// flow's caps leave out every host whose queue at the spider is full), one SeekGE per such host and score
// bucket, though most of a scan's hosts are such hosts: pebble's SeekGE was ~2 s of the fast web's ~32 CPU-s.
// A groupDir lists, per partition, the groups of q rows (a score bucket's rows of one host, keys sharing the
// prefix pfxReady|partition|bucket|host|0) that may hold rows, in key order, so that Next goes from a group it
// does not want straight to the next group of a host it wants, with one seek for a run of unwanted groups
// instead of one per group, and stops when no later group is wanted.
//
// The list is a superset of the groups with live rows: a q row written adds its group (lowerStart, under mu),
// and only Next removes a group, one its snapshot showed empty (it went over the group's key range) and that
// no row was written to since the snapshot (the skipMemo's writes; a Next whose memo overflowed removes
// nothing). Open builds the list with one seek per group. A partition with more than maxGroups groups keeps no
// list (off) and Next seeks past each group as before, until the partition holds no rows (commit starts an
// empty list then). A new group costs one string and a map entry (~0.1-0.2 us): scores spread over many
// buckets make nearly every row its own group, a cost paid until maxGroups, for little gain in Next.
type groupDir struct {
	groups  []string            // sorted; never changed in place (Next reads the slice it took under mu)
	pending []string            // groups added since the last Next took groups, not sorted
	set     map[string]struct{} // groups ∪ pending
	off     bool
}

// maxGroups bounds the groups a partition's groupDir holds, and so what scores spread over many buckets cost
// Schedule before the list is dropped (BenchmarkQueueSchedule, random scores over 10,000 hosts: with 1 << 16
// it was 10-20% fewer URLs a CPU-second over the first 40 batches; at 1 << 13 within the noise). The fast web
// (200 hosts, one score) and the put benchmark (1,000 hosts) stay far below it.
const maxGroups = 1 << 13

// groupOf returns the group prefix of q key k, or nil when k is not a well-formed q key.
func groupOf(k []byte) []byte {
	if len(k) < 8 || k[0] != pfxReady {
		return nil
	}
	i := bytes.IndexByte(k[7:], 0)
	if i < 0 {
		return nil
	}
	return k[:7+i+1]
}

// groupHost returns the host of group prefix g.
func groupHost(g string) string { return g[7 : len(g)-1] }

// dir returns partition p's groupDir, made on first use. Locked.
func (q *Queue) dir(p int) *groupDir {
	d := q.dirs[p]
	if d == nil {
		d = &groupDir{set: make(map[string]struct{})}
		q.dirs[p] = d
	}
	return d
}

// addGroup notes a q row written at key (in partition p). Locked.
func (q *Queue) addGroup(p int, key []byte) {
	d := q.dir(p)
	if d.off {
		return
	}
	g := groupOf(key)
	if g == nil {
		d.turnOff()
		return
	}
	if _, ok := d.set[string(g)]; ok {
		return
	}
	if len(d.set) >= maxGroups {
		d.turnOff()
		return
	}
	gs := string(g) // the one allocation of a new group
	d.set[gs] = struct{}{}
	d.pending = append(d.pending, gs)
}

func (d *groupDir) turnOff() { *d = groupDir{off: true} }

// take returns the sorted groups for a Next's snapshot (nil: no list), merging the pending ones. Locked.
func (d *groupDir) take() []string {
	if d.off {
		return nil
	}
	if len(d.pending) > 0 {
		slices.Sort(d.pending)
		merged := make([]string, 0, len(d.groups)+len(d.pending))
		i, j := 0, 0
		for i < len(d.groups) || j < len(d.pending) {
			if j == len(d.pending) || (i < len(d.groups) && d.groups[i] < d.pending[j]) {
				merged = append(merged, d.groups[i])
				i++
			} else {
				merged = append(merged, d.pending[j])
				j++
			}
		}
		d.groups, d.pending = merged, nil
	}
	if d.groups == nil {
		d.groups = []string{}
	}
	return d.groups
}

// drop removes the groups a Next found empty in its snapshot, but for those a row was written to since
// (writes: the q keys written since the snapshot, sorted). Locked.
func (d *groupDir) drop(empty []string, writes [][]byte) {
	if d.off || len(empty) == 0 {
		return
	}
	gone := make(map[string]struct{}, len(empty))
	for _, g := range empty {
		i, _ := slices.BinarySearchFunc(writes, g, func(w []byte, g string) int { return bytes.Compare(w, []byte(g)) })
		if i < len(writes) && bytes.HasPrefix(writes[i], []byte(g)) {
			continue
		}
		gone[g] = struct{}{}
	}
	if len(gone) == 0 {
		return
	}
	kept := make([]string, 0, len(d.groups))
	for _, g := range d.groups {
		if _, ok := gone[g]; ok {
			delete(d.set, g)
			continue
		}
		kept = append(kept, g)
	}
	d.groups = kept
}

// loadGroups builds every partition's groupDir from the q rows, one seek per group (openQueue).
func (q *Queue) loadGroups() error {
	it, err := q.d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pfxReady}, UpperBound: []byte{pfxReady + 1}})
	if err != nil {
		return fmt.Errorf("pebblestore: load queue groups: %w", err)
	}
	ok := it.First()
	for ok {
		k := it.Key()
		p, err := keyPartition(k)
		if err != nil {
			return errors.Join(err, it.Close())
		}
		g := groupOf(k)
		if g == nil {
			q.dir(p).turnOff()
			ok = it.SeekGE(prefixEnd(partitionPrefix(pfxReady, p)))
			continue
		}
		q.addGroup(p, g)
		if q.dir(p).off {
			ok = it.SeekGE(prefixEnd(partitionPrefix(pfxReady, p)))
			continue
		}
		ok = it.SeekGE(append(bytes.Clone(g[:len(g)-1]), 1))
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return fmt.Errorf("pebblestore: load queue groups: %w", err)
	}
	return nil
}
