#!/usr/bin/env python3
"""Run one of Frontera 0.8.1's own workers with the harness's shims (shims.py), for the interop test.

    .venv/oracle/bin/python oracle/interop/worker.py [--start-at-zero TOPIC:GROUP ...] -- MODULE ARGS...

MODULE is frontera.worker.strategy or frontera.worker.db; ARGS are its own command line (--config
frontera_worker_settings --partition-id N, --add-seeds --seeds-url file://..., --partitions 0 1, ...), exactly
as Frontera's guide runs them with `python -m`.

--start-at-zero TOPIC:GROUP commits offset 0 on every partition of TOPIC for GROUP when GROUP has no offset
there yet. Frontera's consumers start a brand-new group at the end of the topic (auto_offset_reset='latest',
frontera issue #109), so on a fresh run's topics a message sent before a worker joined would be skipped; a
deployment creates its groups once, and this is that step.
"""
import os
import runpy
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shims  # noqa: E402,F401

from kafka import KafkaConsumer, TopicPartition  # noqa: E402
from kafka.structs import OffsetAndMetadata  # noqa: E402

import frontera_settings  # noqa: E402


def start_at_zero(topic, group):
    c = KafkaConsumer(bootstrap_servers=frontera_settings.KAFKA_LOCATION, group_id=group, enable_auto_commit=False)
    try:
        parts = c.partitions_for_topic(topic) or set()
        todo = {}
        for p in sorted(parts):
            tp = TopicPartition(topic, p)
            if c.committed(tp) is None:
                todo[tp] = OffsetAndMetadata(0, "")
        if todo:
            c.commit(todo)
    finally:
        c.close(autocommit=False)


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit("usage: worker.py [--start-at-zero TOPIC:GROUP ...] -- MODULE ARGS...")
    i = argv.index("--")
    opts, rest = argv[:i], argv[i + 1:]
    while opts:
        if opts[0] != "--start-at-zero" or len(opts) < 2:
            sys.exit("worker.py: unknown option %r" % opts[0])
        topic, group = opts[1].split(":", 1)
        start_at_zero(topic, group)
        opts = opts[2:]
    module = rest[0]
    sys.argv = [module] + rest[1:]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
