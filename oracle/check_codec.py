#!/usr/bin/env python3
"""Check that Frontera's own decoders read the bytes Frontier's Go codecs write ("Frontera reads ours").

    .venv/oracle/bin/python oracle/check_codec.py FILE.jsonl

FILE has one JSON object per line: name, msg (a description in gen_codec.py's format), msgpack (hex of the
Go-encoded bytes) and json (the Go-encoded JSON text, or null). Each is decoded with frontera 0.8.1's msgpack and
JSON Decoder and the result compared, field by field and in dict order, with the Python objects built from the
description. Prints one line per mismatch and exits 1 if there was any; the last line is a summary.

Shims: the same as gen_codec.py (w3lib to_native_str alias; the decoder's unpackb(encoding='utf-8') replaced by
unpackb(raw=False, strict_map_key=False) because msgpack >= 1.0 dropped `encoding`, frontera issue #394).
'as' (add_seeds) is 0.7-only; decode_add_seeds_* restate 0.7.1's decoder branches ([b'as', [request...]] and
{'type': 'add_seeds', 'seeds': [...]}).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_codec as g  # noqa: E402  (applies the w3lib shim on import)
from frontera.core.models import Request, Response  # noqa: E402

g.install_unpackb_shim()
MP = g.fmsgpack.Decoder(Request, Response)
JS = g.fjson.Decoder(Request, Response)


def canon(v, tuples_as_lists):
    """An order-preserving, type-preserving form for comparison (dicts compare by item order too)."""
    if isinstance(v, dict):
        return ("dict", [(canon(k, tuples_as_lists), canon(x, tuples_as_lists)) for k, x in v.items()])
    if isinstance(v, tuple):
        kind = "list" if tuples_as_lists else "tuple"
        return (kind, [canon(x, tuples_as_lists) for x in v])
    if isinstance(v, list):
        return ("list", [canon(x, tuples_as_lists) for x in v])
    return (type(v).__name__, v)


class Checker:
    def __init__(self, name, codec):
        self.name, self.codec, self.problems = name, codec, []
        self.tl = codec == "msgpack"

    def eq(self, what, got, want):
        if canon(got, self.tl) != canon(want, self.tl):
            self.problems.append("%s %s: %s: got %r, want %r" % (self.name, self.codec, what, got, want))

    def request(self, what, got, d):
        want = g.make_request(d)
        self.eq(what + ".url", got.url, want.url)
        self.eq(what + ".method", got.method, want.method)
        self.eq(what + ".headers", got.headers, want.headers)
        self.eq(what + ".cookies", got.cookies, want.cookies)
        self.eq(what + ".meta", got.meta, want.meta or {b"scrapy_meta": {}})


def decode_add_seeds_msgpack(buf):
    obj = g.fmsgpack.unpackb(buf, encoding="utf-8")
    if obj[0] != b"as":
        raise TypeError("Unknown message type")
    return ("add_seeds", [MP._request_from_object(x) for x in obj[1]])


def decode_add_seeds_json(text):
    obj = g.fjson._convert_from_saved_type(json.JSONDecoder.decode(JS, text))
    if obj["type"] != "add_seeds":
        raise TypeError("Unknown message type")
    return ("add_seeds", [JS._request_from_object(x) for x in obj["seeds"]])


def check(c, msg, data):
    k = msg["kind"]
    dec = MP if c.codec == "msgpack" else JS
    if k == "feed":
        c.request("request", dec.decode_request(data), msg["request"])
        return
    if k == "as":
        out = decode_add_seeds_msgpack(data) if c.codec == "msgpack" else decode_add_seeds_json(data)
    else:
        out = dec.decode(data)
    names = {"pc": "page_crawled", "le": "links_extracted", "re": "request_error", "of": "offset",
             "us": "update_score", "njid": "new_job_id", "st": "stats", "as": "add_seeds"}
    c.eq("type", out[0], names[k])
    if k == "pc":
        resp, want = out[1], g.make_response(msg["response"])
        c.eq("url", resp.url, want.url)
        c.eq("status_code", resp.status_code, want.status_code)
        c.eq("body", resp.body, want.body)
        if c.codec == "msgpack":  # Frontera's JSON page_crawled carries no headers
            c.eq("headers", resp.headers, want.headers)
        c.eq("meta", resp.meta, want.meta or {b"scrapy_meta": {}})
    elif k == "le":
        c.request("request", out[1], msg["request"])
        c.eq("len(links)", len(out[2]), len(msg["links"]))
        for i, (got, d) in enumerate(zip(out[2], msg["links"])):
            c.request("links[%d]" % i, got, d)
    elif k == "re":
        c.request("request", out[1], msg["request"])
        c.eq("error", out[2], msg["error"])
    elif k == "us":
        c.request("request", out[1], msg["request"])
        c.eq("score", out[2], float(msg["score"]))
        c.eq("schedule", out[3], msg["schedule"])
    elif k == "of":
        c.eq("partition_id", out[1], msg["partition"])
        c.eq("offset", out[2], msg["offset"])
    elif k == "njid":
        c.eq("job_id", out[1], msg["id"])
    elif k == "st":
        c.eq("stats", out[1], g.undesc(msg["stats"]))
    elif k == "as":
        c.eq("len(seeds)", len(out[1]), len(msg["seeds"]))
        for i, (got, d) in enumerate(zip(out[1], msg["seeds"])):
            c.request("seeds[%d]" % i, got, d)


def main():
    problems, n = [], 0
    with open(sys.argv[1]) as f:
        for line in f:
            v = json.loads(line)
            for codec, data in (("msgpack", bytes.fromhex(v["msgpack"])), ("json", v.get("json"))):
                if data is None:
                    continue
                c = Checker(v["name"], codec)
                try:
                    check(c, v["msg"], data)
                except Exception as e:  # a decoder that raises is a failure, reported with the message name
                    c.problems.append("%s %s: Frontera's decoder raised %s: %s" % (v["name"], codec, type(e).__name__, e))
                problems += c.problems
                n += 1
    for p in problems[:50]:
        print(p)
    print("check_codec: %d decodings, %d problems" % (n, len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
