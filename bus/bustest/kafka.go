package bustest

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteRecords moves the log start offset of topic's partition on the Kafka brokers (a real broker or kfake)
// to offset with the DeleteRecords API (what kafka-delete-records.sh does): the broker deletes the messages
// below it, as retention would, at once. It fails the test on an error, or when the partition's log start is
// not offset afterwards. Retention tests of kafkabus and e2e share it; it is the package's only Kafka-specific
// helper, and uses franz-go's raw requests because kafka-go, the bus's client, has no DeleteRecords.
func DeleteRecords(t testing.TB, ctx context.Context, brokers []string, topic string, partition int32, offset int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.TimeoutMillis = 10000
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = partition, offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("delete records of %s/%d below %d: %v", topic, partition, offset, err)
	}
	for _, tr := range resp.Topics {
		for _, pr := range tr.Partitions {
			if err := kerr.ErrorForCode(pr.ErrorCode); err != nil {
				t.Fatalf("delete records of %s/%d below %d: %v", topic, pr.Partition, offset, err)
			}
			if pr.LowWatermark != offset {
				t.Fatalf("delete records of %s/%d: log start %d, want %d", topic, pr.Partition, pr.LowWatermark, offset)
			}
		}
	}
}
