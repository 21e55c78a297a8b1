#!/usr/bin/env python3
"""Generate codec vectors for codec/ with Frontera 0.8.1's own msgpack and JSON encoders.

Run with the oracle venv (oracle/setup.sh):

    .venv/oracle/bin/python oracle/gen_codec.py codec/testdata/vectors.jsonl.gz

Each output line is one JSON object:
    name     a short unique name (kind and index)
    msg      a description of the message, enough for Go to build the same message (see desc() below)
    msgpack  hex of the bytes Frontera's msgpack codec writes
    json     the text Frontera's JSON codec writes, or null where it cannot encode the message
             (bytes that are not UTF-8: its _convert_and_save_type decodes bytes strictly)
    lossy    true when the message uses a shape the Go model normalises (e.g. a header whose value is one bytes
             object, not a list), so Go can decode it but not re-encode the same bytes

Shims, all outside the code paths being tested:
  * frontera 0.8.1 imports w3lib.util.to_native_str, which w3lib 2.x removed; on Python 3 it equals to_unicode,
    so it is aliased before frontera is imported.
  * Frontera's msgpack *decoder* calls unpackb(buf, encoding='utf-8'), which msgpack >= 1.0 rejects (frontera
    issue #394). install_unpackb_shim() replaces the module's unpackb by unpackb(buf, raw=False,
    strict_map_key=False): raw=False decodes str -> str and bin -> bytes exactly as encoding='utf-8' did under
    msgpack 0.5, and strict_map_key=False restores 0.5's acceptance of non-str map keys. The encoder is untouched
    (packb(obj, use_bin_type=True) behaves the same in 0.5 and 1.x).
  * 'as' (add_seeds) is 0.7-only. encode_add_seeds() below restates 0.7.1's encoders (msgpack:
    packb([b'as', [_prepare_request_message(seed) ...]], use_bin_type=True); JSON: {'type': 'add_seeds',
    'seeds': [...]}) using 0.8.1's _prepare_request_message, which 0.7.1 shares.
"""
import gzip
import io
import json
import random
import sys
import warnings

warnings.simplefilter("ignore")
import w3lib.util  # noqa: E402

if not hasattr(w3lib.util, "to_native_str"):
    w3lib.util.to_native_str = w3lib.util.to_unicode

import msgpack  # noqa: E402
from frontera.core.models import Request, Response  # noqa: E402
from frontera.contrib.backends.remote.codecs import json as fjson  # noqa: E402
from frontera.contrib.backends.remote.codecs import msgpack as fmsgpack  # noqa: E402

BODY_KEY = b"frontier_body"


def install_unpackb_shim():
    def unpackb(buf, encoding=None, **kw):
        return msgpack.unpackb(buf, raw=False, strict_map_key=False)
    fmsgpack.unpackb = unpackb


# ---- descriptions: a typed JSON form of Python values (str vs bytes, int vs float, list vs tuple, dict order)

def desc(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"i": str(v)}
    if isinstance(v, float):
        return {"f": repr(v)}
    if isinstance(v, str):
        return {"s": v}
    if isinstance(v, bytes):
        return {"b": v.hex()}
    if isinstance(v, tuple):
        return {"t": [desc(x) for x in v]}
    if isinstance(v, list):
        return {"l": [desc(x) for x in v]}
    if isinstance(v, dict):
        return {"m": [[desc(k), desc(x)] for k, x in v.items()]}
    raise TypeError(type(v))


def undesc(d):
    if d is None:
        return None
    (k, v), = d.items()
    if k == "bool":
        return v
    if k == "i":
        return int(v)
    if k == "f":
        return float(v)
    if k == "s":
        return v
    if k == "b":
        return bytes.fromhex(v)
    if k == "t":
        return tuple(undesc(x) for x in v)
    if k == "l":
        return [undesc(x) for x in v]
    if k == "m":
        return {undesc(a): undesc(b) for a, b in v}
    raise ValueError(k)


def desc_request(r, body=None):
    meta = dict(r.meta)
    meta.pop(BODY_KEY, None)
    return {"url": r.url, "method": r.method.decode("latin-1"), "headers": desc(r.headers),
            "cookies": [[k, v] for k, v in r.cookies.items()], "meta": desc(meta),
            "body": body.hex() if body else None}


