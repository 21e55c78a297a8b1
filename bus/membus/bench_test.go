package membus

import (
	"testing"

	"github.com/frontiercrawl/frontier/bus/bustest"
)

// BenchmarkSendFetchCommit moves feed-sized messages (20-byte key, 200-byte value) through one membus partition
// in batches of 512: Send, Fetch, Commit (bustest.SendFetchCommit).
func BenchmarkSendFetchCommit(b *testing.B) {
	bb, err := New(DefaultConfig(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bb.Close()
	bustest.SendFetchCommit(b, bb)
}
