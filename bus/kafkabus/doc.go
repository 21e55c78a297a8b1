// Package kafkabus implements the bus interfaces on Apache Kafka with github.com/segmentio/kafka-go (v0.4.51).
//
// # Use
//
//	cfg := kafkabus.DefaultConfig()            // or composed by configs/
//	cfg.Brokers = []string{"127.0.0.1:9092"}
//	cfg.SpiderFeed.Partitions = 4              // must equal the topic's count (deploy/kafka-topics.sh)
//	b, err := kafkabus.New(cfg, logger, prometheus.DefaultRegisterer)
//	log, err := bus.OpenProducer(ctx, b, bus.SpiderLog)  // a spider: keyed and partitioned as bus/topology.go declares
//	in, err := b.Consumer(ctx, bus.SpiderFeed, bus.GroupSpiderFeed, []int{spiderID}) // spider p
//	for {
//		msgs, err := in.Fetch(ctx, 512)
//		reqs := bus.Decode(in, msgs, decodeFeed) // malformed messages: counted, logged with offset, skipped
//		… make the effects durable …
//		err = in.Commit(ctx, msgs)
//	}
//	lag, err := b.Lag(ctx, bus.SpiderFeed, bus.GroupSpiderFeed) // DB worker flow control
//
// Topics are not created here: deploy/kafka-topics.sh (EnsureTopics in admin.go) creates them. Producers and
// consumers refuse to open when a topic's partition count differs from the configuration, as Frontera does.
//
// # Producers
//
// A Producer wraps a kafka.Writer. Send computes each message's partition with the bus.Partitioner given at
// construction (package partition holds Frontera's), and the Writer's Balancer is a kafka.BalancerFunc that
// passes that partition through, so kafka-go's own hashing is never used. The Writer batches per partition
// (producer.batch_size, batch_bytes, linger) and Send blocks until every message is acknowledged (acks=all by
// default). Failed messages are written again on retriable errors (a restarting broker, a moved leader, a
// timeout), with backoff, until the context ends: a producer survives a broker restart without being reopened.
// Retrying makes delivery at least once and may reorder a retried message after a later one.
//
// A record batch is at most producer.batch_bytes, 1,000,000 by default: under Kafka's default message.max.bytes
// (a topic's max.message.bytes, 1,048,588), which a broker enforces per batch, so a Send of any length fits a
// broker left at its defaults (Frontera's 4 MiB max_request_size does not: 1,024 large messages can pass 1 MB).
// A single message above batch_bytes is an error of Send.
// A batch the broker refuses anyway (a topic or broker set lower, or batch_bytes raised above 1,048,588, which
// New warns about) is not retried: Send returns at once an error naming the topic, the messages and bytes not
// written and the settings to change, wrapping kafka.MessageSizeTooLarge (a handler of bus.Consume that returns
// it leaves its batch uncommitted and ends Consume with it).
//
// # Consumers
//
// kafka-go's group Reader cannot be given explicit partitions (it joins the group and takes what the group
// leader assigns), while Frontier's roles own fixed partitions: strategy worker p its spider-log partition p,
// spider p its feed partition p, the DB worker all of them (Frontera's assign()). kafka-go's partition Reader
// (no GroupID) could, but it hands messages over one at a time through a channel, which halved throughput in
// bench/results/bus.md. So a Consumer runs, per owned partition, a goroutine that long-polls the partition's
// leader with kafka.Client.Fetch requests (consumer.min_bytes, max_bytes, max_wait) on a transport of the
// consumer's own, and hands each fetched record batch to a bounded channel that Fetch drains: Fetch returns up to
// max messages at once, waiting only for the first. Offsets live in the named consumer group (Frontera's
// names: sw-spider-log, dbw-spider-log, dbw-scoring-log, fetchers-spider-feed) and are read with OffsetFetch when
// the consumer opens and written with OffsetCommit only when the caller calls Commit, as a "simple consumer"
// (generation -1, no member id), which Kafka accepts only for groups without members: a consumer that joins a
// group of the same name, such as a Frontera worker on the same Kafka cluster, holds every commit up until it
// leaves (GroupInUseError). Nothing is ever committed automatically, and Close does not commit: whatever was
// fetched and not committed is delivered again to the group's next consumer.
//
// A group that has no committed offset for a partition starts at the earliest offset still held, not the
// latest: a new group (or a new spider) reads the backlog. Frontera's kafka-python consumers used
// auto_offset_reset=latest and skipped it. A committed offset that fell out of retention is not skipped: the
// consumer stops with an *OffsetLostError naming the topic, partition and offsets lost (retention.go), until an
// operator accepts the loss (Bus.AcceptLoss, frontierctl accept-loss).
//
// After a broker restart or a leader change, the fetch goroutines count (frontier_bus_fetch_errors_total), log
// and wait out the errors with backoff and fetch again from the next offset they had not yet delivered;
// kafka-go's transport reconnects and re-reads the metadata. An offset below the log start (retention) stops the
// consumer with an *OffsetLostError; one past the end (a recreated topic) restarts at the earliest offset held. Memory per consumer is bounded by about consumer.buffer messages
// plus, per partition, one fetch of consumer.max_bytes.
//
// # Ownership and fencing
//
// Own (own.go) hands partitions to the processes of a role through a consumer group of its own and puts a
// fence on its work's context (fence.go): Producer.Send and Consumer.Commit first check that this process is
// still a member of the generation that gave it the partitions, so a process resumed after a pause past its
// session writes nothing for partitions a standby took over (bus.ErrFenced).
//
// # Lag
//
// Bus.Lag returns, per partition, the latest offset minus the group's committed offset (the earliest offset
// held where the group never committed): what the group has not yet confirmed. The DB worker reads it on the
// spider feed to decide which spiders are ready for a batch.
//
// # Malformed messages
//
// The bus carries bytes; bus.Decode applies the codec's decoder and reports each message it rejects to the
// Consumer's Malformed method, which counts it (frontier_bus_malformed_messages_total{stream,group}) and logs
// its partition and offset, while the rest of the batch is decoded. Commit the whole batch afterwards.
//
// # Logging and metrics
//
// kafka-go logs through kafka.LoggerFunc adapters over the injected *slog.Logger: its informational messages at
// Debug, its errors (which it retries) at Warn. Metrics are frontier_bus_* series (metrics.go) on the injected
// prometheus.Registerer.
//
// It imports kafka-go and prometheus, never another Kafka client; tests use kfake (github.com/twmb/franz-go/
// pkg/kfake) for the conformance suite and a real broker (FRONTIER_TEST_KAFKA, build tag integration) for the
// rest.
package kafkabus
