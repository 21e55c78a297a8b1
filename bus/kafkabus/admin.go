package kafkabus

// Topic administration: creating Frontier's topics with the partition counts of the configs, and probing a
// broker for readiness. deploy/kafka-topics.sh reaches EnsureTopics through `frontierctl topics`; deploy/up
// reaches Ping through `frontierctl probe kafka`.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

// TopicSpec names a topic and the number of partitions it must have.
type TopicSpec struct {
	Name       string
	Partitions int
	// ReplicationFactor of a topic EnsureTopics creates; 0 means the broker's default.replication.factor.
	// It is not checked on topics that already exist.
	ReplicationFactor int
	// Configs are topic-level settings (retention.ms, cleanup.policy, …; RetentionConfigs builds the retention
	// ones): a topic EnsureTopics creates gets them, and an existing topic whose value differs is altered, so the
	// topic's own setting decides, never the broker-wide default (deploy/up's log.retention.hours).
	Configs map[string]string
}

// Validate reports every problem with the spec.
func (s TopicSpec) Validate() error {
	var errs []error
	if err := validTopicName(s.Name); err != nil {
		errs = append(errs, err)
	}
	if s.Partitions <= 0 {
		errs = append(errs, fmt.Errorf("kafkabus: topic %q: partitions = %d, want > 0", s.Name, s.Partitions))
	}
	if s.ReplicationFactor < 0 {
		errs = append(errs, fmt.Errorf("kafkabus: topic %q: replication factor = %d, want >= 0", s.Name, s.ReplicationFactor))
	}
	for _, k := range slices.Sorted(maps.Keys(s.Configs)) {
		if k == "" || s.Configs[k] == "" {
			errs = append(errs, fmt.Errorf("kafkabus: topic %q: config %q = %q, want a name and a value", s.Name, k, s.Configs[k]))
		}
	}
	return errors.Join(errs...)
}

// validTopicName applies Kafka's rule for topic names: 1–249 characters of [a-zA-Z0-9._-], not "." or "..".
func validTopicName(name string) error {
	switch {
	case name == "":
		return errors.New("kafkabus: topic name is empty")
	case len(name) > 249:
		return fmt.Errorf("kafkabus: topic name %q is %d characters long, want at most 249", name[:20]+"…", len(name))
	case name == "." || name == "..":
		return fmt.Errorf("kafkabus: topic name %q is not allowed", name)
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return fmt.Errorf("kafkabus: topic name %q has the invalid character %q at byte %d (allowed: a-z A-Z 0-9 . _ -)", name, r, i)
		}
	}
	return nil
}

// PartitionMismatchError says that a topic exists with a partition count other than the one asked for.
// EnsureTopics never changes the partition count of an existing topic: adding partitions would move hosts to
// other partitions, breaking the invariant that each host belongs to one strategy worker and one spider.
type PartitionMismatchError struct {
	Topic string
	Have  int // partitions the topic has on the broker
	Want  int // partitions the spec asks for
}

func (e *PartitionMismatchError) Error() string {
	return fmt.Sprintf("kafkabus: topic %q exists with %d partitions, but the config wants %d; "+
		"delete the topic or change the config to %d (partition counts are never changed in place)",
		e.Topic, e.Have, e.Want, e.Have)
}

// adminPoll is how often EnsureTopics re-reads metadata while it waits for new partitions to show.
const adminPoll = 100 * time.Millisecond

