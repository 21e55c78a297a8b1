package queue

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
)

// Memory is a Queue in Go maps, for unit tests: Next sorts the due items of the partition on every call, so it
// suits queues of thousands of items, not millions (use pebblestore for those). Safe for concurrent use; it has
// nothing to close.
type Memory struct {
	mu    sync.Mutex
	byFP  map[string]*Item // fingerprint → item; one row per URL across partitions
	count map[int]int64
}

var _ Queue = (*Memory)(nil)

// NewMemory returns an empty memory queue.
func NewMemory() *Memory {
	return &Memory{byFP: make(map[string]*Item), count: make(map[int]int64)}
}

// Schedule implements Queue.
func (q *Memory) Schedule(ctx context.Context, items []Item) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var bad []ItemError
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := range items {
		it := items[i]
		if err := Check(&it); err != nil {
			bad = append(bad, ItemError{Index: i, Err: err})
			continue
		}
		it.Fingerprint = slices.Clone(it.Fingerprint)
		it.Request = slices.Clone(it.Request)
		if old, ok := q.byFP[string(it.Fingerprint)]; ok {
			q.count[old.Partition]--
		}
		q.byFP[string(it.Fingerprint)] = &it
		q.count[it.Partition]++
	}
	if len(bad) > 0 {
		return &ScheduleError{Items: bad}
	}
	return nil
}

// Next implements Queue.
func (q *Memory) Next(ctx context.Context, partition int, now int64, lim Limits) ([]Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q.mu.Lock()
	var due []*Item
	for _, it := range q.byFP {
		if it.Partition == partition && it.NotBefore <= now {
			due = append(due, it)
		}
	}
	slices.SortFunc(due, func(a, b *Item) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := strings.Compare(a.Host, b.Host); c != 0 {
			return c
		}
		return strings.Compare(string(a.Fingerprint), string(b.Fingerprint))
	})
	p := NewPicker(lim)
	for _, it := range due {
		if p.Done() {
			break
		}
		c := *it
		c.Fingerprint = slices.Clone(c.Fingerprint)
		c.Request = slices.Clone(c.Request)
		p.Offer(c)
	}
	q.mu.Unlock()
	return p.Items(), nil
}

// Ack implements Queue.
func (q *Memory) Ack(ctx context.Context, items []Item) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := range items {
		if old, ok := q.byFP[string(items[i].Fingerprint)]; ok && old.Partition == items[i].Partition &&
			(len(items[i].Request) == 0 || bytes.Equal(old.Request, items[i].Request)) {
			delete(q.byFP, string(items[i].Fingerprint))
			q.count[old.Partition]--
		}
	}
	return nil
}

// Count implements Queue.
func (q *Memory) Count(ctx context.Context, partition int) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.count[partition], nil
}
