package pebblestore_test

import (
	"fmt"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/pebblestore"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/queue/queuetest"
)

// TestAckBatchShapes acknowledges batches on both sides of the size from which Ack reads with iterators
// (16), each mixing items still held as taken, items scheduled again since (another request: they stay),
// items of another partition (they stay), items without their request (they go), repeated items, delayed
// rows and fingerprints the queue never held, and checks which rows are left and the counts.
func TestAckBatchShapes(t *testing.T) {
	for _, size := range []int{5, 15, 16, 40, 300} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			db, err := pebblestore.Open(testConfig(t, false), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			q, ctx := db.Queue(), t.Context()
			var items []queue.Item
			for i := range size {
				it := queuetest.Item(i%2, fmt.Sprintf("h%d.example", i%3), i, float64(i%10)/10)
				if i%7 == 3 {
					it.NotBefore = 4_000_000_000 + int64(i) // a w row
				}
				items = append(items, it)
			}
			if err := q.Schedule(ctx, items); err != nil {
				t.Fatal(err)
			}
			stay := map[int]bool{}
			var acks []queue.Item
			for i, it := range items {
				switch i % 5 {
				case 0: // scheduled again since it was taken: the taken request no longer matches
					again := it
					again.Request = append([]byte("retry "), it.Request...)
					if err := q.Schedule(ctx, []queue.Item{again}); err != nil {
						t.Fatal(err)
					}
					stay[i] = true
				case 1: // acknowledged with another partition
					it.Partition = 1 - it.Partition
					stay[i] = true
				case 2: // without its request: goes whatever the row holds
					it.Request = nil
				case 3: // twice in the batch
					acks = append(acks, it)
				}
				acks = append(acks, it)
			}
			for i := range 3 { // never queued
				acks = append(acks, queuetest.Item(0, "none.example", 10_000+i, 0.5))
			}
			if err := q.Ack(ctx, acks); err != nil {
				t.Fatal(err)
			}
			fps := make([]frontier.Fingerprint, len(items))
			want := map[int]int64{}
			for i, it := range items {
				fps[i] = it.Fingerprint
				if stay[i] {
					want[it.Partition]++
				}
			}
			has, err := q.Has(ctx, fps)
			if err != nil {
				t.Fatal(err)
			}
			for i := range items {
				if has[i] != stay[i] {
					t.Errorf("item %d (%s, case %d): queued %v, want %v", i, items[i].Request, i%5, has[i], stay[i])
				}
			}
			for p := range 2 {
				if n, err := q.Count(ctx, p); err != nil || n != want[p] {
					t.Errorf("Count(%d) = %d, %v; want %d", p, n, err, want[p])
				}
			}
		})
	}
}
