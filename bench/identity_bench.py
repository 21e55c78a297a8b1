#!/usr/bin/env python3
"""Time w3lib's canonicalize_url + hashlib.sha1 (Frontera's URL fingerprint) on the inputs Frontier's Go
benchmarks use, so the two figures can sit side by side (bench/results/identity.md).

  .venv/oracle/bin/python bench/identity_bench.py      # w3lib 2.5.0 (the default mode)
  .venv/w3lib122/bin/python bench/identity_bench.py    # w3lib 1.22.0

Mixes (the same as the Go benchmarks):
  vectors  the inputs of identity/testdata/canon/vectors.json that the interpreter's w3lib canonicalises
           (BenchmarkCanonicalizeSHA1 / BenchmarkCanonicalizeSHA1W3lib122)
  simple   six plain ASCII http(s) URLs (BenchmarkCanonicalizeSHA1Simple)

Reported per core (one process, one thread): URLs per wall-clock second and per CPU second, as the Go
benchmarks report them.
"""

import hashlib
import json
import os
import sys
import time

import w3lib
from w3lib.url import canonicalize_url

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SIMPLE = [
    "http://www.example.com/", "https://news.example.org/2024/05/article-title.html",
    "http://shop.example.com/catalog/item?id=1234&color=red&size=m", "https://example.com/search?q=go+lang&page=2",
    "http://blog.example.net/tag/crawling/", "https://www.example.com/a/b/c/d.php?x=1#top",
]


def vector_inputs():
    with open(os.path.join(ROOT, "identity", "testdata", "canon", "vectors.json")) as f:
        vecs = json.load(f)["vectors"]
    out = []
    for v in vecs:
        if "b64" in v:
            continue
        try:
            canonicalize_url(v["in"])
        except Exception:
            continue
        out.append(v["in"])
    return out


def run(urls, seconds=3.0):
    sha1 = hashlib.sha1
    n = 0
    w0, c0 = time.perf_counter(), time.process_time()
    while True:
        for u in urls:
            sha1(canonicalize_url(u).encode("utf8")).digest()
        n += len(urls)
        if time.perf_counter() - w0 >= seconds:
            break
    return n / (time.perf_counter() - w0), n / (time.process_time() - c0)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    mixes = {"vectors": vector_inputs(), "simple": SIMPLE}
    res = {"python": sys.version.split()[0], "w3lib": w3lib.__version__}
    for name, urls in mixes.items():
        run(urls, 0.3)  # warm the caches w3lib keeps (functools.lru_cache), as the Go memo is warm
        wall, cpu = run(urls, seconds)
        res[name] = {"urls": len(urls), "urls_per_s": round(wall), "urls_per_cpu_s": round(cpu)}
    print(json.dumps(res))


if __name__ == "__main__":
    main()
