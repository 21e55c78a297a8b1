//go:build integration

package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"

	"github.com/frontiercrawl/frontier/frontiertest"
)

// adminTestBrokers returns the real broker of FRONTIER_TEST_KAFKA (deploy/up prints it). Unset, the test is
// skipped on a developer's machine and fails under CI=true.
func adminTestBrokers(t *testing.T) []string {
	t.Helper()
	return strings.Split(frontiertest.Server(t, "FRONTIER_TEST_KAFKA"), ",")
}

// adminTestTopic returns a topic name unique to this test run, and deletes the topic when the test ends.
func adminTestTopic(t *testing.T, brokers []string, suffix string) string {
	t.Helper()
	name := fmt.Sprintf("frontier-admin-test-%s-%d", suffix, time.Now().UnixNano())
	t.Cleanup(func() {
		client, closeClient := newAdminClient(brokers)
		defer closeClient()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{name}}); err != nil {
			t.Logf("delete topic %s: %v", name, err)
		}
	})
	return name
}

func TestEnsureTopicsCreatesWithExactPartitions(t *testing.T) {
	brokers := adminTestBrokers(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	specs := []TopicSpec{
		{Name: adminTestTopic(t, brokers, "done"), Partitions: 3},
		{Name: adminTestTopic(t, brokers, "score"), Partitions: 1},
		{Name: adminTestTopic(t, brokers, "todo"), Partitions: 5},
	}
	if err := EnsureTopics(ctx, brokers, specs); err != nil {
		t.Fatalf("EnsureTopics: %v", err)
	}
	// Idempotent: the same call again is a no-op.
	if err := EnsureTopics(ctx, brokers, specs); err != nil {
		t.Fatalf("second EnsureTopics: %v", err)
	}
	client, closeClient := newAdminClient(brokers)
	defer closeClient()
	names := []string{specs[0].Name, specs[1].Name, specs[2].Name}
	have, err := topicPartitions(ctx, client, names)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if have[s.Name] != s.Partitions {
			t.Errorf("topic %s has %d partitions, want %d", s.Name, have[s.Name], s.Partitions)
		}
	}

	// EnsureTopics returned only after every partition's leader serves it, so a write to each partition succeeds
	// at once (a Writer with no retries would fail on UnknownTopicOrPartition otherwise).
	for _, s := range specs {
		for p := range s.Partitions {
			conn, err := kafka.DialLeader(ctx, "tcp", brokers[0], s.Name, p)
			if err != nil {
				t.Fatalf("dial leader of %s/%d: %v", s.Name, p, err)
			}
			_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := conn.WriteMessages(kafka.Message{Value: []byte("x")}); err != nil {
				t.Errorf("write to %s/%d: %v", s.Name, p, err)
			}
			conn.Close()
		}
	}
}

func TestEnsureTopicsRefusesOtherPartitionCount(t *testing.T) {
	brokers := adminTestBrokers(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	name := adminTestTopic(t, brokers, "mismatch")
	other := adminTestTopic(t, brokers, "other")
	if err := EnsureTopics(ctx, brokers, []TopicSpec{{Name: name, Partitions: 2}}); err != nil {
		t.Fatal(err)
	}
	err := EnsureTopics(ctx, brokers, []TopicSpec{{Name: name, Partitions: 3}, {Name: other, Partitions: 1}})
	var mm *PartitionMismatchError
	if !errors.As(err, &mm) {
		t.Fatalf("EnsureTopics = %v, want a *PartitionMismatchError", err)
	}
	if mm.Topic != name || mm.Have != 2 || mm.Want != 3 {
		t.Errorf("mismatch = %+v, want topic %s have 2 want 3", *mm, name)
	}
	for _, s := range []string{name, "2 partitions", "wants 3"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
	// The topic was left alone; the other topic of the same call was still created.
	client, closeClient := newAdminClient(brokers)
	defer closeClient()
	have, err := topicPartitions(ctx, client, []string{name, other})
	if err != nil {
		t.Fatal(err)
	}
	if have[name] != 2 {
		t.Errorf("topic %s now has %d partitions, want it left at 2", name, have[name])
	}
	if have[other] != 1 {
		t.Errorf("topic %s has %d partitions, want 1 (created despite the other topic's mismatch)", other, have[other])
	}
}

func TestEnsureTopicsRejectsBadSpecs(t *testing.T) {
	brokers := adminTestBrokers(t)
	tests := []struct {
		name  string
		specs []TopicSpec
		want  []string // substrings of the error
	}{
		{"empty name", []TopicSpec{{Name: "", Partitions: 1}}, []string{"topic name is empty"}},
		{"zero partitions", []TopicSpec{{Name: "a", Partitions: 0}}, []string{`topic "a": partitions = 0`}},
		{"bad character", []TopicSpec{{Name: "a/b", Partitions: 1}}, []string{`invalid character '/'`}},
		{"dot", []TopicSpec{{Name: "..", Partitions: 1}}, []string{"not allowed"}},
		{"negative replication", []TopicSpec{{Name: "a", Partitions: 1, ReplicationFactor: -1}}, []string{"replication factor = -1"}},
		{"duplicate with other count", []TopicSpec{{Name: "a", Partitions: 1}, {Name: "a", Partitions: 2}}, []string{"listed twice, with 1 and 2"}},
		{"every problem reported", []TopicSpec{{Name: "", Partitions: 1}, {Name: "b", Partitions: -3}}, []string{"empty", "partitions = -3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := EnsureTopics(t.Context(), brokers, tt.specs)
			if err == nil {
				t.Fatal("EnsureTopics accepted bad specs")
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
	if err := EnsureTopics(t.Context(), nil, []TopicSpec{{Name: "a", Partitions: 1}}); err == nil || !strings.Contains(err.Error(), "no brokers") {
		t.Errorf("EnsureTopics with no brokers = %v, want a no-brokers error", err)
	}
	if err := EnsureTopics(t.Context(), brokers, nil); err != nil {
		t.Errorf("EnsureTopics with no topics = %v, want nil", err)
	}
}

func TestPing(t *testing.T) {
	brokers := adminTestBrokers(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := Ping(ctx, brokers); err != nil {
		t.Fatalf("Ping(%v): %v", brokers, err)
	}
	// Port 1 on loopback: nothing listens there.
	ctx2, cancel2 := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel2()
	if err := Ping(ctx2, []string{"127.0.0.1:1"}); err == nil {
		t.Error("Ping of 127.0.0.1:1 succeeded, want an error")
	}
}