def make_request(d):
    """The Python request for a description; a body travels as the last meta key, as Frontier sends it."""
    meta = undesc(d["meta"])
    if d.get("body"):
        meta[BODY_KEY] = bytes.fromhex(d["body"])
    req = Request(d["url"], method=d["method"].encode("latin-1"), headers=undesc(d["headers"]),
                  cookies=dict(d["cookies"]), meta=meta)
    req._meta = meta  # exactly the described meta: the constructor would turn {} into {b'scrapy_meta': {}}
    return req


def make_response(d):
    req = make_request({"url": d["url"], "method": "GET", "headers": None, "cookies": [], "meta": d["meta"],
                        "body": d.get("request_body")})
    body = bytes.fromhex(d["body"]) if d["body"] is not None else None
    return Response(d["url"], status_code=d["status"], headers=undesc(d["headers"]), body=body, request=req)


# ---- random content

class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def text(self, n=None):
        r = self.r
        n = r.randint(0, 24) if n is None else n
        pools = ["abcdefghijklmnopqrstuvwxyz", "ABCXYZ0123456789-._~", "éüßçñ", "пример", "例えテスト",
                 "😀🚀𝄞", "\"\\/\n\t\r\x00\x01\x1f\x7f", " %&?=#+"]
        return "".join(r.choice(r.choice(pools)) for _ in range(n))

    def url(self):
        r = self.r
        host = r.choice(["example.com", "www.example.org", "пример.рф", "xn--e1afmkfd.xn--p1ai", "127.0.0.2:8080",
                         "bücher.de", "sub.host%d.test" % r.randint(0, 999)])
        path = "/".join(r.choice(["a", "b%20c", "ü", "%E4%BD%A0", "index.html", "x;p=1", ""]) for _ in range(r.randint(0, 4)))
        q = "&".join("%s=%s" % (self.text(3), self.text(4)) for _ in range(r.randint(0, 3)))
        u = "%s://%s/%s" % (r.choice(["http", "https"]), host, path)
        if q:
            u += "?" + q
        if r.random() < 0.1:
            u += "#frag" + self.text(3)
        return u

    def scalar(self):
        r = self.r
        c = r.randint(0, 12)
        if c == 0:
            return None
        if c == 1:
            return r.random() < 0.5
        if c == 2:
            return r.choice([0, 1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1,
                             -1, -32, -33, -128, -129, -32768, -32769, -2**31, -2**31 - 1, -2**63])
        if c == 3:
            return r.randint(-10**6, 10**6)
        if c == 4:
            return r.choice([0.0, -0.0, 0.1, 0.5, 1.0, 1e-5, 1e-4, 123456789.125, 1e15, 1e16, 1e17, 1.5e300, 5e-324,
                             float("inf"), float("-inf"), 2.0**53, 1/3.0])
        if c == 5:
            return r.random() * 10 ** r.randint(-8, 20)
        if c in (6, 7):
            return self.text()
        if c in (8, 9):
            return self.text().encode("utf-8")
        if c == 10:
            return bytes(r.getrandbits(8) for _ in range(r.randint(0, 12)))  # often not UTF-8
        if c == 11:
            return self.text(r.choice([31, 32, 255, 256, 300]))
        return self.text(r.randint(0, 40)).encode("utf-8")

    def value(self, depth=0):
        r = self.r
        if depth > 2 or r.random() < 0.6:
            return self.scalar()
        c = r.randint(0, 2)
        n = r.choice([0, 1, 2, 3, 5, 15, 16, 17]) if depth == 0 else r.choice([0, 1, 2, 3])
        if c == 0:
            return [self.scalar() if n > 5 else self.value(depth + 1) for _ in range(n)]
        if c == 1:
            return tuple(self.scalar() if n > 5 else self.value(depth + 1) for _ in range(n))
        d = {}
        for i in range(n):
            k = r.choice([self.text(), self.text().encode("utf-8"), i])
            d[k] = self.scalar() if n > 5 else self.value(depth + 1)
        return d

    def domain(self, fp=True):
        d = {b"netloc": b"www.example.com", b"name": b"www.example.com", b"scheme": b"http", b"sld": b"example",
             b"tld": b"com", b"subdomain": b"www"}
        if fp:
            d[b"fingerprint"] = bytes("%040x" % self.r.getrandbits(160), "ascii")
        return d

    def meta(self, utf8_only=False):
        r = self.r
        m = {}
        if r.random() < 0.8:
            m[b"fingerprint"] = bytes("%040x" % r.getrandbits(160), "ascii")
        if r.random() < 0.6:
            m[b"domain"] = self.domain(r.random() < 0.7)
        for k, f in [(b"jid", lambda: r.choice([0, 1, 7, 300, 2**40])), (b"score", lambda: r.choice([0.0, 0.5, 1.0, r.random()])),
                     (b"depth", lambda: r.randint(0, 70000)), (b"state", lambda: r.randint(0, 3)),
                     (b"scrapy_meta", lambda: {"depth": r.randint(0, 5), "download_slot": self.text(), "dont_redirect": True}),
                     (b"scrapy_callback", lambda: r.choice([None, b"parse", b"parse_item"])),
                     (b"origin_is_frontier", lambda: True),
                     (b"redirect_urls", lambda: [self.url() for _ in range(r.randint(1, 3))]),
                     (b"encoding", lambda: "utf-8")]:
            if r.random() < 0.4:
                m[k] = f()
        for _ in range(r.choice([0, 0, 1, 2, 4])):
            m[self.text().encode("utf-8")] = self.value()
        if utf8_only:
            m = strip_non_utf8(m)
        return m

    def headers(self):
        r = self.r
        h = {}
        for _ in range(r.choice([0, 0, 1, 2, 3, 16])):
            name = r.choice([b"Accept", b"User-Agent", b"Accept-Language", b"Cookie", b"X-Custom-%d" % r.randint(0, 99)])
            h[name] = [self.text().encode("utf-8") for _ in range(r.choice([0, 1, 1, 2]))]
        return h

    def cookies(self):
        return {self.text(5): self.text() for _ in range(self.r.choice([0, 0, 0, 1, 2]))}

    def body(self):
        r = self.r
        c = r.random()
        if c < 0.6:
            return None
        if c < 0.8:
            return ("a=%s&b=%s" % (self.text(4), self.text(6))).encode("utf-8")
        return bytes(r.getrandbits(8) for _ in range(r.choice([1, 10, 300])))

    def request(self, utf8_only=False):
        r = self.r
        url = self.url()
        method = r.choice([b"GET", b"GET", b"POST", b"HEAD", b"PUT"])
        body = self.body() if method in (b"POST", b"PUT") else None
        meta = self.meta(utf8_only)
        req = Request(url, method=method, headers=self.headers(), cookies=self.cookies(), meta=meta)
        d = desc_request(req, body)
        return make_request(d), d


