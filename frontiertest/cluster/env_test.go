package cluster

import (
	"testing"

	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/hbase"
)

func TestYAMLAndSets(t *testing.T) {
	e := &Env{Name: "r1", Kafka: kafkabus.DefaultConfig(), HBase: hbase.DefaultConfig(), tables: true}
	e.Kafka.Brokers = []string{"127.0.0.1:9092"}
	e.Kafka.SpiderLog = kafkabus.StreamConfig{Topic: "r1-done", Partitions: 2}
	e.Kafka.ScoringLog = kafkabus.StreamConfig{Topic: "r1-score", Partitions: 1}
	e.Kafka.SpiderFeed = kafkabus.StreamConfig{Topic: "r1-todo", Partitions: 3}
	e.Kafka.Control = kafkabus.StreamConfig{Topic: "r1-control", Partitions: 1}
	e.HBase.Addr, e.HBase.TablePrefix = "127.0.0.1:9090", "r1_"
	want := `kafka:
  brokers: ["127.0.0.1:9092"]
hbase:
  addr: "127.0.0.1:9090"
  table_prefix: "r1_"
streams:
  spider_log:
    topic: "r1-done"
    partitions: 2
  scoring_log:
    topic: "r1-score"
    partitions: 1
  spider_feed:
    topic: "r1-todo"
    partitions: 3
  control:
    topic: "r1-control"
    partitions: 1
`
	if got := e.YAML(); got != want {
		t.Errorf("YAML() =\n%s\nwant\n%s", got, want)
	}
	sets := e.Sets()
	if len(sets) != 11 || sets[0] != "kafka.brokers=127.0.0.1:9092" || sets[10] != "streams.control.partitions=1" {
		t.Errorf("Sets() = %q", sets)
	}
	e.tables = false
	if got := len(e.Sets()); got != 9 {
		t.Errorf("Sets() without tables: %d settings, want 9", got)
	}
}
