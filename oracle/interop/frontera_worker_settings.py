"""Frontera settings of the harness's Frontera workers (strategy workers and DB worker), the module a Frontera
0.8 user writes for a distributed crawl, with Frontera's SQLAlchemy backend on SQLite instead of HBase (the
Go test runs them under Frontier's spiders: e2e/frontera_test.go, TestGoSpiderFronteraWorkers).

The run's broker, topics and database files come from FRONTERA_* environment variables.
"""
import os

from frontera_settings import (KAFKA_LOCATION, MESSAGE_BUS, MESSAGE_BUS_CODEC, MIDDLEWARES,  # noqa: F401
                               QUEUE_HOSTNAME_PARTITIONING, SCORING_LOG_TOPIC, SPIDER_FEED_PARTITIONS,
                               SPIDER_FEED_TOPIC, SPIDER_LOG_PARTITIONS, SPIDER_LOG_TOPIC,
                               URL_FINGERPRINT_FUNCTION)

BACKEND = "frontera.contrib.backends.sqlalchemy.Distributed"
# One SQLite file per role: the strategy workers (and the add-seeds run) share the states, the DB worker owns
# the queue and the metadata. SQLite serialises the writers of a file.
SQLALCHEMYBACKEND_ENGINE = os.environ["FRONTERA_SQLALCHEMY_ENGINE"]
# Consumer groups span the whole Kafka cluster, whatever the topic. Frontera's DB worker joins its groups as a
# member (subscribe), and Kafka then refuses the offset commits of any other consumer in the same group, such as
# a Frontier DB worker of a concurrent test, which commits without membership: the run names its own groups.
SPIDER_LOG_DBW_GROUP = os.environ.get("FRONTERA_SPIDER_LOG_DBW_GROUP", "dbw-spider-log")
SCORING_LOG_DBW_GROUP = os.environ.get("FRONTERA_SCORING_LOG_DBW_GROUP", "dbw-scoring-log")
SPIDER_LOG_SW_GROUP = os.environ.get("FRONTERA_SPIDER_LOG_SW_GROUP", "sw-spider-log")
STATS_LOG_TOPIC = os.environ.get("FRONTERA_STATS_LOG_TOPIC", "frontier-stats")
STRATEGY = "frontera.strategy.basic.BasicCrawlingStrategy"
LOCAL_MODE = False
# Frontera's defaults are 30 s (an idle batch generator's sleep) and 300 s (the strategy worker's state flush),
# sized for long crawls; the test web is crawled in seconds.
NEW_BATCH_DELAY = 1.0
SW_FLUSH_INTERVAL = 2
MAX_NEXT_REQUESTS = 64
