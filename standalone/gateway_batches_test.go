package standalone

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/frontiercrawl/frontier/dbworker"
)

// TestGatewayBatches: the standalone's own gateway partitions get gateway batch sizes unless the configuration
// names the gateways' partitions itself.
func TestGatewayBatches(t *testing.T) {
	for _, tc := range []struct {
		name  string
		g     dbworker.GatewayBatches
		parts []int
		feeds int
		want  dbworker.GatewayBatches
	}{
		{name: "every feed partition the gateway's (no seeds)", feeds: 2,
			want: dbworker.GatewayBatches{Partitions: []int{0, 1}, PerHost: 64, FeedBatch: 32768}},
		{name: "the gateway's own partition beside the spiders' (seeds)", parts: []int{3}, feeds: 4,
			want: dbworker.GatewayBatches{Partitions: []int{3}, PerHost: 64, FeedBatch: 32768}},
		{name: "sizes set, partitions not", g: dbworker.GatewayBatches{PerHost: 16}, parts: []int{2}, feeds: 3,
			want: dbworker.GatewayBatches{Partitions: []int{2}, PerHost: 16, FeedBatch: 32768}},
		{name: "partitions set: the configuration stands", g: dbworker.GatewayBatches{Partitions: []int{0}, PerHost: 8},
			parts: []int{1}, feeds: 2, want: dbworker.GatewayBatches{Partitions: []int{0}, PerHost: 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, gatewayBatches(tc.g, tc.parts, tc.feeds)); diff != "" {
				t.Errorf("gatewayBatches (-want +got):\n%s", diff)
			}
		})
	}
}