// EnsureTopics makes sure every topic in topics exists with exactly its number of partitions, creating the
// missing ones, and returns once every partition of every topic has a leader that serves it (so a producer
// can write to it at once). It is idempotent. A topic that exists with a different partition count is
// left alone and reported as a *PartitionMismatchError (errors.As), next to any other problem; the other topics
// are still created. ctx bounds the whole call, including the wait.
func EnsureTopics(ctx context.Context, brokers []string, topics []TopicSpec) error {
	if len(brokers) == 0 {
		return errors.New("kafkabus: no brokers given")
	}
	var errs []error
	want := make(map[string]TopicSpec, len(topics))
	names := make([]string, 0, len(topics))
	for _, t := range topics {
		if err := t.Validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		if prev, dup := want[t.Name]; dup {
			if prev.Partitions != t.Partitions {
				errs = append(errs, fmt.Errorf("kafkabus: topic %q is listed twice, with %d and %d partitions", t.Name, prev.Partitions, t.Partitions))
			}
			continue
		}
		want[t.Name] = t
		names = append(names, t.Name)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if len(names) == 0 {
		return nil
	}

	client, closeClient := newAdminClient(brokers)
	defer closeClient()
	have, err := topicPartitions(ctx, client, names)
	if err != nil {
		return err
	}
	var create []kafka.TopicConfig
	for _, name := range names {
		spec := want[name]
		n, ok := have[name]
		switch {
		case !ok:
			rf := spec.ReplicationFactor
			if rf == 0 {
				rf = -1 // broker default (CreateTopics v4+, which every Kafka ≥ 2.4 speaks)
			}
			tc := kafka.TopicConfig{Topic: name, NumPartitions: spec.Partitions, ReplicationFactor: rf}
			for _, k := range slices.Sorted(maps.Keys(spec.Configs)) {
				tc.ConfigEntries = append(tc.ConfigEntries, kafka.ConfigEntry{ConfigName: k, ConfigValue: spec.Configs[k]})
			}
			create = append(create, tc)
		case n != spec.Partitions:
			errs = append(errs, &PartitionMismatchError{Topic: name, Have: n, Want: spec.Partitions})
		default:
			if err := alignConfigs(ctx, client, spec); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(create) > 0 {
		resp, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: create})
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("kafkabus: create topics %s: %w", topicList(create), err))...)
		}
		for _, tc := range create {
			err := resp.Errors[tc.Topic]
			switch {
			case err == nil:
			case errors.Is(err, kafka.TopicAlreadyExists):
				// Created by someone else between our metadata read and our request; checked below.
			default:
				errs = append(errs, fmt.Errorf("kafkabus: create topic %q with %d partitions: %w", tc.Topic, tc.NumPartitions, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return waitTopics(ctx, client, want, names)
}

// alignConfigs sets every config of spec whose value on the existing topic differs (or is the broker's default).
func alignConfigs(ctx context.Context, client *kafka.Client, spec TopicSpec) error {
	if len(spec.Configs) == 0 {
		return nil
	}
	have, err := TopicConfigs(ctx, client, spec.Name, slices.Sorted(maps.Keys(spec.Configs)))
	if err != nil {
		return err
	}
	var set []kafka.IncrementalAlterConfigsRequestConfig
	for _, k := range slices.Sorted(maps.Keys(spec.Configs)) {
		if v, ok := have[k]; !ok || v != spec.Configs[k] {
			set = append(set, kafka.IncrementalAlterConfigsRequestConfig{Name: k, Value: spec.Configs[k], ConfigOperation: kafka.ConfigOperationSet})
		}
	}
	if len(set) == 0 {
		return nil
	}
	resp, err := client.IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{
		Resources: []kafka.IncrementalAlterConfigsRequestResource{{ResourceType: kafka.ResourceTypeTopic, ResourceName: spec.Name, Configs: set}},
	})
	if err == nil {
		for _, r := range resp.Resources {
			if r.Error != nil {
				err = r.Error
			}
		}
	}
	if err != nil {
		return fmt.Errorf("kafkabus: set %s on topic %q: %w", configList(set), spec.Name, err)
	}
	return nil
}

// TopicConfigs returns the named configs of topic that are set on the topic itself; a config the topic takes
// from the broker's defaults is absent.
func TopicConfigs(ctx context.Context, client *kafka.Client, topic string, names []string) (map[string]string, error) {
	resp, err := client.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{
		Resources: []kafka.DescribeConfigRequestResource{{ResourceType: kafka.ResourceTypeTopic, ResourceName: topic, ConfigNames: names}},
	})
	if err != nil {
		return nil, fmt.Errorf("kafkabus: describe configs of topic %q: %w", topic, err)
	}
	out := map[string]string{}
	for _, r := range resp.Resources {
		if r.Error != nil {
			return nil, fmt.Errorf("kafkabus: describe configs of topic %q: %w", topic, r.Error)
		}
		for _, e := range r.ConfigEntries {
			if e.ConfigSource == configSourceTopic {
				out[e.ConfigName] = e.ConfigValue
			}
		}
	}
	return out, nil
}

// configSourceTopic is DescribeConfigs' DYNAMIC_TOPIC_CONFIG source: the value is set on the topic itself.
const configSourceTopic = 1

func configList(cs []kafka.IncrementalAlterConfigsRequestConfig) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.Name + "=" + c.Value
	}
	return strings.Join(s, ", ")
}

