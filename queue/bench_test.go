package queue_test

import (
	"testing"

	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/queue/queuetest"
)

// go test -run XXX -bench BenchmarkMemory ./queue/
func BenchmarkMemorySchedule(b *testing.B) {
	queuetest.BenchSchedule(b, queue.NewMemory(), 1024)
}

// The memory queue sorts the partition on every Next: fine for tests, not for a million rows. Peek mode
// (no ack), so the queue keeps its size.
func BenchmarkMemoryNext(b *testing.B) {
	b.Run("rows=100000", func(b *testing.B) { queuetest.BenchNext(b, queue.NewMemory(), 100_000, 10_000, false) })
	b.Run("rows=1000000", func(b *testing.B) { queuetest.BenchNext(b, queue.NewMemory(), 1_000_000, 10_000, false) })
}
