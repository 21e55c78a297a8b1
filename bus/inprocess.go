package bus

import (
	"fmt"
	"slices"
)

// What the in-process buses (bus/membus, bus/pebblebus) share: the check of their partition counts and
// retained groups, the routing of a Send to partitions, and their record of the offsets groups committed.

// CheckLayout reports every problem with an in-process bus's partition counts and retained groups: a stream of
// Streams without a positive count, a count or a group list for a stream that is neither one of Streams nor
// one of extra, and an empty group name.
func CheckLayout(partitions map[Stream]int, groups map[Stream][]string, extra ...Stream) []error {
	known := func(s Stream) bool { return slices.Contains(Streams, s) || slices.Contains(extra, s) }
	var errs []error
	for _, s := range Streams {
		if n, ok := partitions[s]; !ok || n <= 0 {
			errs = append(errs, fmt.Errorf("partitions of %s = %d, want > 0", s, n))
		}
	}
	for s := range partitions {
		if !known(s) {
			errs = append(errs, fmt.Errorf("partitions: unknown stream %q", s))
		}
	}
	for s, gs := range groups {
		if !known(s) {
			errs = append(errs, fmt.Errorf("groups: unknown stream %q", s))
		}
		for _, g := range gs {
			if g == "" {
				errs = append(errs, fmt.Errorf("groups of %s: empty group name", s))
			}
		}
	}
	return errs
}

// Route returns the partition among n of each of msgs, which go to stream s: p's for the message's key, or the
// message's own Partition when p is nil. A partition outside [0, n) is an error naming the message.
func Route(s Stream, msgs []Message, p Partitioner, n int) ([]int, error) {
	parts := make([]int, len(msgs))
	for i, m := range msgs {
		q := m.Partition
		if p != nil {
			q = p(m.Key, n)
		}
		if q < 0 || q >= n {
			return nil, fmt.Errorf("%s: message %d goes to partition %d, out of range [0, %d)", s, i, q, n)
		}
		parts[i] = q
	}
	return parts, nil
}

// Offsets is what the consumer groups of one stream committed: Offsets[group][partition] is the next offset
// the group reads there; absent, the group never committed there.
type Offsets map[string]map[int]int64

// Next is the next offset group reads in partition p, whose first offset held is start: its commit, or start
// where it never committed.
func (o Offsets) Next(group string, p int, start int64) int64 {
	if off, ok := o[group][p]; ok {
		return off
	}
	return start
}

// Low is the lowest offset of partition p, which holds the offsets [start, end), that a group of o still needs:
// what is below it, every group has committed.
func (o Offsets) Low(p int, start, end int64) int64 {
	low := end
	for _, offs := range o {
		off, ok := offs[p]
		if !ok {
			off = start
		}
		low = min(low, off)
	}
	return low
}

// Lag is, per partition of parts (each holding the offsets [start, end)), end minus group's next offset there.
func (o Offsets) Lag(group string, parts int, bounds func(p int) (start, end int64)) map[int]int64 {
	out := make(map[int]int64, parts)
	for p := range parts {
		start, end := bounds(p)
		out[p] = end - o.Next(group, p, start)
	}
	return out
}

// OwnedCommitOffsets is CommitOffsets(msgs) for a consumer of stream s that owns the partitions owned: a message
// of another partition is an error naming it.
func OwnedCommitOffsets(s Stream, msgs []Message, owned []int) (map[int]int64, error) {
	next := CommitOffsets(msgs)
	for p := range next {
		if !slices.Contains(owned, p) {
			return nil, fmt.Errorf("%s: commit of partition %d, which this consumer does not own", s, p)
		}
	}
	return next, nil
}
