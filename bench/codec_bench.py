#!/usr/bin/env python3
"""Time Frontera 0.8.1's own codecs on the messages codec/bench_test.go uses, for the comparison in
bench/results/codec.md.

    .venv/oracle/bin/python bench/codec_bench.py [seconds-per-case]

The messages (see benchRequest in codec/bench_test.go; keep both in step):
    request i (0 <= i < 1024): url = https://www.host{i%64}.example.com/section/{i}/page.html?id={i}&ref=feed,
        meta = {fingerprint: hex sha1(url), domain: {netloc, name, scheme, sld, tld, subdomain,
        fingerprint: hex sha1(host)}, jid: 1, score: 0.5 + i/4096, depth: i%5, scrapy_meta: {}}
    le i: request i with links i+1 .. i+10 (mod 1024); pc i: response to request i, status 200,
        headers {Content-Type: [text/html; charset=utf-8]}, no body.
It prints msgs/s (wall time, one thread), msgs/cpu-s (process CPU time: the cost per core, robust on a busy
shared machine) and B/msg for each case; B/msg equals the Go benchmark's when the messages agree. Shims as in oracle/gen_codec.py (w3lib to_native_str; unpackb(raw=False) for msgpack >= 1.0).
"""
import hashlib
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
import gen_codec as g  # noqa: E402  (shims)
from frontera.core.models import Request, Response  # noqa: E402

g.install_unpackb_shim()
N = 1024


def request(i):
    host = "www.host%d.example.com" % (i % 64)
    url = "https://%s/section/%d/page.html?id=%d&ref=feed" % (host, i, i)
    meta = {b"fingerprint": hashlib.sha1(url.encode()).hexdigest().encode(),
            b"domain": {b"netloc": host.encode(), b"name": host.encode(), b"scheme": b"https", b"sld": b"example",
                        b"tld": b"com", b"subdomain": ("www.host%d" % (i % 64)).encode(),
                        b"fingerprint": hashlib.sha1(host.encode()).hexdigest().encode()},
            b"jid": 1, b"score": 0.5 + i / 4096, b"depth": i % 5, b"scrapy_meta": {}}
    return Request(url, method=b"GET", meta=meta)


def run(name, items, fn, seconds):
    # warm up, then loop over the items until the time is up
    for x in items[:64]:
        fn(x)
    n, size, start, cpu0 = 0, 0, time.perf_counter(), time.process_time()
    while True:
        for x in items:
            out = fn(x)
            # B/msg is the encoded size: the output of an encoder, the input of a decoder
            size += len(out) if isinstance(out, (bytes, str)) else len(x)
        n += len(items)
        el = time.perf_counter() - start
        if el >= seconds:
            break
    cpu = time.process_time() - cpu0
    rate = n / el
    print("%-22s %10.0f msgs/s %10.0f msgs/cpu-s %9.1f B/msg" % (name, rate, n / cpu, size / n))
    return rate


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    reqs = [request(i) for i in range(N)]
    les = [(reqs[i], [reqs[(i + 1 + j) % N] for j in range(10)]) for i in range(N)]
    pcs = [Response(r.url, status_code=200, headers={b"Content-Type": [b"text/html; charset=utf-8"]}, body=None,
                    request=r) for r in reqs]
    for cname, enc, dec in (("msgpack", g.fmsgpack.Encoder(Request), g.fmsgpack.Decoder(Request, Response)),
                            ("json", g.fjson.Encoder(Request), g.fjson.Decoder(Request, Response))):
        feed = [enc.encode_request(r) for r in reqs]
        pce = [enc.encode_page_crawled(p) for p in pcs]
        lee = [enc.encode_links_extracted(r, links) for r, links in les]
        run("encode feed/%s" % cname, reqs, enc.encode_request, seconds)
        run("decode feed/%s" % cname, feed, dec.decode_request, seconds)
        run("encode pc/%s" % cname, pcs, enc.encode_page_crawled, seconds)
        run("decode pc/%s" % cname, pce, dec.decode, seconds)
        run("encode le/%s" % cname, les, lambda x: enc.encode_links_extracted(*x), seconds)
        run("decode le/%s" % cname, lee, dec.decode, seconds)


if __name__ == "__main__":
    main()
