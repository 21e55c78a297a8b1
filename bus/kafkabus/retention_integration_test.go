//go:build integration

package kafkabus

import "testing"

// TestOffsetLostKafka: testOffsetLost on a real broker, on per-run topics with a retention of their own; the
// broker deletes the records below the lost range with DeleteRecords (kafka-delete-records.sh's API).
func TestOffsetLostKafka(t *testing.T) {
	testOffsetLost(t, kafkaBrokers(t))
}