// RetentionConfigs returns the topic configs that keep a topic's messages for d: retention.ms = d, and no
// size limit (retention.bytes = -1), so that a crawl's backlog is bounded by time, never by the broker's
// size default. d == 0 keeps messages forever (retention.ms = -1), with cleanup.policy = delete either way:
// Frontier's control topic is a log of commands folded in order, and compaction by key would drop commands.
func RetentionConfigs(d time.Duration) map[string]string {
	ms := "-1"
	if d > 0 {
		ms = strconv.FormatInt(d.Milliseconds(), 10)
	}
	return map[string]string{"retention.ms": ms, "retention.bytes": "-1", "cleanup.policy": "delete"}
}

// waitTopics polls metadata until each topic shows its partitions, each with a leader that serves it, or ctx
// ends.
func waitTopics(ctx context.Context, client *kafka.Client, want map[string]TopicSpec, names []string) error {
	t := time.NewTicker(adminPoll)
	defer t.Stop()
	for {
		resp, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: names})
		var pending []string
		if err == nil {
			ready := make(map[string]bool, len(resp.Topics))
			for _, tp := range resp.Topics {
				if tp.Error != nil {
					continue
				}
				if n := len(tp.Partitions); n != want[tp.Name].Partitions {
					if n > 0 { // created concurrently by someone else, with another count
						return &PartitionMismatchError{Topic: tp.Name, Have: n, Want: want[tp.Name].Partitions}
					}
					continue
				}
				led := true
				for _, p := range tp.Partitions {
					if p.Error != nil || p.Leader.Host == "" {
						led = false
					}
				}
				ready[tp.Name] = led
			}
			for _, name := range names {
				if !ready[name] {
					pending = append(pending, name)
				}
			}
			if len(pending) == 0 {
				if pending, err = unserved(ctx, client, want, names); err == nil && len(pending) == 0 {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("kafkabus: wait for topics: %w (last metadata error: %v)", ctx.Err(), err)
			}
			return fmt.Errorf("kafkabus: wait for topics %s to have leaders for every partition: %w", strings.Join(pending, ", "), ctx.Err())
		case <-t.C:
		}
	}
}

// topicPartitions returns the partition count of each named topic that exists.
func topicPartitions(ctx context.Context, client *kafka.Client, names []string) (map[string]int, error) {
	resp, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: names})
	if err != nil {
		return nil, fmt.Errorf("kafkabus: read metadata of %s from %s: %w", strings.Join(names, ", "), client.Addr, err)
	}
	have := make(map[string]int, len(resp.Topics))
	for _, t := range resp.Topics {
		switch {
		case t.Error == nil:
			have[t.Name] = len(t.Partitions)
		case errors.Is(t.Error, kafka.UnknownTopicOrPartition):
		default:
			return nil, fmt.Errorf("kafkabus: metadata of topic %q: %w", t.Name, t.Error)
		}
	}
	return have, nil
}

