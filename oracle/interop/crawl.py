#!/usr/bin/env python3
"""A Scrapy + Frontera 0.8.1 spider, as a Frontera user runs it, for the interop test (e2e/frontera_test.go).

    .venv/oracle/bin/python oracle/interop/crawl.py --partition N --report FILE [--log FILE]

It is one spider process of a distributed Frontera crawl: Scrapy's engine and downloader, Frontera's
FronteraScheduler with its spider and downloader middlewares, Frontera's MessageBusBackend on Frontera's Kafka
message bus with the msgpack codec, and the settings module frontera_settings.py (the broker and topic names
come from FRONTERA_* variables; SPIDER_PARTITION_ID from --partition, the way Frontera's guide passes it with
-s). Whatever the workers put on its spider-feed partition it fetches, and it reports pages, links and errors on
the spider log, exactly as under Frontera's own workers.

The spider follows every <a href> of every page. Frontera's distributed spiders never finish by themselves
(frontera issue #348); the test decides when the crawl is over and sends SIGTERM, on which Scrapy closes the
scheduler, which flushes the spider-log producer and commits the feed offset.

It prints "READY partition=N offset=K" on stdout once its feed consumer holds a position (the consumer starts
at the partition's end, auto_offset_reset='latest': anything put on the feed before that line is skipped,
Frontera's issue #109), so the test injects seeds only after it.

Audit: every request Scrapy takes from Frontera's scheduler (i.e. decoded by Frontera's codec from the feed) is
checked by a downloader middleware, and the results are written as JSON to --report at exit:
  * its meta has Frontera's keys with Frontera's types: fingerprint (40-hex bytes, equal to Frontera's own
    URL_FINGERPRINT_FUNCTION over w3lib's canonical URL, as UrlFingerprintMiddleware computes it), domain (a
    dict whose b'name' is the URL's hostname and b'fingerprint' Frontera's fingerprint of that name), score
    (float) and jid (int);
  * the partition Frontera's own Crc32NamePartitioner (QUEUE_HOSTNAME_PARTITIONING) picks for the host is this
    spider's partition.
"""
import argparse
import faulthandler
import json
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shims  # noqa: E402,F401  (first: patches frontera, w3lib, msgpack, scrapy before they are used)

import scrapy  # noqa: E402
from scrapy import signals  # noqa: E402
from scrapy.crawler import CrawlerProcess  # noqa: E402
from w3lib.url import canonicalize_url  # noqa: E402
from urllib.parse import urlparse  # noqa: E402

from frontera.contrib.backends.partitioners import Crc32NamePartitioner  # noqa: E402
from frontera.utils.misc import load_object  # noqa: E402

import frontera_settings  # noqa: E402

AUDIT = {"requests": [], "pages": 0, "errors": [], "ready": None}
URL_FP = load_object(frontera_settings.URL_FINGERPRINT_FUNCTION)
DOMAIN_FP = load_object("frontera.utils.fingerprint.sha1")  # DOMAIN_FINGERPRINT_FUNCTION's default


def audit_request(frontier_request, partition_id):
    url = frontier_request.url
    meta = frontier_request.meta
    problems = []
    host = urlparse(url).hostname or ""
    rec = {"url": url, "host": host, "problems": problems}

    fp = meta.get(b"fingerprint")
    if not isinstance(fp, bytes) or len(fp) != 40:
        problems.append("meta fingerprint %r is not 40 hex bytes" % (fp,))
    else:
        rec["fingerprint"] = fp.decode()
        want = URL_FP(canonicalize_url(url))
        if fp != want:
            problems.append("meta fingerprint %s, Frontera computes %s" % (fp.decode(), want.decode()))
    dom = meta.get(b"domain")
    if not isinstance(dom, dict):
        problems.append("meta domain %r is not a dict" % (dom,))
    else:
        name = dom.get(b"name")
        if name != host.encode():
            problems.append("meta domain name %r, URL hostname %r" % (name, host))
        dfp = dom.get(b"fingerprint")
        if name is not None and dfp != DOMAIN_FP(name):
            problems.append("meta domain fingerprint %r, Frontera computes %r" % (dfp, DOMAIN_FP(name)))
        rec["domain_fingerprint"] = dfp.decode() if isinstance(dfp, bytes) else None
    score = meta.get(b"score")
    if not isinstance(score, float):
        problems.append("meta score %r is not a float" % (score,))
    rec["score"] = score if isinstance(score, float) else None
    jid = meta.get(b"jid")
    if not isinstance(jid, int) or isinstance(jid, bool):
        problems.append("meta jid %r is not an int" % (jid,))
    rec["jid"] = jid if isinstance(jid, int) else None

    # The partition Frontera's DB worker would have put this request on: its Crc32NamePartitioner over the
    # hostname, called the way kafka-python calls a partitioner (key, all partitions, available partitions).
    n = frontera_settings.SPIDER_FEED_PARTITIONS
    parts = list(range(n))
    want_p = Crc32NamePartitioner(n)(host.encode(), parts, parts)
    rec["frontera_partition"] = want_p
    if want_p != partition_id:
        problems.append("host %s is Frontera's partition %d, read from partition %d" % (host, want_p, partition_id))
    AUDIT["requests"].append(rec)


