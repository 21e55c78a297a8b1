#!/usr/bin/env python3
"""Split a CPU profile of a timing-web crawl into the parts of the crawl (BENCHMARKS.md, stop 44).

  go tool pprof -traces DIR/delay0-frontier-cpu.prof > frontier.traces
  python3 bench/profile_parts.py frontier.traces

The profiles come from bench/crawl's -crawl.childprofile (both crawlers). Each sample of `go tool pprof -traces`
is counted once, under the first part in PARTS whose pattern appears anywhere in its stack, so the parts add up
to the profile's total. Prints CPU-seconds per part, largest first, then the total.
"""

import collections
import re
import sys

# (pattern in a frame, part), first match wins: Pebble's own background work before the code that caused it.
PARTS = [
    ("internal/compact", "Pebble flush and compaction"),
    ("(*DB).flush", "Pebble flush and compaction"),
    ("(*DB).compact", "Pebble flush and compaction"),
    ("(*LogWriter)", "Pebble WAL"),
    ("links.Extract", "link extraction"),
    ("codec.", "codec"),
    ("bus.Decode", "codec"),
    ("pebblestore.(*Queue)", "store: queue"),
    ("pebblestore.(*Pages)", "store: page records"),
    ("pebblestore.(*States)", "store: states"),
    ("pebblestore", "store: other tables"),
    ("pebblebus", "bus"),
    ("strategyworker", "strategy worker"),
    ("dbworker", "DB worker"),
    ("spider.(*fetcher)", "spider fetcher"),
    ("spider.(*Spider).reportPage", "spider report"),
    ("spider.", "spider, other"),
    ("net/http", "net/http"),
    ("bench/crawl", "the least crawler's own code"),
    ("gcBgMarkWorker", "collector"),
    ("bgsweep", "collector"),
]

SAMPLE = re.compile(r"\s*([\d.]+)(ms|s)\s+(.*)")


def parts(text):
    total, by = 0.0, collections.Counter()
    for block in text.split("-----------+-------------------------------------------------------"):
        lines = [l for l in block.strip().split("\n") if l.strip()]
        while lines and not SAMPLE.match(lines[0]):  # label lines (pprof.Do) come first
            lines = lines[1:]
        if not lines:
            continue
        m = SAMPLE.match(lines[0])
        secs = float(m.group(1)) * (0.001 if m.group(2) == "ms" else 1)
        stack = "\n".join([m.group(3)] + [l.strip() for l in lines[1:]])
        part = next((name for pat, name in PARTS if pat in stack), "other")
        by[part] += secs
        total += secs
    return by, total


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: profile_parts.py TRACES (the output of go tool pprof -traces)")
    with open(sys.argv[1]) as f:
        by, total = parts(f.read())
    for name, secs in by.most_common():
        print(f"{secs:6.2f}  {name}")
    print(f"{total:6.2f}  total")


if __name__ == "__main__":
    main()