// Ping checks that a Kafka cluster answers real requests: ApiVersions, then Metadata, which must list at least
// one broker and a controller. It is what deploy/up waits on; ctx bounds it.
func Ping(ctx context.Context, brokers []string) error {
	if len(brokers) == 0 {
		return errors.New("kafkabus: no brokers given")
	}
	client, closeClient := newAdminClient(brokers)
	defer closeClient()
	if _, err := client.ApiVersions(ctx, &kafka.ApiVersionsRequest{}); err != nil {
		return fmt.Errorf("kafkabus: ping %s: api versions: %w", strings.Join(brokers, ","), err)
	}
	resp, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{}})
	if err != nil {
		return fmt.Errorf("kafkabus: ping %s: metadata: %w", strings.Join(brokers, ","), err)
	}
	if len(resp.Brokers) == 0 {
		return fmt.Errorf("kafkabus: ping %s: metadata lists no brokers", strings.Join(brokers, ","))
	}
	if resp.Controller.Host == "" {
		return fmt.Errorf("kafkabus: ping %s: cluster %q has no controller yet", strings.Join(brokers, ","), resp.ClusterID)
	}
	return nil
}

// DeleteTopics deletes topics (a test run's own, when it ends, so that a long-lived broker does not gather
// them); a topic that does not exist is no error. The error names every topic the broker did not delete.
func DeleteTopics(ctx context.Context, brokers []string, topics []string) error {
	client, closeClient := newAdminClient(brokers)
	defer closeClient()
	resp, err := client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: topics})
	if err != nil {
		return fmt.Errorf("kafkabus: delete topics %s: %w", strings.Join(topics, ", "), err)
	}
	var errs []error
	for _, t := range topics {
		if err := resp.Errors[t]; err != nil && !errors.Is(err, kafka.UnknownTopicOrPartition) {
			errs = append(errs, fmt.Errorf("kafkabus: delete topic %s: %w", t, err))
		}
	}
	return errors.Join(errs...)
}

// newAdminClient returns a client with its own transport, and the func that closes the transport's
// connections (so no goroutine outlives the call).
func newAdminClient(brokers []string) (*kafka.Client, func()) {
	tr := &kafka.Transport{
		Dial:     (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		ClientID: "frontier-admin",
	}
	return &kafka.Client{
		Addr: kafka.TCP(brokers...),
		// Per request; the caller's ctx bounds the whole operation.
		Timeout:   10 * time.Second,
		Transport: tr,
	}, tr.CloseIdleConnections
}

func topicList(tcs []kafka.TopicConfig) string {
	s := make([]string, len(tcs))
	for i, tc := range tcs {
		s[i] = fmt.Sprintf("%s(%d)", tc.Topic, tc.NumPartitions)
	}
	return strings.Join(s, ", ")
}

// unserved returns the topics with a partition whose leader does not answer ListOffsets yet. In KRaft the
// metadata can name a partition's leader a moment before that broker serves the partition (a write then gets
// NOT_LEADER_OR_FOLLOWER); ListOffsets is answered only by the serving leader, and writes nothing.
func unserved(ctx context.Context, client *kafka.Client, want map[string]TopicSpec, names []string) ([]string, error) {
	req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{}}
	for _, name := range names {
		for p := range want[name].Partitions {
			req.Topics[name] = append(req.Topics[name], kafka.LastOffsetOf(p))
		}
	}
	resp, err := client.ListOffsets(ctx, req)
	if err != nil {
		return nil, err
	}
	var pending []string
	for _, name := range names {
		parts := resp.Topics[name]
		ok := len(parts) == want[name].Partitions
		for _, p := range parts {
			if p.Error != nil {
				ok = false
			}
		}
		if !ok {
			pending = append(pending, name)
		}
	}
	return pending, nil
}