def strip_non_utf8(v):
    if isinstance(v, bytes):
        try:
            v.decode("utf-8")
            return v
        except UnicodeDecodeError:
            return v.hex().encode()
    if isinstance(v, dict):
        return {strip_non_utf8(k): strip_non_utf8(x) for k, x in v.items()}
    if isinstance(v, tuple):
        return tuple(strip_non_utf8(x) for x in v)
    if isinstance(v, list):
        return [strip_non_utf8(x) for x in v]
    return v


# ---- encoding with Frontera

def encode_add_seeds_msgpack(seeds):
    return msgpack.packb([b"as", [fmsgpack._prepare_request_message(s) for s in seeds]], use_bin_type=True)


def encode_add_seeds_json(enc, seeds):
    return enc.encode({"type": "add_seeds", "seeds": [fjson._prepare_request_message(s) for s in seeds]})


def encode(msg, send_body):
    """Encode a description with Frontera's encoders: (msgpack bytes, JSON text or None)."""
    me = fmsgpack.Encoder(Request, send_body=send_body)
    je = fjson.Encoder(Request, send_body=send_body)
    k = msg["kind"]
    if k == "pc":
        resp = make_response(msg["response"])
        calls = (lambda e: e.encode_page_crawled(resp),)
    elif k == "le":
        req = make_request(msg["request"])
        links = [make_request(x) for x in msg["links"]]
        calls = (lambda e: e.encode_links_extracted(req, links),)
    elif k == "re":
        req = make_request(msg["request"])
        calls = (lambda e: e.encode_request_error(req, msg["error"]),)
    elif k == "of":
        calls = (lambda e: e.encode_offset(int(msg["partition"]), int(msg["offset"])),)
    elif k == "us":
        req = make_request(msg["request"])
        calls = (lambda e: e.encode_update_score(req, float(msg["score"]), msg["schedule"]),)
    elif k == "njid":
        calls = (lambda e: e.encode_new_job_id(int(msg["id"])),)
    elif k == "st":
        stats = undesc(msg["stats"])
        calls = (lambda e: e.encode_stats(stats),)
    elif k == "as":
        seeds = [make_request(x) for x in msg["seeds"]]
        mp = encode_add_seeds_msgpack(seeds)
        try:
            js = encode_add_seeds_json(je, seeds)
        except UnicodeDecodeError:
            js = None
        return mp, js
    elif k == "feed":
        req = make_request(msg["request"])
        calls = (lambda e: e.encode_request(req),)
    else:
        raise ValueError(k)
    mp = calls[0](me)
    try:
        js = calls[0](je)
    except UnicodeDecodeError:
        js = None
    return mp, js


