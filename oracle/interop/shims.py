"""Compatibility shims that let Frontera 0.8.1 (2019) run on today's Python and libraries.

Import this module before anything from frontera or scrapy. Each shim is the smallest change that restores the
2019 behaviour Frontera relies on; none changes what goes on the wire (the Go side checks the bytes).

Versions (oracle/setup.sh): Python 3.11, frontera 0.8.1, scrapy 2.19.0, w3lib 2.5.0, msgpack 1.2.4,
kafka-python 2.0.6.

  * collections.Iterable & co.: frontera/core/manager.py does `from collections import Iterable`; the aliases
    moved to collections.abc in Python 3.3 and were removed from collections in 3.10.
  * w3lib.util.to_native_str: frontera (converters, fingerprints, codecs) imports it; w3lib 2.x removed it. On
    Python 3 it was to_unicode, so it is aliased.
  * msgpack: Frontera's decoder calls unpackb(buf, encoding='utf-8'); msgpack >= 1.0 removed `encoding`
    (frontera issue #394). unpackb(raw=False) decodes the same way (str -> str, bin -> bytes), and
    strict_map_key=False keeps 0.5's acceptance of bytes map keys (Frontera's meta keys are bytes). The encoder
    (packb(use_bin_type=True)) is unchanged between 0.5 and 1.x and is not touched.
  * kafka-python: none needed, by choosing 2.0.6, the newest release that still has
    kafka.protocol.commit.GroupCoordinatorRequest (imported by Frontera's offsets_fetcher.py; 2.1.0 removed it).
    Frontera 0.8.1 asks for kafka-python>=1.4.0.
  * Scrapy ExecutionEngine.slot: Frontera's scheduler middlewares reach the scheduler through
    crawler.engine.slot.scheduler; Scrapy renamed the attribute to _slot (2.19 adds engine.scheduler instead).
    A read-only `slot` property returning _slot is added back.
  * Scrapy spider middlewares: Scrapy 2.19 refuses a middleware whose process_spider_output is a plain
    generator unless it also has process_spider_output_async ("doesn't support asynchronous spider output").
    Frontera's SchedulerSpiderMiddleware gets one that collects the callback's output and hands it to the same
    synchronous FronteraScheduler.process_spider_output (which reports the page and its links to Frontera).
  * Frontera's Kafka Consumer.close: on stop, Frontera calls MessageBusBackend.frontier_stop twice
    (ComponentsPipelineMixin.close calls BackendMixin.close, then super().close(), which in
    SpiderFrontierManager's MRO is BackendMixin.close again). The second call commits on the already closed KafkaConsumer, which
    kafka-python retries forever ("NodeNotReadyError: coordinator-1"), so the spider never exits. close() is
    made idempotent; the first call still commits and closes exactly as before.
  * Twisted putChild: Frontera's workers register their JSON-RPC resources with str paths
    (root.putChild('status', ...)); Twisted >= 21 requires bytes ("Path segment must be bytes", frontera issue
    #411). str paths are encoded as UTF-8.
"""
import collections
import collections.abc
import warnings

for _name in ("Iterable", "Mapping", "MutableMapping", "Sequence", "Callable"):
    if not hasattr(collections, _name):
        setattr(collections, _name, getattr(collections.abc, _name))

import w3lib.util  # noqa: E402

if not hasattr(w3lib.util, "to_native_str"):
    w3lib.util.to_native_str = w3lib.util.to_unicode

import msgpack  # noqa: E402


def _unpackb(buf, encoding=None, **kw):
    return msgpack.unpackb(buf, raw=False, strict_map_key=False)


from frontera.contrib.backends.remote.codecs import msgpack as _fmsgpack  # noqa: E402

_fmsgpack.unpackb = _unpackb

from frontera.contrib.messagebus import kafkabus as _kafkabus  # noqa: E402

_consumer_close = _kafkabus.Consumer.close


def _close_once(self):
    if getattr(self, "_harness_closed", False):
        return
    self._harness_closed = True
    _consumer_close(self)


_kafkabus.Consumer.close = _close_once

from scrapy.core.engine import ExecutionEngine  # noqa: E402

if not hasattr(ExecutionEngine, "slot"):
    ExecutionEngine.slot = property(lambda self: self._slot)

from frontera.contrib.scrapy.middlewares.schedulers import SchedulerSpiderMiddleware  # noqa: E402


async def _process_spider_output_async(self, response, result, spider=None):
    collected = [x async for x in result]
    for x in self.process_spider_output(response, collected, spider):
        yield x


if not hasattr(SchedulerSpiderMiddleware, "process_spider_output_async"):
    SchedulerSpiderMiddleware.process_spider_output_async = _process_spider_output_async

from twisted.web.resource import Resource  # noqa: E402

_put_child = Resource.putChild


def _put_child_bytes(self, path, child):
    return _put_child(self, path.encode() if isinstance(path, str) else path, child)


Resource.putChild = _put_child_bytes

# Frontera 0.8.1 and Scrapy 2.19 disagree on a few deprecated APIs that still work; their warnings would only
# bury the harness's own output.
warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", module="frontera")
