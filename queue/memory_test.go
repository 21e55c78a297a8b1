package queue_test

import (
	"testing"

	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/queue/queuetest"
)

func TestMemoryConformance(t *testing.T) {
	// The memory queue cannot restart; "reopening" keeps the same object, which checks the suite's own logic.
	queuetest.Run(t, func(t *testing.T) queue.Queue { return queue.NewMemory() },
		queuetest.WithReopen(func(t *testing.T, q queue.Queue) queue.Queue { return q }))
}