def messages():
    g = Gen(20261122)
    r = g.r
    out = []

    def add(kind, msg, lossy=False, send_body=True):
        msg["kind"] = kind
        out.append(("%s-%d" % (kind, len(out)), msg, lossy, send_body))

    for i in range(150):
        _, d = g.request(utf8_only=(i % 3 == 0))
        add("feed", {"request": d})
    for i in range(90):
        _, d = g.request(utf8_only=(i % 2 == 0))
        links = [g.request(utf8_only=(i % 2 == 0))[1] for _ in range(r.choice([0, 1, 2, 5, 16]))]
        add("le", {"request": d, "links": links})
    for i in range(80):
        meta = g.meta(utf8_only=(i % 2 == 0))
        body = r.choice([None, None, b"", b"<html><body>hi</body></html>", "é".encode() * 40,
                         bytes(r.getrandbits(8) for _ in range(64))])
        if i == 0:
            body = bytes(r.getrandbits(8) for _ in range(70000))  # bin32
        hdrs = {b"Content-Type": [b"text/html; charset=utf-8"], b"Set-Cookie": [b"a=1", b"b=2"]} if i % 3 else {}
        add("pc", {"response": {"url": g.url(), "status": r.choice([200, 301, 404, 500, 999]), "headers": desc(hdrs),
                                "body": body.hex() if body is not None else None, "meta": desc(meta)}},
            send_body=body is not None)
    for i in range(60):
        _, d = g.request(utf8_only=(i % 2 == 0))
        add("re", {"request": d, "error": r.choice(["DNSLookupError", "TimeoutError", "ConnectionRefusedError",
                                                     "", g.text(40), "é" * 20])})
    for i in range(40):
        add("of", {"partition": r.choice([0, 1, 5, 127, 128, 65535, 2**31 - 1]),
                   "offset": r.choice([0, 1, 1234, -1, 2**32, 2**63 - 1, r.randint(0, 2**40)])})
    for i in range(60):
        _, d = g.request(utf8_only=(i % 2 == 0))
        add("us", {"request": d, "score": repr(r.choice([0.0, 1.0, 0.5, 0.1, r.random(), 1e-9])),
                   "schedule": r.random() < 0.7})
    for i in range(20):
        add("njid", {"id": r.choice([0, 1, 2, 127, 128, 2**16, 2**31, 2**62])})
    for i in range(30):
        stats = {"consumed_since_start": r.randint(0, 10**9), "pushed_since_start": r.randint(0, 10**6),
                 "states.cache.ratio": r.random(), "_timestamp": 1763790000 + i,
                 "_tags": {"source": r.choice(["sw", "dbw-batchgen", "spider"]), "partition_id": r.randint(0, 8)}}
        if i % 4 == 0:
            stats["extra"] = g.value()
        add("st", {"stats": desc(stats)})
    for i in range(30):
        seeds = [g.request(utf8_only=True)[1] for _ in range(r.choice([0, 1, 3, 20]))]
        add("as", {"seeds": seeds})
    # Shapes the Go model normalises: decodable, not byte-exact on re-encode.
    lossy = Request("http://example.com/", headers={b"Accept-Language:": b"en-US,en"},
                    meta={b"fingerprint": b"0" * 40})  # Discovery's header: a bare bytes value
    add("feed", {"request": desc_request(lossy)}, lossy=True)
    lossy = Request("http://example.com/", headers={"X-Str-Name": [b"v"]}, meta={b"jid": 1})
    add("feed", {"request": desc_request(lossy)}, lossy=True)
    return out


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "codec/testdata/vectors.jsonl.gz"
    n = 0
    # mtime=0 keeps the gzip bytes reproducible.
    with gzip.GzipFile(path, "wb", mtime=0) as gz, io.TextIOWrapper(gz, encoding="ascii") as f:
        for name, msg, lossy, send_body in messages():
            mp, js = encode(msg, send_body)
            f.write(json.dumps({"name": name, "msg": msg, "msgpack": mp.hex(), "json": js, "lossy": lossy},
                               ensure_ascii=True) + "\n")
            n += 1
    print("wrote %d vectors to %s" % (n, path), file=sys.stderr)


if __name__ == "__main__":
    main()