class FeedAuditMiddleware:
    """Downloader middleware (first in line): audits every request that came from Frontera's feed."""

    def __init__(self, crawler):
        self.partition_id = int(crawler.settings.get("SPIDER_PARTITION_ID"))

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def process_request(self, request, spider=None):
        fr = request.meta.get(b"frontier_request")
        if fr is not None and "redirect_times" not in request.meta:
            audit_request(fr, self.partition_id)
        return None


class FronteraWebSpider(scrapy.Spider):
    name = "frontera-interop"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.opened, signal=signals.spider_opened)
        return spider

    def opened(self, spider):
        # Fix the feed consumer's position now (the partition's end), so the test knows when seeds are safe.
        sched = self.crawler.engine.slot.scheduler
        backend = sched.frontier.manager.backend
        offset = backend.consumer.get_offset(backend.partition_id)
        AUDIT["ready"] = offset
        print("READY partition=%d offset=%d" % (backend.partition_id, offset), flush=True)

    def parse(self, response):
        AUDIT["pages"] += 1
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href.strip())
            if url.startswith(("http://", "https://")):
                yield scrapy.Request(url, callback=self.parse)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--partition", type=int, required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--log", default=None)
    args = ap.parse_args()
    faulthandler.register(signal.SIGUSR1)  # stacks of every thread on SIGUSR1, for a hung run

    settings = {
        # Frontera's Scrapy wiring (Frontera's "Using the frontier with Scrapy" guide).
        "SCHEDULER": "frontera.contrib.scrapy.schedulers.frontier.FronteraScheduler",
        "SPIDER_MIDDLEWARES": {
            "frontera.contrib.scrapy.middlewares.schedulers.SchedulerSpiderMiddleware": 999,
        },
        "DOWNLOADER_MIDDLEWARES": {
            "frontera.contrib.scrapy.middlewares.schedulers.SchedulerDownloaderMiddleware": 999,
            __name__ + ".FeedAuditMiddleware": 1,
        },
        "FRONTERA_SETTINGS": "frontera_settings",
        "SPIDER_PARTITION_ID": args.partition,
        # A crawl is checked for "every page fetched once": Scrapy's retries would fetch twice.
        "RETRY_ENABLED": False,
        "ROBOTSTXT_OBEY": True,
        "DOWNLOAD_TIMEOUT": 10,
        "CONCURRENT_REQUESTS": 16,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
        "USER_AGENT": "FronteraInteropSpider",
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": os.environ.get("FRONTERA_HARNESS_LOG_LEVEL", "INFO"),
    }
    if args.log:
        settings["LOG_FILE"] = args.log
    process = CrawlerProcess(settings)
    process.crawl(FronteraWebSpider)
    process.start()
    with open(args.report, "w") as f:
        json.dump(AUDIT, f)
    print("STOPPED requests=%d pages=%d" % (len(AUDIT["requests"]), AUDIT["pages"]), flush=True)
    if AUDIT["ready"] is None:
        print("the spider never opened its feed consumer; see the Scrapy log", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
