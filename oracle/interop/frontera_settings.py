"""Frontera settings of the harness's spiders: the module a Frontera 0.8 user writes for the spiders of a
distributed crawl (Frontera's "cluster setup" guide), pointed at Frontier's workers instead of Frontera's.

Nothing in it is Frontier-specific: Frontier's strategy workers and DB worker read and write Frontera's topics
with Frontera's codec and partitioners. The test run passes its own broker and topic names through FRONTERA_*
environment variables, so concurrent runs do not collide; without them these are Frontera's defaults.
SPIDER_PARTITION_ID is per spider process: it comes from the Scrapy command line
(`-s SPIDER_PARTITION_ID=N`), as Frontera's guide runs its spiders, so it is not set here.
"""
import os

# The spider side of a distributed crawl: no local strategy, the message bus backend.
LOCAL_MODE = False
BACKEND = "frontera.contrib.backends.remote.messagebus.MessageBusBackend"
MESSAGE_BUS = "frontera.contrib.messagebus.kafkabus.MessageBus"
MESSAGE_BUS_CODEC = "frontera.contrib.backends.remote.codecs.msgpack"
KAFKA_LOCATION = os.environ.get("FRONTERA_KAFKA_LOCATION", "localhost:9092")

SPIDER_LOG_TOPIC = os.environ.get("FRONTERA_SPIDER_LOG_TOPIC", "frontier-done")
SPIDER_FEED_TOPIC = os.environ.get("FRONTERA_SPIDER_FEED_TOPIC", "frontier-todo")
SCORING_LOG_TOPIC = os.environ.get("FRONTERA_SCORING_LOG_TOPIC", "frontier-score")
SPIDER_FEED_GROUP = "fetchers-spider-feed"

# Two strategy workers (spider-log partitions) and two spiders (spider-feed partitions).
SPIDER_LOG_PARTITIONS = int(os.environ.get("FRONTERA_SPIDER_LOG_PARTITIONS", "2"))
SPIDER_FEED_PARTITIONS = int(os.environ.get("FRONTERA_SPIDER_FEED_PARTITIONS", "2"))
# Hosts, not URLs, are partitioned over the spiders (the guide's cluster setting): one spider owns a host.
QUEUE_HOSTNAME_PARTITIONING = True

# The guide's spider batch is 512; the test web is small. DELAY_ON_EMPTY is 5 s by default: how long the
# scheduler waits after an empty read of the feed; 1 s keeps the test short.
MAX_NEXT_REQUESTS = 256
DELAY_ON_EMPTY = 1.0

URL_FINGERPRINT_FUNCTION = "frontera.utils.fingerprint.sha1"
# DomainFingerprintMiddleware is required on spiders: the spider log is keyed by the host's fingerprint.
MIDDLEWARES = [
    "frontera.contrib.middlewares.domain.DomainMiddleware",
    "frontera.contrib.middlewares.fingerprint.UrlFingerprintMiddleware",
    "frontera.contrib.middlewares.fingerprint.DomainFingerprintMiddleware",
]
